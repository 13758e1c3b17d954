"""sandbox/_dunders.py: special attributes judged per name and per owner."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ptcbox.errors import PolicyViolation


def test_own_objects_expose_their_dunders(sandbox_run: Callable) -> None:
    code = """
class A:
    def __init__(self):
        self.x = 1
def f(a: int) -> int:
    return a
a = A()
(a.__class__.__name__, a.__dict__, vars(a), [c.__name__ for c in A.__mro__],
 f.__annotations__["a"].__name__)
"""
    assert sandbox_run(code).value == ("A", {"x": 1}, {"x": 1}, ["A", "object"], "int")


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("(1).__class__", "'__class__' of 'int' object"),
        ("search.__dict__", "'__dict__' of 'function' object"),
        ("class A:\n    pass\nA.__dict__", "'__dict__' of class 'A'"),
        ("class A:\n    pass\nA.__class__", "its metaclass"),
        ("import collections\nclass C(collections.OrderedDict):\n    pass\nC().__dict__",
         "'__dict__' of 'C' object"),
        ("import enum\nclass E(enum.Enum):\n    A = 1\nE.__mro__", "'__mro__' of class 'E'"),
        ("len.__annotations__", "'__annotations__'"),
        ("(1).__cause__", "only exceptions have it"),
        ("super(int, 1).__init_subclass__", "__init_subclass__"),
        ("int.__setattr__", "use setattr"),
        ("g = ExceptionGroup('g', [ValueError()])\nclass E(Exception):\n    pass\n"
         "vars(ExceptionGroup('x', [E()]))", "'__dict__'"),
    ],
)  # fmt: skip
def test_other_objects_keep_them(sandbox_run: Callable, code: str, message: str) -> None:
    with pytest.raises(PolicyViolation, match=message.replace("(", r"\(").replace(")", r"\)")):
        sandbox_run(code)


def test_object_setattr_applies_the_setattr_guard(sandbox_run: Callable) -> None:
    with pytest.raises(PolicyViolation, match="cannot set attribute 'x'"):
        sandbox_run("import math\nobject.__setattr__(math, 'x', 1)")
    with pytest.raises(PolicyViolation, match="'__class__'"):
        sandbox_run("class A:\n    pass\nobject.__setattr__(A(), '__class__', int)")


def test_a_chain_link_from_snippet_code_is_handed_out(sandbox_run: Callable) -> None:
    code = """
try:
    raise ValueError("outer") from KeyError("made here")
except ValueError as e:
    r = repr(e.__cause__)
r
"""
    assert sandbox_run(code).value == "KeyError('made here')"

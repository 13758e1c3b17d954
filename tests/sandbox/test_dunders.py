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


_METADATA = """
import json, re, csv, decimal
(json.__version__, re.__version__, csv.__version__, decimal.__version__,
 getattr(json, "__version__"), getattr(json, "__version__", None), hasattr(json, "__version__"),
 f"{json.__version__}", "{0.__version__}".format(json), json.__name__, json.__doc__[:4])
"""


def test_module_metadata_reads_as_in_cpython(sandbox_run: Callable) -> None:
    """``__version__`` (str) and ``__doc__`` of module views are the real module's."""
    plain: dict[str, object] = {}
    exec(_METADATA.replace("(json.__version__", "_v = (json.__version__"), plain)
    assert sandbox_run(_METADATA).value == plain["_v"]
    assert type(sandbox_run("import json\njson.__version__").value) is str


@pytest.mark.parametrize(
    ("code", "error", "message"),
    [
        ("import math\nmath.__version__", AttributeError,
         "module 'math' has no attribute '__version__'"),
        ("getattr(len, '__version__', 'none')", None, "none"),
        ("try:\n    1/0\nexcept Exception as e:\n    e.__notes__", AttributeError,
         "'ZeroDivisionError' object has no attribute '__notes__'"),
        ("try:\n    1/0\nexcept Exception as e:\n    r = getattr(e, '__notes__', 'no')\nr",
         None, "no"),
    ],
)  # fmt: skip
def test_missing_dunders_raise_attribute_error(
    sandbox_run: Callable, code: str, error: type[Exception] | None, message: str
) -> None:
    """A missing special attribute raises AttributeError, never hands out a sentinel."""
    if error is None:
        assert sandbox_run(code).value == message
        return
    with pytest.raises(error, match=message):
        sandbox_run(code)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("import json\njson.__file__", '"__file__" is not allowed'),
        ("import json\njson.__spec__", '"__spec__" is not allowed'),
        ("import json\ngetattr(json, '__loader__')", "'__loader__' of module 'json'"),
        ("import json\nmatch '1':\n    case json.__version__:\n        pass",
         '"__version__" is not allowed in a pattern'),
        ("__version__ = '1'", '"__version__" is a reserved name'),
    ],
)  # fmt: skip
def test_other_module_metadata_stays_refused(
    sandbox_run: Callable, code: str, message: str
) -> None:
    with pytest.raises(PolicyViolation, match=message.replace("(", r"\(")):
        sandbox_run(code)

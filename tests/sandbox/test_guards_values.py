"""The getattr guard judges the value it hands out (F3's kind), on every route.

``str.format`` is refused whether it comes from ``str``, a str subclass, an instance,
``super()`` or ``typing.Text``; metaclasses and modules are never handed out; compiled code
never reads a value-checked name natively (augmented assignment, ``match`` patterns).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox import SandboxPolicy, compile_snippet
from ptcbox.sandbox._guards import checked_attribute, is_str_format

SECRET = "host-secret-do-not-leak"


@pytest.mark.parametrize(
    "code",
    [
        "class S(str): pass\nS.format('{0.__globals__}', search)",
        "class S(str): pass\nS.format_map('{x.__globals__}', {'x': search})",
        "class S(str): pass\ns = S('{0.__globals__}')\nsuper(S, s).format(search)",
        "class S(str): pass\nsuper(S, S).format('{0.__globals__}', search)",
        "class S(str):\n    def f(self):\n        return super().format(search)\n"
        "S('{0.__globals__}').f()",
        "class S(str): pass\ngetattr(S, 'format')('{0.__globals__}', search)",
        "class S(str): pass\ngetattr(S, 'format', None)('{0.__globals__}', search)",
        "class S(str): pass\nclass T(S): pass\nT.format('{0.__globals__}', search)",
        "import typing\ntyping.Text.format('{0.__globals__}', search)",
        "import enum\nclass E(enum.StrEnum):\n    A = '{0.__globals__}'\nE.A.format(search)",
        "import enum\nclass E(str, enum.Enum):\n    A = '{0.__globals__}'\nE.format(E.A, search)",
        # augmented assignment reads through the guard
        "class S(str): pass\nclass X:\n    def __radd__(self, o):\n        return o(search)\n"
        "s = S('{0.__globals__}')\ns.format += X()",
        "class S(str): pass\nclass X:\n    def __rmul__(self, o):\n        return o(search)\n"
        "s = S('{0.__globals__}')\ns.format *= X()",
    ],
)
def test_str_format_fields_are_guarded_on_every_route(sandbox_run: Callable, code: str) -> None:
    with pytest.raises(PolicyViolation, match="'__globals__'") as info:
        sandbox_run(code)
    assert SECRET not in str(info.value)


def test_own_format_methods_still_work(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        class Report:
            def format(self, x):
                return f"<{x}>"
        class S(str):
            def format(self, *a):
                return "own"
        [Report().format(1), S("x").format(1), "{}".join(["a", "b"])]
        """
    )
    assert sandbox_run(code).value == ["<1>", "own", "a{}b"]


@pytest.mark.parametrize(
    "code",
    [
        "class S(str): pass\nmatch S('x'):\n    case S(format=f):\n        pass",
        "match 'x':\n    case str(format_map=f):\n        pass",
        "match 'x':\n    case str(ljust=f):\n        pass",
        "match 'x':\n    case str.format:\n        pass",
        "import collections.abc\nmatch 1:\n    case collections.abc.Hashable.register:\n"
        "        pass",
        "match 1:\n    case object(register=r):\n        pass",
    ],
)
def test_match_patterns_never_read_value_checked_names(code: str) -> None:
    with pytest.raises(PolicyViolation, match="not allowed in a"):
        compile_snippet(code, SandboxPolicy())


def test_match_args_with_value_checked_names_are_refused(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import collections
        P = collections.namedtuple("P", "format")
        match P(1):
            case P(x):
                pass
        """
    )
    with pytest.raises(PolicyViolation, match=r"__match_args__|format"):
        sandbox_run(code)


@pytest.mark.parametrize(
    "code",
    [
        "import typing\ntyping.get_origin(typing.Type[int]).mro",
        "import typing\nclass M(typing.Type[int]): pass",
        "import enum\nclass E(enum.Enum):\n    A = 1\ntype(E)",
        "import typing\ntype(typing.Protocol)",
        "import collections\ntype(collections.ChainMap)",
        "getattr(holder, 'meta')",
        "holder.meta",
        "import dataclasses\ndataclasses.fields(host_dc)[0].type",
    ],
)
def test_no_route_hands_out_a_metaclass(sandbox_run: Callable, code: str) -> None:
    import abc
    import dataclasses

    class Holder:
        meta = abc.ABCMeta

    host_dc = dataclasses.make_dataclass("HostDC", [("kind", type, dataclasses.field(default=int))])
    extra = {"holder": Holder(), "host_dc": host_dc}
    with pytest.raises((PolicyViolation, AttributeError)):
        sandbox_run(code, extra_globals=extra)


def test_checked_attribute_applies_the_guard_rules() -> None:
    class S(str):
        pass

    import json

    for obj, name in [(S("x"), "format"), (S("x"), "ljust"), (json.JSONEncoder(), "_one"),
                      (json.dumps, "__globals__"), ((x for x in ()), "gi_frame")]:  # fmt: skip
        with pytest.raises((PolicyViolation, AttributeError)):
            checked_attribute(obj, name)
    assert is_str_format(S("x").format) and is_str_format(str.format_map)
    assert not is_str_format("{}".join)


@pytest.mark.parametrize(
    "code",
    [
        "import enum\nclass E(enum.Enum, _simple=True):\n    A = 1",
        "class A:\n    pass\nclass B(A, _private=1):\n    pass",
    ],
)
def test_private_class_keywords_are_refused(code: str) -> None:
    with pytest.raises(PolicyViolation, match="class keyword"):
        compile_snippet(code, SandboxPolicy())


def test_build_class_refuses_private_keywords_and_metaclass_results_at_run_time() -> None:
    from ptcbox.sandbox._builtins import _build_class

    alias = __import__("typing").Type  # an alias whose __mro_entries__ is type

    def body() -> None:
        pass

    with pytest.raises(PolicyViolation, match="class keyword"):
        _build_class(body, "E", _simple=True)
    with pytest.raises(PolicyViolation, match="metaclass"):
        _build_class(body, "M", alias)


def test_keyword_names_must_be_plain_str(sandbox_run: Callable) -> None:
    code = "class S(str):\n    def startswith(self, p):\n        return False\n"
    with pytest.raises(PolicyViolation, match="keyword argument"):
        sandbox_run(code + "dict(**{S('__class__'): 1})")

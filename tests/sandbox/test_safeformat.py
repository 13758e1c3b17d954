"""sandbox/_safeformat.py: the str.format / format_map stand-ins."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ptcbox.errors import ArithmeticLimitExceeded, PolicyViolation
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._safeformat import GuardedFormatter, guarded_format_method


def _formatter() -> GuardedFormatter:
    def getattr_(obj: object, name: str) -> object:
        if name.startswith("_"):
            raise PolicyViolation(f"refused {name}")
        return getattr(obj, name)

    def check(spec: str) -> None:
        if "999" in spec:
            raise ValueError("too wide")

    return GuardedFormatter(getattr_, check)


def test_every_shape_of_the_real_methods_gets_a_stand_in() -> None:
    fmt = _formatter()
    assert guarded_format_method(str.format, fmt)("{}-{x}", 1, x=2) == "1-2"
    assert guarded_format_method(str.format_map, fmt)("{a}", {"a": 3}) == "3"
    assert guarded_format_method("{0.real}".format, fmt)(5) == "5"
    assert guarded_format_method("{k}".format_map, fmt)({"k": "v"}) == "v"
    with pytest.raises(TypeError, match="descriptor 'format' for 'str' objects"):
        guarded_format_method(str.format, fmt)(1)
    with pytest.raises(TypeError, match="not a str formatting method"):
        guarded_format_method("x".join, fmt)


def test_lookups_and_specs_go_through_the_given_guards() -> None:
    fmt = _formatter()
    with pytest.raises(PolicyViolation, match="refused __class__"):
        fmt.vformat("{0.__class__}", (1,), {})
    with pytest.raises(PolicyViolation, match="refused __class__"):
        fmt.vformat("{0:{1.__class__}}", (1, 2), {})
    with pytest.raises(ValueError, match="too wide"):
        fmt.vformat("{0:>{1}}", (1, 9999), {})
    assert fmt.vformat("{0[a][1]}", ({"a": [0, 7]},), {}) == "7"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('"{:,.2f}".format(1234.5)', "1,234.50"),
        ('"{0[sku]}".format({"sku": "A"})', "A"),
        ('"{a}{b}".format_map({"a": 1, "b": 2})', "12"),
        ('"{!r:>5}".format("x")', "  'x'"),
        ('type("").format("{}", 1)', "1"),
    ],
)
def test_formatting_in_the_sandbox_matches_cpython(
    sandbox_run: Callable, code: str, expected: str
) -> None:
    assert sandbox_run(code).value == expected == eval(code)


def test_a_huge_width_is_refused_like_format(sandbox_run: Callable) -> None:
    with pytest.raises(ArithmeticLimitExceeded, match="'format'"):
        sandbox_run('"{:>{}}".format(1, 10**9)', SandboxPolicy())

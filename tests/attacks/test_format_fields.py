"""str.format / format_map are allowed; their fields go through the getattr guard.

Each attack reaches the formatting methods by another route (bound, saved, unbound,
through ``type("")``, ``map``, ``getattr``, a str subclass, ``super()``, ``format_map``
with a ``__missing__`` dict, a nested format spec) and names a field the guard refuses.
The positive control (``_proof``) runs the same snippet in a child Python under the default
policy with only the format guard switched off, where the field does reach the host
object; the real policy refuses it with the guard's own message, on the line of the call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ptcbox.sandbox import SandboxPolicy

from ._proof import Attack, assert_control, assert_refused, by_id
from .conftest import TOOLS

pytestmark = pytest.mark.anyio

_INTERNALS = " (frame, code, traceback and generator internals are off limits)"
GLOBALS = (
    "access to attribute '__globals__' of 'function' object is not allowed"
    " (special attributes are off limits)"
)
CLASS = (
    "access to attribute '__class__' of 'function' object is not allowed"
    " (only on the snippet's own objects and exceptions; use type(obj))"
)
GI_FRAME = "access to attribute 'gi_frame' of 'generator' object is not allowed" + _INTERNALS
CR_FRAME = "access to attribute 'cr_frame' of 'coroutine' object is not allowed" + _INTERNALS

# id: (snippet, line of the refused call, guard message, what the trusted run shows)
_CASES: dict[str, tuple[str, int, str, str]] = {
    "bound": ('x = 1\nprint("{0.__globals__}".format(search))', 2, GLOBALS, "__builtins__"),
    "bound_saved": (
        'f = "{0.__globals__}".format\nx = 1\nprint(f(search))',
        3,
        GLOBALS,
        "__builtins__",
    ),
    "unbound": ('print(str.format("{0.__globals__}", search))', 1, GLOBALS, "__builtins__"),
    "type_of_str": (
        'T = type("")\nprint(T.format("{0.__globals__}", search))',
        2,
        GLOBALS,
        "__builtins__",
    ),
    "map_unbound": (
        'print(list(map(str.format, ["{0.__globals__}"], [search])))',
        1,
        GLOBALS,
        "__builtins__",
    ),
    "getattr_builtin": (
        'print(getattr("{0.__globals__}", "format")(search))',
        1,
        GLOBALS,
        "__builtins__",
    ),
    "subscript_after": (
        'print("{0.__globals__[__builtins__]}".format(search))',
        1,
        GLOBALS,
        "__build_class__",
    ),
    "nested_spec": ('print("{0:{1.__globals__}}".format(1, search))', 1, GLOBALS, "__builtins__"),
    "format_map": (
        'print("{t.__globals__}".format_map({"t": search}))',
        1,
        GLOBALS,
        "__builtins__",
    ),
    "format_map_missing": (
        "class D(dict):\n    def __missing__(self, key):\n        return search\n"
        'print("{t.__globals__}".format_map(D()))',
        4,
        GLOBALS,
        "__builtins__",
    ),
    "B03b_class_of_tool": (
        'print("{t.__class__}".format_map({"t": search}))',
        1,
        CLASS,
        "class",
    ),
    "str_subclass_unbound": (
        "class S(str):\n    pass\nprint(S.format_map('{t.__globals__}', {'t': search}))",
        3,
        GLOBALS,
        "__builtins__",
    ),
    "str_subclass_super": (
        "class S(str):\n    pass\ns = S('{0.__globals__}')\nprint(super(S, s).format(search))",
        4,
        GLOBALS,
        "__builtins__",
    ),
    "fast_path_cache_poisoning": (
        'x = "{}".format(1)\nclass S(str):\n    def __hash__(self):\n        return hash("{}")\n'
        "    def __eq__(self, other):\n        return True\n"
        'print(S("{0.__globals__}").format(search))',
        7,
        GLOBALS,
        "__builtins__",
    ),
    "gi_frame": (
        'g = (i for i in [1])\nprint("{0.gi_frame.f_globals}".format(g))',
        2,
        GI_FRAME,
        "__builtins__",
    ),
    "cr_frame": (
        "async def c():\n    pass\nco = c()\ntry:\n"
        '    print("{0.cr_frame.f_globals}".format(co))\nfinally:\n    co.close()',
        5,
        CR_FRAME,
        "__builtins__",
    ),
}


ATTACKS = by_id(
    Attack(
        id=name,
        code=code,
        line=line,
        error_type="PolicyViolation",
        message=message,
        guard="format",
        marker=leaked,
    )
    for name, (code, line, message, leaked) in _CASES.items()
)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
async def test_format_field_attack_proves_its_guard(runtime: Any, attack: str) -> None:
    proof = ATTACKS[attack]
    assert_control(proof, ATTACKS.values())  # the format guard off: the field is read
    assert_refused(proof, await runtime.execute(proof.code, TOOLS, timeout=30))


async def test_a_huge_field_width_is_bounded_like_other_string_growth(
    make_runtime: Callable[..., Any],
) -> None:
    code = 'w = 2_000_000\nx = 1\nprint(len("{:>{}}".format(1, w)))'
    trusted = await make_runtime(SandboxPolicy.trusted()).execute(code, TOOLS, timeout=30)
    assert trusted.stdout == "2000000\n"  # without the guard the width is honoured
    limited = SandboxPolicy(max_repeat_bytes=1_000_000)
    result = await make_runtime(limited).execute(code, TOOLS, timeout=30)
    assert result.error_type == "ArithmeticLimitExceeded", result
    assert result.error is not None and "line 3, in <module>" in result.error
    assert "result size of 'format' exceeded: 2,000,000 bytes > limit 1,000,000" in result.error

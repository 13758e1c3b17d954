"""The dunders, exception attributes and ``except*`` the sandbox now allows, attacked.

Each attack gets a positive control (``_proof``: the same snippet in a child Python under
the default policy with only its guard switched off, or plain CPython for the ``except*``
memory corruption, reaches the forbidden thing) and
an exact refusal under the default policy: error type, the guard's message, and the line
the attack targets.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

from ptcbox import resolve_tools
from ptcbox.runtimes import ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

from ._proof import Attack, assert_control, assert_refused, by_id
from .conftest import TOOLS

pytestmark = pytest.mark.anyio

_INTERNALS = " (frame, code, traceback and generator internals are off limits)"
_OWN_OBJECTS = "only on the snippet's own objects and exceptions; use type(obj)"

# id: (snippet, refused line, end of the error, what the control shows)
_CASES: dict[str, tuple[str, int, str, str]] = {
    "traceback_frame": (
        "try:\n    1/0\nexcept Exception as e:\n    tb = e.__traceback__\n"
        "    print(getattr(tb, 'tb_' + 'frame'))",
        5,
        "access to attribute 'tb_frame' of 'traceback' object is not allowed" + _INTERNALS,
        "<frame",
    ),
    "traceback_next_frame": (
        "def f():\n    1/0\ntry:\n    f()\nexcept Exception as e:\n"
        "    nxt = e.__traceback__.tb_next\n    print(getattr(nxt, 'tb_frame'))",
        7,
        "access to attribute 'tb_frame' of 'traceback' object is not allowed" + _INTERNALS,
        "<frame",
    ),
    "context_traceback_frame": (
        "try:\n    try:\n        1/0\n    except ZeroDivisionError:\n        raise ValueError\n"
        "except ValueError as e:\n    tb = e.__context__.__traceback__\n"
        "    print(getattr(tb, 'tb_' + 'frame'))",
        8,
        "access to attribute 'tb_frame' of 'traceback' object is not allowed" + _INTERNALS,
        "<frame",
    ),
    "class_of_a_tool": (
        "x = 1\nprint(search.__class__)",
        2,
        f"access to attribute '__class__' of 'function' object is not allowed ({_OWN_OBJECTS})",
        "class",
    ),
    "class_of_a_class_is_the_metaclass": (
        "class A:\n    pass\nprint(A.__class__)",
        3,
        "access to attribute '__class__' of class 'A' is not allowed (a class's __class__ "
        "is its metaclass; use type(obj))",
        "<class 'type'>",
    ),
    "mro_to_the_real_enum": (
        "import enum\nclass C(enum.Enum):\n    A = 1\nprint(C.__mro__)",
        4,
        "access to attribute '__mro__' of class 'C' is not allowed (only on the snippet's "
        "own classes with builtin bases)",
        "<enum 'Enum'>",
    ),
    "dict_of_a_tool": (
        "print(search.__dict__)",
        1,
        "access to attribute '__dict__' of 'function' object is not allowed (only "
        "on instances of the snippet's own classes)",
        "{",
    ),
    "vars_of_a_tool": (
        "print(vars(search))",
        1,
        "access to attribute '__dict__' of 'function' object is not allowed (only "
        "on instances of the snippet's own classes)",
        "{",
    ),
    "dict_of_own_class": (
        "class A:\n    pass\nprint(A.__dict__)",
        3,
        "access to attribute '__dict__' of class 'A' is not allowed (only on instances of "
        "the snippet's own classes)",
        "'__module__'",
    ),
    "object_setattr_on_a_tool": (
        'object.__setattr__(search, "name", "pwned")\nprint(search.name)',
        1,
        "cannot set attribute 'name' of 'function' object: only functions, classes "
        "and objects created by the snippet can be modified",
        "pwned",
    ),
    "except_star_custom_split": (
        "class G(ExceptionGroup):\n    def split(self, t):\n        return 42\n"
        "try:\n    raise G('g', [ValueError(1)])\nexcept* ValueError:\n    pass",
        4,  # CPython reports the except* match on the `try` line
        "except* cannot match a G that overrides split() (CVE-2025-22153); catch it with a "
        "plain `except` clause instead",
        "",
    ),
    "except_star_instance_split": (
        "g = ExceptionGroup('g', [ValueError(1)])\ng.split = lambda t: 42\n"
        "try:\n    raise g\nexcept* ValueError:\n    pass",
        3,  # CPython reports the except* match on the `try` line
        "except* cannot match a ExceptionGroup that overrides split() (CVE-2025-22153); "
        "catch it with a plain `except` clause instead",
        "",
    ),
}


_GUARD = {
    "object_setattr_on_a_tool": "owner",
    "except_star_custom_split": "except_star",
    "except_star_instance_split": "except_star",
}
ATTACKS = by_id(
    Attack(
        id=name,
        code=code,
        line=line,
        error_type="PolicyViolation",
        message=message,
        guard=_GUARD.get(name, "attribute"),
        marker=leaked,
    )
    for name, (code, line, message, leaked) in _CASES.items()
)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
async def test_dunder_route_attack_proves_its_guard(runtime: Any, attack: str) -> None:
    proof = ATTACKS[attack]
    if proof.guard == "except_star":
        # the control: plain CPython 3.11 trusts split()'s result and corrupts memory
        # (with the guard ablated the sandbox would do the same, so it is not run there)
        plain = subprocess.run(
            [sys.executable, "-c", proof.code], check=False, capture_output=True, timeout=60
        )
        if sys.version_info < (3, 12, 9):
            assert plain.returncode < 0 or b"split must return" in plain.stderr, plain
    else:
        assert_control(proof, ATTACKS.values())
    result = await runtime.execute(proof.code, TOOLS, timeout=30)
    assert_refused(proof, result)
    assert result.error is not None
    assert result.error.rstrip().endswith("PolicyViolation: " + proof.message), result.error
    assert result.stdout == ""


_SECRET = object()


def _helper(hide: bool = False) -> None:
    """Host code that raises and handles an exception carrying a host object."""
    try:
        _SECRET.nope  # noqa: B018
    except AttributeError as exc:
        if hide:
            raise ValueError("helper failed") from None
        raise ValueError("helper failed") from exc


async def test_a_context_raised_and_handled_in_host_code_is_not_handed_out() -> None:
    """ThreadRuntime only: the subprocess runtime cannot carry host callables as globals."""
    code = textwrap.dedent(
        """
        try:
            helper()
        except ValueError as e:
            print(e.__suppress_context__)
            print(e.__cause__.obj)
        """
    )
    extra = {"helper": _helper}
    async with ThreadRuntime(SandboxPolicy.trusted()) as trusted:
        shown = await trusted.execute(code, resolve_tools([]), extra_globals=extra)
    assert shown.stdout == f"True\n{_SECRET!r}\n", shown  # the route is real
    async with ThreadRuntime() as runtime:
        result = await runtime.execute(code, resolve_tools([]), extra_globals=extra)
    assert result.error_type == "PolicyViolation", result
    assert result.stdout == "True\n"
    assert result.error is not None and "line 6, in <module>" in result.error
    assert result.error.rstrip().endswith(
        "PolicyViolation: __cause__ of this ValueError is an exception raised and handled "
        "inside host code, which the sandbox does not hand out"
    )


async def test_a_context_host_code_suppressed_reads_none() -> None:
    code = "try:\n    helper(True)\nexcept ValueError as e:\n    print(e.__context__, e.__cause__)"
    async with ThreadRuntime() as runtime:
        result = await runtime.execute(code, resolve_tools([]), extra_globals={"helper": _helper})
    assert result.stdout == "None None\n", result.error

"""The attack-test helper itself: a control or a refusal that does not hold fails."""

from __future__ import annotations

import pytest

from ptcbox.runtimes import ThreadRuntime

from ._proof import Attack, assert_control, assert_refused, result_without
from .conftest import TOOLS

pytestmark = pytest.mark.anyio

TOOL_CLOSURE = Attack(
    "tool_closure",
    "x = 1\nc = getattr(search, '__closure__')\nprint('REACHED', c is not None)",
    2,
    "PolicyViolation",
    "access to attribute '__closure__' of 'function' object is not allowed",
    "attribute",
    "REACHED True",
)


async def test_the_exact_refusal_checks_type_message_and_line() -> None:
    async with ThreadRuntime() as runtime:
        result = await runtime.execute(TOOL_CLOSURE.code, TOOLS, timeout=30)
    assert_refused(TOOL_CLOSURE, result)
    for wrong in (
        {"line": 1},
        {"error_type": "AttributeError"},
        {"message": "some other guard's words"},
    ):
        attack = Attack(**{**TOOL_CLOSURE.__dict__, **wrong})
        with pytest.raises(AssertionError):
            assert_refused(attack, result)


def test_a_control_whose_guard_is_not_the_one_that_stops_it_fails() -> None:
    assert_control(TOOL_CLOSURE)  # only the attribute guard off: the closure is read
    with pytest.raises(AssertionError, match="tool_closure"):
        assert_control(Attack(**{**TOOL_CLOSURE.__dict__, "guard": "format"}))


def test_a_plain_control_runs_in_a_child_not_here() -> None:
    attack = Attack(
        "tau",
        "import math\nmath.tau = 3\nprint('REACHED', math.tau)",
        2,
        "X",
        "y",
        "write",
        "REACHED 3",
        control="plain",
    )
    assert_control(attack)
    import math

    assert math.tau != 3  # the child's math changed, not the test process's


def test_result_without_turns_off_other_guards_only() -> None:
    """``result_without``: another guard off leaves this one to refuse (here the owner
    switch, irrelevant to a dunder read, changes nothing); its own guard off is refused."""
    assert_refused(TOOL_CLOSURE, result_without(TOOL_CLOSURE, ["owner"]))
    with pytest.raises(AssertionError):
        result_without(TOOL_CLOSURE, ["attribute"])

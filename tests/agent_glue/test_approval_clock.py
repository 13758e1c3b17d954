"""The wait for an approval does not count against the snippet's timeout (both runtimes).

The execution's clock stands still while at least one decision is pending
(``ptcbox.runtimes._shared._clock``): a snippet with a 1 s limit whose call waits 2 s for
its approval succeeds; one that loops afterwards still times out after its own second;
two decisions pending at once pause the clock once (the union of the waits, not the sum).
Time bounds are wide (the machine is loaded); each lower bound is what the rule implies.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from typing import Any

import pytest

from ptcbox import CodeResult, DirectProjection, ToolCallRecord
from ptcbox.agent_glue import ApprovalRequest, Approve, RunCodeTool
from ptcbox.agent_glue._approval import ApprovingProjection
from ptcbox.runtimes import CodeRuntime

pytestmark = pytest.mark.anyio

WAIT_S = 2.0


def pay(amount: int) -> str:
    """Pay."""
    return f"paid {amount}"


async def slow_async(request: ApprovalRequest) -> bool:
    await asyncio.sleep(WAIT_S)
    return True


def slow_sync(request: ApprovalRequest) -> bool:
    time.sleep(WAIT_S)
    return True


HOOKS = {"async hook": slow_async, "sync hook": slow_sync}

SYNC_CODE = "print(pay(amount=5))"
ASYNC_CODE = "print(await pay(amount=5))"


async def _run(runtime: CodeRuntime, code: str, timeout: float, **options: Any) -> CodeResult:
    run_code = RunCodeTool([pay], runtime=runtime, **options)
    outcome = await run_code.execute({"code": code, "timeout": timeout})
    assert isinstance(outcome.output, CodeResult), outcome
    return outcome.output


@pytest.mark.parametrize("hook", list(HOOKS))
@pytest.mark.parametrize("code", [SYNC_CODE, ASYNC_CODE], ids=["sync code", "async code"])
async def test_a_slow_approval_does_not_time_the_snippet_out(
    code_runtime: CodeRuntime, hook: str, code: str
) -> None:
    result = await _run(code_runtime, code, 1.0, approve=HOOKS[hook])
    assert result.ok, result.error
    assert not result.timed_out
    assert result.stdout == "paid 5\n"
    assert result.duration_s >= WAIT_S  # the 1 s limit passed during the wait
    (record,) = result.tool_calls
    assert record.ok is True and record.duration_s >= WAIT_S


async def test_a_hanging_hook_denies_after_the_approval_timeout_not_the_snippet_timeout(
    code_runtime: CodeRuntime,
) -> None:
    release = threading.Event()

    def hangs(request: ApprovalRequest) -> bool:
        release.wait(60)
        return True

    code = "try:\n    pay(amount=5)\nexcept PermissionError as err:\n    print(err)"
    try:
        result = await _run(code_runtime, code, 1.0, approve=hangs, approval_timeout=1.5)
    finally:
        release.set()
    assert result.ok, result.error  # the snippet's 1 s did not run out during the 1.5 s
    assert result.stdout == (
        "the call to pay was denied: no approval decision within 1.5 s, so the call was not made\n"
    )
    (record,) = result.tool_calls
    assert record.ok is False and "no approval decision within 1.5 s" in (record.error or "")


@pytest.mark.parametrize("code", [SYNC_CODE, ASYNC_CODE], ids=["sync code", "async code"])
async def test_a_snippet_looping_after_the_approval_times_out_on_its_own_budget(
    code_runtime: CodeRuntime, code: str
) -> None:
    started = time.perf_counter()
    result = await _run(code_runtime, code + "\nwhile True:\n    pass", 1.0, approve=slow_async)
    elapsed = time.perf_counter() - started
    assert result.timed_out and result.error_type == "TimeoutError"
    assert result.stdout == "paid 5\n"
    # 2 s paused + its own 1 s; far less than unbounded
    assert WAIT_S + 0.9 <= result.duration_s <= elapsed < WAIT_S + 1.0 + 5.0
    assert WAIT_S <= _paused_in_message(result) < WAIT_S + 5.0


async def test_overlapping_approvals_pause_the_clock_once(code_runtime: CodeRuntime) -> None:
    wait = 3.0

    async def approve(request: ApprovalRequest) -> bool:
        await asyncio.sleep(wait)
        return True

    code = (
        "import asyncio\n"
        "print(await asyncio.gather(pay(amount=1), pay(amount=2)))\n"
        "while True:\n    pass"
    )
    result = await _run(code_runtime, code, 1.0, approve=approve)
    assert result.timed_out, result
    assert result.stdout == "['paid 1', 'paid 2']\n"
    # union of the two waits (3 s) + 1 s = 4 s; their sum would give 7 s
    assert wait + 0.9 <= result.duration_s < 2 * wait + 0.9
    paused = _paused_in_message(result)
    assert wait <= paused < 2 * wait  # the union again, now in the message


def _paused_in_message(result: CodeResult) -> float:
    """The message states the snippet's own limit and the approval time not counted."""
    found = re.fullmatch(
        r"TimeoutError: the code did not finish within its time limit of 1 second \(the "
        r"(\d+\.\d) seconds it waited for tool-call approvals were not counted: "
        r"(\d+\.\d) seconds passed in all\)( \(.*\))?",
        (result.error or "").splitlines()[0],
    )
    assert found, result.error
    paused, total = float(found[1]), float(found[2])
    assert total == pytest.approx(1.0 + paused, abs=0.11)
    return paused


async def test_a_timeout_without_approval_waits_states_only_the_limit(
    code_runtime: CodeRuntime,
) -> None:
    result = await _run(code_runtime, "while True:\n    pass", 1.0)
    assert result.timed_out
    assert (result.error or "").startswith("TimeoutError: the code did not finish within 1 second")
    assert "approvals" not in (result.error or "")


async def test_edited_arguments_are_what_the_record_shows(code_runtime: CodeRuntime) -> None:
    def approve(request: ApprovalRequest) -> Approve:
        if request.arguments["amount"] == 3:
            return Approve(arguments={"amount": 3})  # the same: no edit to show
        return Approve(arguments={"amount": request.arguments["amount"] * 10})

    namespace = {"pay": ApprovingProjection(DirectProjection("pay", pay), approve, 5.0)}
    reported: list[ToolCallRecord] = []
    code = "print(pay(amount=1), pay(2), pay(amount=3))"
    result = await code_runtime.execute(code, namespace, on_tool_call=reported.append)
    assert result.ok, result.error
    assert result.stdout == "paid 10 paid 20 paid 3\n"
    code = "import asyncio\nprint(await pay(amount=4))"
    in_async = await code_runtime.execute(code, namespace, on_tool_call=reported.append)
    assert in_async.stdout == "paid 40\n", in_async.error
    assert [
        (r.arguments, r.requested_arguments) for r in result.tool_calls + in_async.tool_calls
    ] == [
        ({"amount": 10}, {"amount": 1}),
        ({"amount": 20}, {"amount": 2}),
        ({"amount": 3}, None),
        ({"amount": 40}, {"amount": 4}),
    ]
    assert sorted((r.arguments["amount"], r.requested_arguments) for r in reported) == [
        (3, None),
        (10, {"amount": 1}),
        (20, {"amount": 2}),
        (40, {"amount": 4}),
    ]
    data = result.tool_calls[0].to_dict()
    assert data["arguments"] == {"amount": 10} and data["requested_arguments"] == {"amount": 1}
    assert "requested_arguments" not in result.tool_calls[2].to_dict()

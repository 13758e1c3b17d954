"""Approvals for the tool calls a snippet makes, on each real runtime."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from ptcbox import CodeResult
from ptcbox.agent_glue import (
    ApprovalRequest,
    Approve,
    Deny,
    RunCodeTool,
    ToolRegistry,
    tool,
)
from ptcbox.demo import GATHER_SNIPPET, ExpenseTools, check_answer, expected_answer
from ptcbox.runtimes import CodeRuntime

pytestmark = pytest.mark.anyio

received: list[dict[str, Any]] = []


@tool
def transfer(account: str, amount: float) -> str:
    """Move money."""
    received.append({"account": account, "amount": amount})
    return f"moved {amount:.2f} to {account}"


@tool(requires_approval=True)
def delete_account(account: str) -> str:
    """Delete an account."""
    received.append({"deleted": account})
    return "deleted"


@tool
def balance(account: str) -> float:
    """Look up a balance."""
    return 100.0


async def _run(runtime: CodeRuntime, code: str, **options: Any) -> CodeResult:
    received.clear()
    run_code = RunCodeTool(
        ToolRegistry([transfer, delete_account, balance]), runtime=runtime, **options
    )
    result = await run_code.execute({"code": code}, tool_call_id="call_7")
    assert isinstance(result.output, CodeResult), result
    return result.output


async def test_allow_deny_and_edit(code_runtime: CodeRuntime) -> None:
    seen: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> Approve | Deny | bool:
        seen.append(request)
        if request.tool_name == "balance":
            return True
        if request.arguments["amount"] > 500:
            return Deny("transfers over 500 need a second signature")
        return Approve(
            arguments={**request.arguments, "account": "checked-" + request.arguments["account"]}
        )

    code = """
print(balance(account="a"))
print(transfer("b", 20))
try:
    transfer(account="c", amount=900)
except PermissionError as err:
    print("denied:", type(err).__name__, isinstance(err, ToolError), err)
"""
    result = await _run(code_runtime, code, approve=approve)
    assert result.ok, result.error
    lines = result.stdout.splitlines()
    assert lines[:2] == ["100.0", "moved 20.00 to checked-b"]
    # the snippet gets the builtin PermissionError itself, also a ToolError (DESIGN.md)
    assert lines[2].startswith("denied: PermissionError True ")
    assert "the call to transfer was denied: transfers over 500 need a second signature" in lines[2]
    assert received == [{"account": "checked-b", "amount": 20.0}]
    assert [(r.tool_name, r.number, r.run_code_call_id) for r in seen] == [
        ("balance", 1, "call_7"),
        ("transfer", 2, "call_7"),
        ("transfer", 3, "call_7"),
    ]
    assert seen[1].arguments == {"account": "b", "amount": 20}  # positional ones bound
    records = result.tool_calls
    assert [r.ok for r in records] == [True, True, False]
    assert records[2].error is not None and "PermissionError" in records[2].error


async def test_requires_approval_without_a_hook_is_denied(code_runtime: CodeRuntime) -> None:
    code = """
print(transfer(account="a", amount=1))
try:
    delete_account(account="a")
except ToolError as err:
    print(err)
"""
    result = await _run(code_runtime, code)
    assert result.ok, result.error
    assert result.stdout.splitlines()[0] == "moved 1.00 to a"
    assert "'delete_account' requires approval and no approval hook is set" in result.stdout
    assert received == [{"account": "a", "amount": 1}]


@pytest.mark.parametrize("kind", ["raises", "hangs", "nonsense"])
async def test_a_broken_hook_denies_with_the_reason(code_runtime: CodeRuntime, kind: str) -> None:
    release = threading.Event()

    def approve(request: ApprovalRequest) -> Any:
        if kind == "raises":
            raise RuntimeError("policy service down")
        if kind == "hangs":
            release.wait(30)
            return True
        return "yes please"

    code = 'try:\n    transfer(account="a", amount=1)\nexcept ToolError as err:\n    print(err)'
    try:
        result = await _run(code_runtime, code, approve=approve, approval_timeout=0.5)
    finally:
        release.set()
    assert result.ok, result.error
    expected = {
        "raises": "the approval hook failed (RuntimeError: policy service down)",
        "hangs": "no approval decision within 0.5 s",
        "nonsense": "the approval hook returned str, not a decision",
    }
    assert expected[kind] in result.stdout
    assert received == []


async def test_an_async_hook_keeps_gather_concurrent(
    code_runtime: CodeRuntime, demo_db: Path
) -> None:
    waiting = 0
    peak = 0

    async def approve(request: ApprovalRequest) -> None:
        nonlocal waiting, peak
        waiting += 1
        peak = max(peak, waiting)
        await asyncio.sleep(0.01)
        waiting -= 1

    run_code = RunCodeTool(
        ToolRegistry(ExpenseTools(demo_db).as_list()), runtime=code_runtime, approve=approve
    )
    outcome = await run_code.execute({"code": GATHER_SNIPPET})
    result = outcome.output
    assert isinstance(result, CodeResult) and result.ok, result
    assert check_answer(result.value, expected_answer(demo_db)).ok
    assert len(result.tool_calls) == 29 and peak > 1


def test_approval_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="approval_timeout must be positive"):
        RunCodeTool(approval_timeout=0)


async def test_the_agent_hook_sees_nested_calls(code_runtime: CodeRuntime) -> None:
    from ptcbox.agent_glue import BlockToolCall, ToolCall, approval_from_hook

    seen: list[ToolCall] = []

    def before_tool_call(call: ToolCall) -> ToolCall | BlockToolCall | None:
        seen.append(call)
        if call.name == "delete_account":
            return BlockToolCall("deleting is for humans")
        if call.name == "transfer":
            return ToolCall(call.id, call.name, '{"account": "audited", "amount": 1}')
        return None

    code = """
print(balance(account="a"))
print(transfer(account="b", amount=999))
try:
    delete_account(account="a")
except ToolError as err:
    print(err)
"""
    result = await _run(code_runtime, code, approve=approval_from_hook(before_tool_call))
    assert result.ok, result.error
    lines = result.stdout.splitlines()
    assert lines[:2] == ["100.0", "moved 1.00 to audited"]
    assert "deleting is for humans" in lines[2]
    assert [(c.id, c.name) for c in seen] == [
        ("call_7.1", "balance"),
        ("call_7.2", "transfer"),
        ("call_7.3", "delete_account"),
    ]
    assert seen[1].arguments == '{"account": "b", "amount": 999}'
    assert received == [{"account": "audited", "amount": 1}]

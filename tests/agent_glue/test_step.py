"""step(): one streamed turn, tool calls started early, cleanup on error and cancel."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import pytest

from ptcbox.agent_glue import (
    ChatProviderError,
    Message,
    ScriptedProvider,
    ScriptedTurn,
    StepResult,
    StreamedPart,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolDefinition,
    ToolRegistry,
    ToolResult,
    Usage,
    count_tokens,
    step,
    tool,
)
from ptcbox.agent_glue._step import TRUNCATED

pytestmark = pytest.mark.anyio


@tool(is_parallel_safe=True)
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


async def test_step_streams_a_turn_and_returns_results_in_call_order() -> None:
    provider = ScriptedProvider(
        [ScriptedTurn("Let me compute.", [("double", {"n": 1}), ("double", '{"n": 21}')])],
        chunk_chars=4,
    )
    history = [Message.user("double 1 and 21")]
    snapshot = list(history)
    parts: list[StreamedPart] = []
    early: list[ToolResult] = []
    result = await step(
        provider,
        "You are terse.",
        ToolRegistry([double]),
        history,
        on_message_part=parts.append,
        on_tool_result=early.append,
    )
    assert isinstance(result, StepResult)
    assert history == snapshot  # never mutated
    assert result.id == "scripted-1" and result.finish_reason == "tool_calls"
    assert result.message.content == "Let me compute."
    assert result.tool_calls == (
        ToolCall("call_1_1", "double", '{"n": 1}'),
        ToolCall("call_1_2", "double", '{"n": 21}'),
    )
    assert result.message.tool_calls == result.tool_calls
    results = await result.tool_results()
    assert [(r.tool_call_id, r.output) for r in results] == [("call_1_1", 2), ("call_1_2", 42)]
    assert sorted(r.tool_call_id for r in early) == ["call_1_1", "call_1_2"]
    assert "".join(p.text for p in parts if isinstance(p, TextPart)) == "Let me compute."
    assert sum(isinstance(p, ToolCallPart) for p in parts) > 2  # arguments arrive in pieces
    request = provider.requests[0]
    assert request.system_prompt == "You are terse." and request.messages == tuple(history)
    output = count_tokens("Let me compute.") + sum(
        count_tokens("double") + count_tokens(args) for args in ('{"n": 1}', '{"n": 21}')
    )
    assert result.usage == Usage(input_tokens=request.input_tokens, output_tokens=output)


class GatedProvider:
    """Streams call 0 completely, begins call 1, then waits until a tool has started."""

    model_name = "gated"

    def __init__(self, gate: anyio.Event, fail: bool = False) -> None:
        self.gate = gate
        self.fail = fail

    async def generate(
        self, system_prompt: str, tools: Sequence[ToolDefinition], history: Sequence[Message]
    ) -> Any:
        return _GatedStream(self.gate, self.fail)


class _GatedStream:
    def __init__(self, gate: anyio.Event, fail: bool) -> None:
        self.gate, self.fail = gate, fail
        self.id, self.finish_reason, self.usage = "g1", None, None
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[StreamedPart]:
        yield ToolCallPart(0, "a", "wait", '{"n": 0}')
        yield ToolCallPart(1, "b", "wait", '{"n"')
        with anyio.fail_after(10):
            await self.gate.wait()  # only opens if call "a" started while we stream
        if self.fail:
            raise ChatProviderError("connection reset", status_code=502)
        yield ToolCallPart(1, None, None, ": 1}")
        self.finish_reason = "tool_calls"

    async def aclose(self) -> None:
        self.closed = True


def _waiting_tool(gate: anyio.Event, events: list[str], hold: bool) -> Any:
    @tool(is_parallel_safe=True)
    async def wait(n: int) -> int:
        events.append(f"start {n}")
        gate.set()
        try:
            if hold:
                await anyio.sleep(30)
        except BaseException:
            events.append(f"cancelled {n}")
            raise
        return n

    return wait


async def test_tool_calls_start_as_soon_as_their_arguments_are_complete() -> None:
    gate, events = anyio.Event(), []
    result = await step(
        GatedProvider(gate), "", ToolRegistry([_waiting_tool(gate, events, False)]), []
    )
    assert [r.output for r in await result.tool_results()] == [0, 1]
    assert events == ["start 0", "start 1"]


async def test_provider_error_cancels_and_awaits_started_tools() -> None:
    gate, events = anyio.Event(), []
    with pytest.raises(ChatProviderError, match="connection reset"):
        await step(
            GatedProvider(gate, fail=True),
            "",
            ToolRegistry([_waiting_tool(gate, events, True)]),
            [],
        )
    assert events == ["start 0", "cancelled 0"]  # cleaned up before the error surfaced


async def test_cancelling_a_step_cancels_started_tools() -> None:
    gate, events = anyio.Event(), []
    registry = ToolRegistry([_waiting_tool(gate, events, True)])
    provider = ScriptedProvider(
        [ScriptedTurn("", [("wait", {"n": 0}), ("wait", {"n": 1})])], delay=0.05
    )
    with anyio.move_on_after(0.5) as scope:
        result = await step(provider, "", registry, [])
        await result.tool_results()
    assert scope.cancelled_caught
    assert sorted(events) == ["cancelled 0", "cancelled 1", "start 0", "start 1"]


async def test_truncated_turn_runs_no_tool_call() -> None:
    calls: list[int] = []

    @tool
    def record(n: int) -> int:
        calls.append(n)
        return n

    provider = ScriptedProvider([ScriptedTurn("", [("record", '{"n": 1')], finish_reason="length")])
    result = await step(provider, "", ToolRegistry([record]), [])
    assert result.finish_reason == "length"
    (only,) = await result.tool_results()
    assert not only.ok and only.error == TRUNCATED and only.tool_call_id == "call_1_1"
    assert "cut off by the output-token limit" in only.content
    assert calls == []


async def test_truncated_turn_cancels_calls_that_already_started() -> None:
    gate, events = anyio.Event(), []
    provider = ScriptedProvider(
        [ScriptedTurn("", [("wait", {"n": 0}), ("wait", '{"n": ')], finish_reason="length")],
        delay=0.05,
    )
    result = await step(provider, "", ToolRegistry([_waiting_tool(gate, events, True)]), [])
    results = await result.tool_results()
    assert [r.error for r in results] == [TRUNCATED, TRUNCATED]
    assert events in ([], ["start 0", "cancelled 0"])


async def test_history_is_repaired_before_the_request() -> None:
    """B28 through step: the dangling call is answered in what the model receives."""
    provider = ScriptedProvider(["ok"])
    dangling = [
        Message.user("go"),
        Message.assistant("", (ToolCall("c1", "double", "{}"), ToolCall("c2", "double", "{}"))),
        Message.tool("c1", "2"),
    ]
    result = await step(provider, "", ToolRegistry([double]), dangling)
    assert result.message.content == "ok" and await result.tool_results() == []
    sent = provider.requests[0].messages
    assert [m.tool_call_id for m in sent if m.role == "tool"] == ["c1", "c2"]
    assert sent[-1].is_error and sent[-1].content == "Tool call interrupted by user"
    assert len(dangling) == 3


async def test_cancelling_tool_results_cleans_up() -> None:
    gate, events = anyio.Event(), []
    provider = ScriptedProvider([ScriptedTurn("", [("wait", {"n": 0})])])
    result = await step(provider, "", ToolRegistry([_waiting_tool(gate, events, True)]), [])
    with anyio.move_on_after(0.2):
        await result.tool_results()
    assert events == ["start 0", "cancelled 0"]
    (after,) = await result.tool_results()  # the cancelled call reads as interrupted
    assert after.error == "Tool call interrupted by user"


async def test_parallel_safe_calls_of_a_turn_overlap_and_unsafe_ones_keep_order() -> None:
    running, all_running, log = 0, anyio.Event(), []

    @tool(is_parallel_safe=True)
    async def meet(n: int) -> int:
        nonlocal running
        running += 1
        if running == 3:
            all_running.set()
        with anyio.fail_after(10):
            await all_running.wait()  # only returns if all three run at once
        return n

    @tool
    async def ordered(n: int) -> int:
        log.append(f"start {n}")
        await anyio.sleep(0.01 * (3 - n))
        log.append(f"end {n}")
        return n

    provider = ScriptedProvider(
        [
            ScriptedTurn("", [("meet", {"n": i}) for i in range(3)]),
            ScriptedTurn("", [("ordered", {"n": i}) for i in range(3)]),
        ]
    )
    registry = ToolRegistry([meet, ordered])
    first = await step(provider, "", registry, [])
    assert [r.output for r in await first.tool_results()] == [0, 1, 2]
    second = await step(provider, "", registry, [])
    assert [r.output for r in await second.tool_results()] == [0, 1, 2]
    assert log == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]

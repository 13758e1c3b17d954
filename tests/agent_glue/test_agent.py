"""The agent loop over the real openai SDK and the scripted server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import anyio
import pytest

from ptcbox.agent_glue import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    BlockToolCall,
    ChatProviderError,
    ChatRequest,
    Message,
    MessageDelta,
    ScriptedError,
    ScriptedOpenAIServer,
    ScriptedTurn,
    ToolCall,
    ToolContext,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolResult,
    TurnEnd,
    TurnStart,
    Usage,
    tool,
)

from ._helpers import agent_for

pytestmark = pytest.mark.anyio

INTERRUPTED = "Tool call interrupted by user"


@tool(is_parallel_safe=True)
def lookup(key: str, context: ToolContext) -> str:
    """Look up a key."""
    context.report(f"looking up {key}")
    return f"value of {key}"


def _last_tool_text(request: ChatRequest) -> str:
    return next(m.content for m in reversed(request.messages) if m.role == "tool")


async def test_run_loops_until_no_tool_calls_with_events_and_usage() -> None:
    script = [
        ScriptedTurn("Looking.", [("lookup", {"key": "a"}), ("lookup", {"key": "b"})]),
        lambda request: f"Found: {_last_tool_text(request)}",
    ]
    events: list[AgentEvent] = []
    with ScriptedOpenAIServer(script, chunk_chars=6) as server:
        agent = agent_for(server, [lookup], on_event=events.append)
        result = await agent.run("look up a and b")
        bodies = server.requests
    assert result.stop_reason == "completed" and result.steps == 2
    assert result.final_text == "Found: value of b"
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert (
        result.messages[2].content == "value of a" and result.messages[2].tool_call_id == "call_1_1"
    )
    assert agent.messages == result.messages
    # usage: the sum of what the API reported for both requests
    assert result.usage.requests == 2 and result.usage.input_tokens > 0
    assert agent.usage == result.usage
    # the second request carried the first turn and its results
    assert [m["role"] for m in bodies[1]["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
    ]
    kinds = [type(e).__name__ for e in events if not isinstance(e, MessageDelta)]
    assert kinds[:2] == ["AgentStart", "TurnStart"] and kinds[-1] == "AgentEnd"
    assert kinds.count("ToolExecutionStart") == kinds.count("ToolExecutionEnd") == 2
    assert kinds.count("TurnEnd") == 2
    updates = [e.partial for e in events if isinstance(e, ToolExecutionUpdate)]
    assert sorted(updates) == ["looking up a", "looking up b"]
    for update in (e for e in events if isinstance(e, ToolExecutionUpdate)):
        start = next(
            i
            for i, e in enumerate(events)
            if isinstance(e, ToolExecutionStart) and e.tool_call == update.tool_call
        )
        end = next(
            i
            for i, e in enumerate(events)
            if isinstance(e, ToolExecutionEnd) and e.tool_call == update.tool_call
        )
        assert start < events.index(update) < end  # delivered while the call ran
    text = "".join(
        e.part.text for e in events if isinstance(e, MessageDelta) and hasattr(e.part, "text")
    )
    assert "Looking." in text
    # a second run continues the conversation and accumulates usage
    with ScriptedOpenAIServer(["again"]) as server:
        agent.provider = agent_for(server, [lookup]).provider
        second = await agent.run("and now?")
    assert second.final_text == "again" and len(agent.messages) == 7
    assert agent.usage == result.usage + second.usage


async def test_before_hook_blocks_and_rewrites_after_hook_replaces() -> None:
    ran: list[str] = []

    @tool
    def delete_all(table: str) -> str:
        ran.append(f"delete {table}")
        return "deleted"

    @tool
    def read(table: str, limit: int = 10) -> str:
        ran.append(f"read {table} {limit}")
        return f"{limit} rows"

    def before(call: ToolCall) -> ToolCall | BlockToolCall | None:
        if call.name == "delete_all":
            return BlockToolCall("destructive tools need approval")
        if call.name == "read":
            return ToolCall(call.id, call.name, '{"table": "users", "limit": 2}')
        return None

    async def after(call: ToolCall, result: ToolResult) -> ToolResult | None:
        if call.name == "read":
            return ToolResult.success(result.output + " (checked)")
        return None

    events: list[AgentEvent] = []
    script = [
        ScriptedTurn("", [("delete_all", {"table": "users"}), ("read", {"table": "users"})]),
        "done",
    ]
    with ScriptedOpenAIServer(script) as server:
        agent = agent_for(
            server,
            [delete_all, read],
            before_tool_call=before,
            after_tool_call=after,
            on_event=events.append,
        )
        result = await agent.run("clean up")
    assert ran == ["read users 2"]  # the blocked call never ran
    tool_messages = [m for m in result.messages if m.role == "tool"]
    assert tool_messages[0].content == "Error: tool call blocked: destructive tools need approval"
    assert tool_messages[0].is_error
    assert tool_messages[1].content == "2 rows (checked)" and not tool_messages[1].is_error
    ends = [e for e in events if isinstance(e, ToolExecutionEnd)]
    assert [e.is_error for e in ends] == [True, False]
    # the transcript keeps the call as the model made it
    assert result.messages[1].tool_calls[1].arguments == '{"table": "users"}'


async def test_interrupt_mid_tool_gives_every_unfinished_call_an_interrupted_result() -> None:
    started = anyio.Event()
    release = threading.Event()

    @tool(is_parallel_safe=True)
    async def slow(n: int) -> int:
        started.set()
        await anyio.sleep(30)
        return n

    @tool(is_parallel_safe=True)
    def blocking(n: int) -> int:  # a sync tool stuck in its worker thread
        release.wait(30)
        return n

    @tool(is_parallel_safe=True)
    def quick(n: int) -> int:
        return n

    script = [
        ScriptedTurn("", [("quick", {"n": 1}), ("slow", {"n": 2}), ("blocking", {"n": 3})]),
        lambda request: "resumed after: " + _last_tool_text(request),
    ]
    events: list[AgentEvent] = []
    with ScriptedOpenAIServer(script) as server:
        agent = agent_for(server, [quick, slow, blocking], on_event=events.append)

        async def interrupt_when_running() -> None:
            with anyio.fail_after(10):
                await started.wait()
            await anyio.sleep(0.05)
            agent.interrupt()

        begin = time.monotonic()
        async with anyio.create_task_group() as tg:
            tg.start_soon(interrupt_when_running)
            result = await agent.run("go")
        assert time.monotonic() - begin < 10
        release.set()
        assert result.stop_reason == "interrupted" and not agent.running
        tools = [m for m in result.messages if m.role == "tool"]
        assert [(m.tool_call_id, m.content, m.is_error) for m in tools] == [
            ("call_1_1", "1", False),
            ("call_1_2", INTERRUPTED, True),
            ("call_1_3", INTERRUPTED, True),
        ]
        ends = {e.tool_call.id: e for e in events if isinstance(e, ToolExecutionEnd)}
        assert ends["call_1_2"].is_error and ends["call_1_2"].result.error == INTERRUPTED
        # the history is valid: the next run sends it as is
        follow_up = await agent.run("continue")
        assert follow_up.final_text == "resumed after: " + INTERRUPTED
        assert follow_up.stop_reason == "completed"


async def test_interrupt_while_streaming_keeps_started_calls_only() -> None:
    script = [
        ScriptedTurn(
            "Working on it.",
            [("lookup", {"key": "a"}), ("lookup", {"key": "b"}), ("lookup", {"key": "c"})],
        ),
    ]
    with ScriptedOpenAIServer(script, chunk_chars=3, delay=0.02) as server:
        agent = agent_for(server, [lookup])

        def on_event(event: AgentEvent) -> None:
            if isinstance(event, ToolExecutionStart):
                agent.interrupt()  # as soon as the first call starts, mid-stream

        agent._listeners.append(on_event)
        result = await agent.run("go")
    assert result.stop_reason == "interrupted"
    assistant = result.messages[1]
    assert assistant.role == "assistant" and assistant.content == "Working on it."
    assert [c.id for c in assistant.tool_calls] == ["call_1_1"]  # b and c never completed
    (answer,) = [m for m in result.messages if m.role == "tool"]
    assert answer.tool_call_id == "call_1_1"


async def test_interrupt_from_another_thread_and_when_idle() -> None:
    agent_box: dict[str, Any] = {}

    @tool
    async def wait_forever() -> None:
        threading.Thread(target=lambda: (time.sleep(0.05), agent_box["agent"].interrupt())).start()
        await anyio.sleep(30)

    with ScriptedOpenAIServer([ScriptedTurn("", [("wait_forever", {})])]) as server:
        agent = agent_for(server, [wait_forever])
        agent.interrupt()  # idle: no effect
        agent_box["agent"] = agent
        with anyio.fail_after(10):
            result = await agent.run("go")
    assert result.stop_reason == "interrupted"


async def test_queued_user_messages_wait_for_the_turn_boundary() -> None:
    agent_box: dict[str, Any] = {}

    @tool
    def work() -> str:
        agent_box["agent"].queue_user_message("also check the cache")  # while the tool runs
        return "worked"

    def answer_and_queue(request: ChatRequest) -> str:
        # the user types again while the model writes its final answer (server thread)
        agent_box["agent"].queue_user_message("one more thing")
        return "first answer"

    script = [ScriptedTurn("", [("work", {})]), answer_and_queue, "second answer"]
    with ScriptedOpenAIServer(script) as server:
        agent = agent_for(server, [work])
        agent_box["agent"] = agent
        result = await agent.run("do the work")
        bodies = server.requests
    second = [(m["role"], m.get("content")) for m in bodies[1]["messages"]]
    assert second[-3:] == [
        ("assistant", None),
        ("tool", "worked"),
        ("user", "also check the cache"),
    ]
    # a turn without tool calls does not end the run while a queued message waits
    third = [(m["role"], m.get("content")) for m in bodies[2]["messages"]]
    assert third[-2:] == [("assistant", "first answer"), ("user", "one more thing")]
    assert result.steps == 3 and result.final_text == "second answer"


async def test_terminate_from_a_tool_ends_the_loop() -> None:
    @tool
    def submit(answer: str) -> ToolResult:
        return ToolResult.success(f"submitted {answer}", terminate=True)

    script = [ScriptedTurn("", [("submit", {"answer": "42"})]), "never requested"]
    with ScriptedOpenAIServer(script) as server:
        result = await agent_for(server, [submit]).run("answer")
        assert server.remaining == 1
    assert result.stop_reason == "terminated" and result.steps == 1
    assert result.messages[-1].content == "submitted 42"


async def test_max_steps() -> None:
    script = [ScriptedTurn("", [("lookup", {"key": str(i)})]) for i in range(5)]
    with ScriptedOpenAIServer(script) as server:
        result = await agent_for(server, [lookup], max_steps=2).run("loop")
    assert result.stop_reason == "max_steps" and result.steps == 2
    assert result.messages[-1].role == "tool"  # the history stays valid


async def test_truncated_turn_is_retried_by_the_model() -> None:
    ran: list[str] = []

    @tool
    def save(text: str) -> str:
        ran.append(text)
        return "saved"

    script = [
        ScriptedTurn("", [("save", '{"text": "a very long te')], finish_reason="length"),
        lambda request: (
            ScriptedTurn("", [("save", {"text": "short"})])
            if "cut off" in _last_tool_text(request)
            else "the error was not shown"
        ),
        "done",
    ]
    with ScriptedOpenAIServer(script) as server:
        result = await agent_for(server, [save]).run("save it")
    assert ran == ["short"] and result.final_text == "done"
    first_result = result.messages[2]
    assert first_result.is_error and "output-token limit" in first_result.content


async def test_dangling_history_is_repaired_before_the_request() -> None:
    """B28 through the agent: a conversation with a dangling call continues validly."""
    history = [
        Message.user("go"),
        Message.assistant("", (ToolCall("c1", "lookup", "{}"), ToolCall("c2", "lookup", "{}"))),
        Message.tool("c1", "value"),
    ]
    with ScriptedOpenAIServer(["ok"]) as server:
        agent = agent_for(server, [lookup], messages=history)
        result = await agent.run("and?")
        sent = server.requests[0]["messages"]
    assert result.final_text == "ok"
    assert [(m["role"], m.get("tool_call_id")) for m in sent[1:5]] == [
        ("user", None),
        ("assistant", None),
        ("tool", "c1"),
        ("tool", "c2"),
    ]
    assert sent[4]["content"] == INTERRUPTED


async def test_provider_error_propagates_and_history_stays_valid() -> None:
    with ScriptedOpenAIServer([ScriptedError("bad gateway", status_code=502)]) as server:
        agent = agent_for(server, [lookup])
        with pytest.raises(ChatProviderError, match="bad gateway"):
            await agent.run("go")
    assert not agent.running and agent.messages == (Message.user("go"),)


async def test_stream_yields_every_event_and_ends_with_agent_end() -> None:
    script = [ScriptedTurn("", [("lookup", {"key": "k"})]), "bye"]
    with ScriptedOpenAIServer(script) as server:
        agent = agent_for(server, [lookup])
        events = [event async for event in agent.stream("hi")]
    assert isinstance(events[0], AgentStart) and isinstance(events[-1], AgentEnd)
    assert events[-1].result.final_text == "bye"
    assert sum(isinstance(e, TurnStart) for e in events) == 2
    assert sum(isinstance(e, TurnEnd) for e in events) == 2
    assert isinstance(events[-1].result.usage, Usage)


async def test_leaving_stream_early_interrupts_the_run() -> None:
    @tool
    async def hang() -> None:
        await anyio.sleep(30)

    with ScriptedOpenAIServer([ScriptedTurn("", [("hang", {})])]) as server:
        agent = agent_for(server, [hang])
        with anyio.fail_after(10):
            async with contextlib.aclosing(agent.stream("go")) as events:
                async for event in events:
                    if isinstance(event, ToolExecutionStart):
                        break
    assert not agent.running
    assert agent.messages[-1].content == INTERRUPTED


async def test_running_twice_at_once_is_refused() -> None:
    @tool
    async def hang() -> None:
        await anyio.sleep(30)

    with ScriptedOpenAIServer([ScriptedTurn("", [("hang", {})])]) as server:
        agent = agent_for(server, [hang])
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.run, "go")
            await anyio.sleep(0.2)
            with pytest.raises(RuntimeError, match="already running"):
                await agent.run("again")
            agent.interrupt()


async def test_a_failing_hook_gives_an_error_result_and_the_run_goes_on() -> None:
    def before(call: ToolCall) -> None:
        raise RuntimeError("policy service down")

    events: list[AgentEvent] = []
    script = [ScriptedTurn("", [("lookup", {"key": "a"})]), "understood"]
    with ScriptedOpenAIServer(script) as server:
        agent = agent_for(server, [lookup], before_tool_call=before, on_event=events.append)
        result = await agent.run("go")
    failed = result.messages[2]
    assert failed.is_error
    assert failed.content == "Error: tool call failed in a hook: RuntimeError: policy service down"
    assert [e.is_error for e in events if isinstance(e, ToolExecutionEnd)] == [True]
    assert result.final_text == "understood"


async def test_a_failing_script_function_answers_500() -> None:
    def broken(request: ChatRequest) -> str:
        raise KeyError("no such fixture")

    with ScriptedOpenAIServer([broken]) as server:
        agent = agent_for(server, [lookup])
        with pytest.raises(ChatProviderError, match="the script raised KeyError") as caught:
            await agent.run("go")
    assert caught.value.status_code == 500

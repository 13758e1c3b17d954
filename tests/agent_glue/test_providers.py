"""The Anthropic Messages and OpenAI Responses providers over their real SDKs.

Each runs against the scripted server on 127.0.0.1 (SSE and JSON): tool calls in
parallel, tool results (``is_error`` kept), usage with cache tokens, the ``max_tokens``
retry path, and the demo task end to end with token usage reported per provider.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ptcbox import CodeResult
from ptcbox.agent_glue import (
    Agent,
    ChatRequest,
    Message,
    RunCodeTool,
    ScriptedOpenAIServer,
    ScriptedProvider,
    ScriptedTurn,
    ToolCall,
    ToolExecutionEnd,
    ToolRegistry,
    Usage,
    count_request_tokens,
    step,
    tool,
)
from ptcbox.demo import GATHER_SNIPPET, TASK, ExpenseTools, check_answer, expected_answer
from ptcbox.runtimes import ThreadRuntime

from ._helpers import PROVIDER_KINDS, provider_for

pytestmark = pytest.mark.anyio


@tool(is_parallel_safe=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


TURN = ScriptedTurn(
    "Adding both pairs now.",
    [("add", {"a": 1, "b": 2}), ToolCall("call_custom", "add", '{"a": 40, "b": 2}')],
)


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "json"])
@pytest.mark.parametrize("kind", ["responses", "anthropic"])
async def test_parallel_tool_calls_and_usage(kind: str, stream: bool) -> None:
    history = [Message.user("add 1+2 and 40+2")]
    with ScriptedOpenAIServer([TURN], chunk_chars=5) as server:
        options = {"cache_prompt": False} if kind == "anthropic" else {}
        provider = provider_for(kind, server, stream=stream, **options)
        result = await step(provider, "Be exact.", ToolRegistry([add]), history)
        results = await result.tool_results()
        body = server.requests[0]
    assert result.message.content == "Adding both pairs now."
    assert result.tool_calls == (
        ToolCall("call_1_1", "add", '{"a": 1, "b": 2}'),
        ToolCall("call_custom", "add", '{"a": 40, "b": 2}'),
    )
    assert result.finish_reason == "tool_calls"
    assert [r.output for r in results] == [3, 42]
    twin = ScriptedProvider([TURN])
    twin_result = await step(twin, "Be exact.", ToolRegistry([add]), history)
    await twin_result.tool_results()
    assert isinstance(result.usage, Usage) and result.usage == twin_result.usage
    assert bool(body.get("stream")) is stream
    if kind == "anthropic":
        assert body["system"] == [{"type": "text", "text": "Be exact."}]
        assert body["tools"] == ToolRegistry([add]).schemas("anthropic")
        assert body["max_tokens"] == 4096
    else:
        assert body["instructions"] == "Be exact." and body["store"] is False
        assert body["tools"] == ToolRegistry([add]).schemas("responses")
        assert body["input"] == [{"role": "user", "content": "add 1+2 and 40+2"}]


HISTORY = [
    Message.user("add"),
    Message.assistant(
        "Two at once.",
        (ToolCall("c1", "add", '{"a": 1, "b": 2}'), ToolCall("c2", "add", '{"a": "x"}')),
    ),
    Message.tool("c1", "3", name="add"),
    Message.tool("c2", "add got invalid arguments", name="add", is_error=True),
]


def _echo(request: ChatRequest) -> str:
    tools = [m for m in request.messages if m.role == "tool"]
    return " | ".join(f"{m.tool_call_id}:{m.content}:{m.is_error}" for m in tools)


async def test_anthropic_history_tool_results_in_one_user_message() -> None:
    with ScriptedOpenAIServer([_echo]) as server:
        result = await step(provider_for("anthropic", server), "sys", ToolRegistry([add]), HISTORY)
        body = server.requests[0]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "add"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Two at once."},
                {"type": "tool_use", "id": "c1", "name": "add", "input": {"a": 1, "b": 2}},
                {"type": "tool_use", "id": "c2", "name": "add", "input": {"a": "x"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "3"},
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": "add got invalid arguments",
                    "is_error": True,
                },
            ],
        },
    ]
    # the server read it back the same way: the error flag crossed the wire
    assert result.message.content == "c1:3:False | c2:add got invalid arguments:True"


async def test_responses_history_as_function_call_items() -> None:
    with ScriptedOpenAIServer([_echo]) as server:
        result = await step(provider_for("responses", server), "sys", ToolRegistry([add]), HISTORY)
        body = server.requests[0]
    assert body["input"] == [
        {"role": "user", "content": "add"},
        {"role": "assistant", "content": "Two at once."},
        {"type": "function_call", "call_id": "c1", "name": "add", "arguments": '{"a": 1, "b": 2}'},
        {"type": "function_call", "call_id": "c2", "name": "add", "arguments": '{"a": "x"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "3"},
        {"type": "function_call_output", "call_id": "c2", "output": "add got invalid arguments"},
    ]
    assert result.message.content.startswith("c1:3:False | c2:add got invalid arguments")


@pytest.mark.parametrize("kind", ["responses", "anthropic"])
async def test_a_turn_cut_by_the_token_limit_asks_for_a_complete_retry(kind: str) -> None:
    cut = ScriptedTurn("", [("add", '{"a": 1, "b"')], finish_reason="length")
    with ScriptedOpenAIServer([cut]) as server:
        result = await step(provider_for(kind, server), "", ToolRegistry([add]), [])
        (only,) = await result.tool_results()
    assert result.finish_reason == "length"
    assert only.is_error and "cut off by the output-token limit" in only.content


async def test_anthropic_prompt_cache_is_written_then_read() -> None:
    with ScriptedOpenAIServer([TURN, "done"]) as server:
        events: list[Usage | None] = []
        agent = Agent(
            provider_for("anthropic", server),
            [add],
            "Be exact.",
            on_event=lambda e: events.append(getattr(e, "usage", None)),
        )
        result = await agent.run("add")
        first = server.requests[0]
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert first["system"][-1]["cache_control"] == {"type": "ephemeral"}
    turns = [u for u in events if isinstance(u, Usage)]
    assert turns[0].cache_write_input_tokens > 0 and turns[0].cached_input_tokens == 0
    assert turns[1].cached_input_tokens == turns[0].cache_write_input_tokens
    assert turns[1].cache_write_input_tokens == 0
    assert result.usage.cached_input_tokens == turns[1].cached_input_tokens


async def test_anthropic_parallel_tool_use_can_be_disabled() -> None:
    with ScriptedOpenAIServer(["ok"]) as server:
        provider = provider_for("anthropic", server, parallel_tool_calls=False)
        await step(provider, "", ToolRegistry([add]), [Message.user("x")])
        body = server.requests[0]
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


def _answer(request: ChatRequest) -> str:
    result = request.messages[-1].content
    found = re.search(r"^\[value\] (.*)$", result, flags=re.MULTILINE)
    assert found is not None, result
    rows = json.loads(found.group(1))
    return "\n".join(f"{row['name']}: ${row['over_by']:,.2f} over" for row in rows)


@pytest.mark.parametrize("kind", PROVIDER_KINDS)
async def test_the_demo_task_through_each_provider(kind: str, demo_db: Path) -> None:
    registry = ToolRegistry(ExpenseTools(demo_db).as_list())
    script = [ScriptedTurn("One snippet.", [("run_code", {"code": GATHER_SNIPPET})]), _answer]
    ends: list[ToolExecutionEnd] = []
    runtime = ThreadRuntime()
    run_code = RunCodeTool(registry, runtime=runtime)
    with ScriptedOpenAIServer(script, chunk_chars=64) as server:
        agent = Agent(
            provider_for(kind, server),
            [run_code],
            "Use run_code.",
            on_event=lambda e: ends.append(e) if isinstance(e, ToolExecutionEnd) else None,
        )
        try:
            result = await agent.run(TASK)
        finally:
            await runtime.aclose()
    assert result.stop_reason == "completed" and result.steps == 2
    code_result = ends[0].result.output
    assert isinstance(code_result, CodeResult) and code_result.ok, code_result.error
    expected = expected_answer(demo_db)
    assert check_answer(code_result.value, expected).ok
    for row in expected:
        assert f"{row['name']}: ${row['over_by']:,.2f} over" in result.final_text
    # token usage as the API reported it: the requests as sent, counted
    assert result.usage.requests == 2
    assert result.usage.input_tokens == sum(
        count_request_tokens("Use run_code.", (run_code.definition,), tuple(agent.messages[:i]))
        for i in (1, 3)
    )
    assert result.usage.output_tokens > 0
    if kind == "anthropic":
        assert result.usage.cached_input_tokens > 0  # the run_code description, read back

"""OpenAIChatProvider over the real openai SDK, against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json

import openai
import pytest

from ptcbox.agent_glue import (
    ChatProviderError,
    ChatRequest,
    Message,
    OpenAIChatProvider,
    ScriptedError,
    ScriptedOpenAIServer,
    ScriptedProvider,
    ScriptedTurn,
    ToolCall,
    ToolRegistry,
    Usage,
    step,
    tool,
)

pytestmark = pytest.mark.anyio


@tool(is_parallel_safe=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


TURN = ScriptedTurn(
    "Adding both pairs now.",
    [("add", {"a": 1, "b": 2}), ToolCall("call_custom", "add", '{"a": 40, "b": 2}')],
)


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "non-streaming"])
async def test_turn_with_tool_calls_and_usage(stream: bool) -> None:
    with ScriptedOpenAIServer([TURN], chunk_chars=5) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        provider = OpenAIChatProvider(client, "gpt-test", stream=stream, max_tokens=256)
        history = [Message.user("add 1+2 and 40+2")]
        result = await step(provider, "Be exact.", ToolRegistry([add]), history)
        results = await result.tool_results()
        body = server.requests[0]
    assert result.id == "scripted-1" and result.finish_reason == "tool_calls"
    assert result.message.content == "Adding both pairs now."
    assert result.tool_calls == (
        ToolCall("call_1_1", "add", '{"a": 1, "b": 2}'),
        ToolCall("call_custom", "add", '{"a": 40, "b": 2}'),
    )
    assert [r.output for r in results] == [3, 42]
    # the same request through ScriptedProvider reports the same usage
    twin = ScriptedProvider([TURN])
    twin_result = await step(twin, "Be exact.", ToolRegistry([add]), history)
    await twin_result.tool_results()
    assert isinstance(result.usage, Usage) and result.usage == twin_result.usage
    # what went over the wire
    assert body["model"] == "gpt-test" and body["max_completion_tokens"] == 256
    assert body["messages"] == [
        {"role": "system", "content": "Be exact."},
        {"role": "user", "content": "add 1+2 and 40+2"},
    ]
    assert body["tools"] == ToolRegistry([add]).schemas("openai")
    assert bool(body.get("stream")) is stream
    if stream:
        assert body["stream_options"] == {"include_usage": True}
    assert provider.last_request is not None and provider.last_request["model"] == "gpt-test"
    assert provider.last_chat_request == ChatRequest("Be exact.", (add.definition,), tuple(history))


async def test_history_with_tool_results_round_trips() -> None:
    history = [
        Message.user("add"),
        Message.assistant("", (ToolCall("c1", "add", '{"a": 1, "b": 2}'),)),
        Message.tool("c1", "3", name="add"),
    ]
    seen: list[ChatRequest] = []

    def answer(request: ChatRequest) -> str:
        seen.append(request)
        return f"The sum is {request.messages[-1].content}."

    with ScriptedOpenAIServer([answer]) as server:
        provider = OpenAIChatProvider(server.client(), "m")
        result = await step(provider, "sys", ToolRegistry([add]), history)
        body = server.requests[0]
    assert result.message.content == "The sum is 3." and result.finish_reason == "stop"
    assert body["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
            }
        ],
    }
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "3"}
    assert seen[0].system_prompt == "sys" and seen[0].tools[0].name == "add"
    assert [m.role for m in seen[0].messages] == ["user", "assistant", "tool"]


async def test_api_errors_become_chat_provider_errors() -> None:
    with ScriptedOpenAIServer([ScriptedError("model overloaded", status_code=429)]) as server:
        provider = OpenAIChatProvider(server.client(), "m")
        with pytest.raises(ChatProviderError, match="model overloaded") as caught:
            await step(provider, "", ToolRegistry(), [Message.user("hi")])
    assert caught.value.status_code == 429
    assert isinstance(caught.value.__cause__, openai.RateLimitError)


async def test_connection_errors_become_chat_provider_errors() -> None:
    server = ScriptedOpenAIServer([]).start()
    url = server.base_url
    server.stop()
    client = openai.AsyncOpenAI(base_url=url, api_key="test", max_retries=0, timeout=5)
    with pytest.raises(ChatProviderError, match="APIConnectionError"):
        await step(OpenAIChatProvider(client, "m"), "", ToolRegistry(), [Message.user("hi")])


async def test_truncated_turn_from_the_api() -> None:
    turn = ScriptedTurn("", [("add", '{"a": 1, "b"')], finish_reason="length")
    with ScriptedOpenAIServer([turn]) as server:
        result = await step(OpenAIChatProvider(server.client(), "m"), "", ToolRegistry([add]), [])
        (only,) = await result.tool_results()
    assert result.finish_reason == "length"
    assert result.tool_calls[0].arguments == '{"a": 1, "b"'
    assert only.is_error and "cut off by the output-token limit" in only.content


async def test_server_answers_models_and_rejects_bad_requests() -> None:
    with ScriptedOpenAIServer(["hi"]) as server:
        client = server.client()
        models = await client.models.list()
        assert [m.id for m in models.data] == ["scripted"]
        with pytest.raises(openai.BadRequestError):
            await client.post("/chat/completions", body="not json", cast_to=object)  # type: ignore[arg-type]
        completion = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    assert completion.choices[0].message.content == "hi"
    assert json.loads(completion.model_dump_json())["usage"]["prompt_tokens"] > 0

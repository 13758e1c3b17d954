"""Provider errors over the real SDKs: HTTP statuses, broken streams, sync clients.

Every failure surfaces as ``ChatProviderError`` from ``step`` only after the tool call the
turn had already started was cancelled and awaited.
"""

from __future__ import annotations

import asyncio

import anthropic
import openai
import pytest

from ptcbox.agent_glue import (
    AnthropicProvider,
    ChatProviderError,
    Message,
    OpenAIChatProvider,
    OpenAIResponsesProvider,
    ScriptedError,
    ScriptedOpenAIServer,
    ScriptedStreamFault,
    ScriptedTurn,
    ToolRegistry,
    step,
    tool,
)

from ._helpers import PROVIDER_KINDS, provider_for

pytestmark = pytest.mark.anyio

# events sent before the fault: the second call's first event, so the first call started
SECOND_CALL_STARTS = {"chat": 4, "responses": 6, "anthropic": 6}


@pytest.mark.parametrize("kind", PROVIDER_KINDS)
@pytest.mark.parametrize("status", [400, 429, 500, 503])
async def test_http_errors_are_typed(kind: str, status: int) -> None:
    with (
        ScriptedOpenAIServer([ScriptedError(f"scripted {status}", status)]) as server,
        pytest.raises(ChatProviderError, match=f"scripted {status}") as caught,
    ):
        await step(provider_for(kind, server), "", ToolRegistry(), [Message.user("hi")])
    assert caught.value.status_code == status
    sdk_error = anthropic.APIStatusError if kind == "anthropic" else openai.APIStatusError
    assert isinstance(caught.value.__cause__, sdk_error)


@pytest.mark.parametrize("kind", PROVIDER_KINDS)
async def test_connection_refused_is_typed(kind: str) -> None:
    server = ScriptedOpenAIServer([]).start()
    provider = provider_for(kind, server)
    server.stop()
    with pytest.raises(ChatProviderError, match="APIConnectionError"):
        await step(provider, "", ToolRegistry(), [Message.user("hi")])


@pytest.mark.parametrize("kind", PROVIDER_KINDS)
@pytest.mark.parametrize("fault", ["disconnect", "malformed", "error"])
async def test_a_broken_stream_cancels_the_started_tool_call_first(kind: str, fault: str) -> None:
    started = asyncio.Event()
    log: list[str] = []

    @tool(is_parallel_safe=True)
    async def slow(n: int) -> int:
        """Wait a long time."""
        log.append(f"start {n}")
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # cleanup takes a moment; it must be awaited
            log.append(f"cancelled {n}")
            raise
        return n

    turn = ScriptedTurn("", [("slow", {"n": 1}), ("slow", {"n": 2})])
    item = ScriptedStreamFault(turn, after=SECOND_CALL_STARTS[kind], fault=fault)  # type: ignore[arg-type]
    with ScriptedOpenAIServer([item], chunk_chars=1000) as server:
        provider = provider_for(kind, server)
        with pytest.raises(ChatProviderError) as caught:
            await asyncio.wait_for(
                step(provider, "", ToolRegistry([slow]), [Message.user("go")]), timeout=60
            )
    assert log == ["start 1", "cancelled 1"], (str(caught.value), log)
    text = str(caught.value)
    expected = {
        "disconnect": "stream broke",
        "malformed": "JSONDecodeError",
        "error": "scripted error",
    }
    assert expected[fault] in text, text


@pytest.mark.parametrize("kind", PROVIDER_KINDS)
async def test_a_stream_cut_before_the_first_call_completes(kind: str) -> None:
    turn = ScriptedTurn("Thinking about it.", [("slow", {"n": 1})])
    with (
        ScriptedOpenAIServer([ScriptedStreamFault(turn, after=2)], chunk_chars=3) as server,
        pytest.raises(ChatProviderError, match="stream"),
    ):
        await step(provider_for(kind, server), "", ToolRegistry(), [Message.user("go")])


@pytest.mark.parametrize("kind", PROVIDER_KINDS)
async def test_a_fault_on_a_non_streaming_request_is_an_http_500(kind: str) -> None:
    turn = ScriptedTurn("x")
    with (
        ScriptedOpenAIServer([ScriptedStreamFault(turn)]) as server,
        pytest.raises(ChatProviderError) as caught,
    ):
        await step(provider_for(kind, server, stream=False), "", ToolRegistry(), [])
    assert caught.value.status_code == 500


def test_sync_clients_are_refused_with_the_fix() -> None:
    sync_openai = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
    for provider_class in (OpenAIChatProvider, OpenAIResponsesProvider):
        with pytest.raises(TypeError, match=r"openai\.AsyncOpenAI") as caught:
            provider_class(sync_openai, "m")  # type: ignore[arg-type]
        assert "got the sync openai.OpenAI" in str(caught.value)
        assert "run_sync" in str(caught.value)
    sync_anthropic = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9")
    with pytest.raises(TypeError, match=r"needs an async client \(anthropic\.AsyncAnthropic\)"):
        AnthropicProvider(sync_anthropic, "m")  # type: ignore[arg-type]


async def test_the_scripted_provider_plays_a_fault_too() -> None:
    from ptcbox.agent_glue import ScriptedProvider

    turn = ScriptedTurn("partial text", [("add", {"a": 1})])
    provider = ScriptedProvider([ScriptedStreamFault(turn, after=1)], chunk_chars=4)
    with pytest.raises(ChatProviderError, match="stream broke: scripted disconnect"):
        await step(provider, "", ToolRegistry(), [Message.user("x")])
    assert provider.remaining == 0

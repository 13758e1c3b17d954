""":class:`OpenAIChatProvider`: OpenAI Chat Completions through the official SDK.

Streaming by default: ``delta.content`` becomes :class:`TextPart`, ``delta.tool_calls``
fragments become :class:`ToolCallPart` (assembled by ``step``), and usage is captured
from the final chunk (``stream_options={"include_usage": True}``). Works with any
OpenAI-compatible endpoint (``AsyncOpenAI(base_url=...)``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ptcbox.agent_glue._messages import Message, Usage
from ptcbox.agent_glue._provider import (
    ChatProviderError,
    ChatRequest,
    StreamedPart,
    TextPart,
    ToolCallPart,
    broken_stream,
    require_async_client,
)
from ptcbox.agent_glue._schemas import ToolDefinition

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIChatProvider"]


class OpenAIChatProvider:
    """A :class:`ChatProvider` over ``client.chat.completions.create``.

    Args:
        client: An ``openai.AsyncOpenAI`` client (any ``base_url``).
        model: The model name.
        stream: Stream the response (default) or make one non-streaming request.
        max_tokens: Output-token limit per turn (``max_completion_tokens``), or ``None``.
        temperature: Sampling temperature, or ``None`` for the API default.
        parallel_tool_calls: Allow several tool calls per turn; ``None`` for the default.
        extra_body: More request fields, merged into every request.

    The request of the last call is kept in :attr:`last_request` (the exact keyword
    arguments given to the SDK) and as a provider-neutral :class:`ChatRequest` in
    :attr:`last_chat_request` (whose ``input_tokens`` counts its tokens).

    Raises:
        TypeError: If ``client`` is the sync ``openai.OpenAI``.
    """

    provider_name: ClassVar[str] = "openai"
    """The ``gen_ai.provider.name`` of this provider's spans."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        model: str,
        *,
        stream: bool = True,
        max_tokens: int | None = None,
        temperature: float | None = None,
        parallel_tool_calls: bool | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        import openai  # noqa: PLC0415 - the SDK is imported when first used

        require_async_client(
            client,
            provider=type(self).__name__,
            sync_types=(openai.OpenAI,),
            wanted="openai.AsyncOpenAI",
        )
        self._client = client
        self._model = model
        self._stream = stream
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._parallel_tool_calls = parallel_tool_calls
        self._extra_body = dict(extra_body or {})
        self.last_request: dict[str, Any] | None = None
        self.last_chat_request: ChatRequest | None = None

    @property
    def model_name(self) -> str:
        """The model name."""
        return self._model

    def build_request(
        self, system_prompt: str, tools: Sequence[ToolDefinition], history: Sequence[Message]
    ) -> dict[str, Any]:
        """Return the keyword arguments for ``chat.completions.create``.

        Returns:
            ``model``, ``messages`` (system prompt first), ``tools`` when any, and the
            configured options; ``stream`` and ``stream_options`` when streaming.
        """
        body = ChatRequest(system_prompt, tuple(tools), tuple(history)).to_openai(self._model)
        if self._max_tokens is not None:
            body["max_completion_tokens"] = self._max_tokens
        if self._temperature is not None:
            body["temperature"] = self._temperature
        if self._parallel_tool_calls is not None and tools:
            body["parallel_tool_calls"] = self._parallel_tool_calls
        if self._stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        if self._extra_body:
            body["extra_body"] = dict(self._extra_body)
        return body

    async def generate(
        self, system_prompt: str, tools: Sequence[ToolDefinition], history: Sequence[Message]
    ) -> _OpenAIStream:
        """Send the request and return the streaming message.

        Raises:
            ChatProviderError: If the API call fails (status, connection, timeout).
        """
        import openai  # noqa: PLC0415 - the SDK is imported when first used

        request = self.build_request(system_prompt, tools, history)
        self.last_request = request
        self.last_chat_request = ChatRequest(system_prompt, tuple(tools), tuple(history))
        try:
            response = await self._client.chat.completions.create(**request)
        except openai.APIError as exc:
            raise _translate(exc) from exc
        return _OpenAIStream(response, streaming=self._stream)


def _translate(exc: openai.APIError, *, streaming: bool = False) -> ChatProviderError:
    status = getattr(exc, "status_code", None)
    where = "the response stream broke: " if streaming else ""
    return ChatProviderError(
        f"{where}{type(exc).__name__}: {exc.message}",
        status_code=status if isinstance(status, int) else None,
    )


class _OpenAIStream:
    def __init__(self, response: Any, *, streaming: bool) -> None:
        self._response = response
        self._streaming = streaming
        self._id: str | None = None
        self._finish_reason: str | None = None
        self._usage: Usage | None = None

    @property
    def id(self) -> str | None:
        return self._id

    @property
    def finish_reason(self) -> str | None:
        return self._finish_reason

    @property
    def usage(self) -> Usage | None:
        return self._usage

    async def __aiter__(self) -> AsyncIterator[StreamedPart]:
        if not self._streaming:
            for part in self._whole(self._response):
                yield part
            return
        import openai  # noqa: PLC0415 - already loaded by generate()

        try:
            async for chunk in self._response:
                for part in self._chunk(chunk):
                    yield part
        except openai.APIError as exc:
            raise _translate(exc, streaming=True) from exc
        except Exception as exc:  # malformed event, transport error: the stream broke
            raise broken_stream(exc) from exc
        if self._finish_reason is None:
            raise ChatProviderError(
                "the response stream ended before the model finished (no finish_reason): "
                "the connection was cut"
            )

    def _whole(self, completion: Any) -> list[StreamedPart]:
        self._id = completion.id
        self._usage = _usage(completion.usage)
        if not completion.choices:
            raise ChatProviderError("the API returned a completion without choices")
        choice = completion.choices[0]
        self._finish_reason = choice.finish_reason
        parts: list[StreamedPart] = []
        if choice.message.content:
            parts.append(TextPart(choice.message.content))
        for index, call in enumerate(choice.message.tool_calls or ()):
            function = getattr(call, "function", None)
            parts.append(
                ToolCallPart(
                    index=index,
                    id=call.id,
                    name=getattr(function, "name", None),
                    arguments=getattr(function, "arguments", None) or "",
                )
            )
        return parts

    def _chunk(self, chunk: Any) -> list[StreamedPart]:
        self._id = self._id or chunk.id
        if chunk.usage is not None:
            self._usage = _usage(chunk.usage)
        parts: list[StreamedPart] = []
        for choice in chunk.choices or ():
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta is not None and delta.content:
                parts.append(TextPart(delta.content))
            for call in (delta.tool_calls if delta is not None else None) or ():
                function = call.function
                parts.append(
                    ToolCallPart(
                        index=call.index,
                        id=call.id,
                        name=function.name if function is not None else None,
                        arguments=(function.arguments if function is not None else None) or "",
                    )
                )
            if choice.finish_reason:
                self._finish_reason = choice.finish_reason
        return parts

    async def aclose(self) -> None:
        close = getattr(self._response, "close", None)
        if self._streaming and close is not None:
            await close()


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cached_input_tokens=cached,
    )

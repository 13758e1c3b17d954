""":class:`OpenAIChatProvider`: OpenAI Chat Completions through the official SDK.

Streaming by default: ``delta.content`` becomes :class:`TextPart`, ``delta.tool_calls``
fragments become :class:`ToolCallPart` (assembled by ``step``), and usage is captured
from the final chunk (``stream_options={"include_usage": True}``). Works with any
OpenAI-compatible endpoint (``AsyncOpenAI(base_url=...)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ptcbox.agent_glue._messages import Message, Usage
from ptcbox.agent_glue._provider import (
    ChatProviderError,
    ChatRequest,
    StreamedPart,
    TextPart,
    ToolCallPart,
    require_async_client,
)
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.agent_glue._sdk_stream import SdkStream, translate_api_error

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
            raise translate_api_error(exc) from exc
        return _OpenAIStream(response, streaming=self._stream)


class _OpenAIStream(SdkStream):
    cut_message = (
        "the response stream ended before the model finished (no finish_reason): "
        "the connection was cut"
    )

    def _api_error(self) -> type[Exception]:
        import openai  # noqa: PLC0415 - already loaded by generate()

        return openai.APIError

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

    def _event(self, chunk: Any) -> list[StreamedPart]:
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

""":class:`OpenAIResponsesProvider`: OpenAI's Responses API through the official SDK.

Streaming by default: ``response.output_text.delta`` becomes :class:`TextPart`; a
``function_call`` output item becomes :class:`ToolCallPart` fragments (its ``call_id`` and
name from ``response.output_item.added``, its arguments from
``response.function_call_arguments.delta``), assembled by ``step``. The history goes back
as input items: messages, ``function_call`` items and ``function_call_output`` items.
A response that is ``incomplete`` for ``max_output_tokens`` reports finish reason
``"length"`` (``step`` then asks the model to retry complete); otherwise ``"tool_calls"``
when the response called tools, else ``"stop"``. Requests are not stored (``store=False``)
unless asked, since the full history is sent each turn.
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

__all__ = ["OpenAIResponsesProvider", "to_responses_input"]


class OpenAIResponsesProvider:
    """A :class:`ChatProvider` over ``client.responses.create``.

    Args:
        client: An ``openai.AsyncOpenAI`` client (any ``base_url``).
        model: The model name.
        stream: Stream the response (default) or make one non-streaming request.
        max_tokens: Output-token limit per turn (``max_output_tokens``), or ``None``.
        temperature: Sampling temperature, or ``None`` for the API default.
        parallel_tool_calls: Allow several tool calls per turn; ``None`` for the default.
        store: Let the API store the responses (``store``); off by default.
        extra_body: More request fields, merged into every request.

    The last request is kept in :attr:`last_request` (the keyword arguments given to
    the SDK) and as a :class:`ChatRequest` in :attr:`last_chat_request`.

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
        store: bool = False,
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
        self._store = store
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
        """Return the keyword arguments for ``responses.create``.

        Returns:
            ``model``, ``input`` (see :func:`to_responses_input`), ``instructions`` when
            there is a system prompt, ``tools`` when any, ``store``, the configured
            options, and ``stream`` when streaming.
        """
        body: dict[str, Any] = {
            "model": self._model,
            "input": to_responses_input(history),
            "store": self._store,
        }
        if system_prompt:
            body["instructions"] = system_prompt
        if tools:
            body["tools"] = [tool.to_format("responses") for tool in tools]
            if self._parallel_tool_calls is not None:
                body["parallel_tool_calls"] = self._parallel_tool_calls
        if self._max_tokens is not None:
            body["max_output_tokens"] = self._max_tokens
        if self._temperature is not None:
            body["temperature"] = self._temperature
        if self._stream:
            body["stream"] = True
        if self._extra_body:
            body["extra_body"] = dict(self._extra_body)
        return body

    async def generate(
        self, system_prompt: str, tools: Sequence[ToolDefinition], history: Sequence[Message]
    ) -> _ResponsesStream:
        """Send the request and return the streaming message.

        Raises:
            ChatProviderError: If the API call fails (status, connection, timeout).
        """
        import openai  # noqa: PLC0415 - loaded by __init__ already

        request = self.build_request(system_prompt, tools, history)
        self.last_request = request
        self.last_chat_request = ChatRequest(system_prompt, tuple(tools), tuple(history))
        try:
            response = await self._client.responses.create(**request)
        except openai.APIError as exc:
            raise translate_api_error(exc) from exc
        return _ResponsesStream(response, streaming=self._stream)


def to_responses_input(history: Sequence[Message]) -> list[dict[str, Any]]:
    """Convert a history to Responses API input items.

    Messages become ``{"role", "content"}`` items, each assistant tool call a
    ``function_call`` item (after the assistant's text), each tool message a
    ``function_call_output`` item.
    """
    items: list[dict[str, Any]] = []
    for message in history:
        if message.role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id or "",
                    "output": message.content,
                }
            )
            continue
        if message.content or message.role != "assistant":
            items.append({"role": message.role, "content": message.content})
        items.extend(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
            for call in message.tool_calls
        )
    return items


class _ResponsesStream(SdkStream):
    cut_message = "the response stream ended before response.completed: the connection was cut"

    def __init__(self, response: Any, *, streaming: bool) -> None:
        super().__init__(response, streaming=streaming)
        self._calls: dict[int, bool] = {}  # output index of a function call -> args seen

    def _api_error(self) -> type[Exception]:
        import openai  # noqa: PLC0415 - loaded by the provider already

        return openai.APIError

    def _whole(self, response: Any) -> list[StreamedPart]:
        self._finish(response)
        parts: list[StreamedPart] = []
        for index, item in enumerate(response.output or ()):
            if item.type == "message":
                text = "".join(
                    getattr(c, "text", "") for c in item.content or () if c.type == "output_text"
                )
                if text:
                    parts.append(TextPart(text))
            elif item.type == "function_call":
                parts.append(ToolCallPart(index, item.call_id, item.name, item.arguments or ""))
        return parts

    def _event(self, event: Any) -> list[StreamedPart]:
        kind = event.type
        if kind == "response.created":
            self._id = event.response.id
        elif kind == "response.output_item.added" and event.item.type == "function_call":
            item = event.item
            self._calls[event.output_index] = bool(item.arguments)
            return [ToolCallPart(event.output_index, item.call_id, item.name, item.arguments or "")]
        elif kind == "response.function_call_arguments.delta":
            self._calls[event.output_index] = True
            return [ToolCallPart(event.output_index, arguments=event.delta)]
        elif kind == "response.function_call_arguments.done":
            if not self._calls.get(event.output_index, True):  # no deltas were streamed
                self._calls[event.output_index] = True
                return [ToolCallPart(event.output_index, arguments=event.arguments)]
        elif kind == "response.output_text.delta":
            return [TextPart(event.delta)]
        elif kind in ("response.completed", "response.incomplete"):
            self._finish(event.response)
        elif kind == "response.failed":
            error = getattr(event.response, "error", None)
            raise ChatProviderError(f"the response failed: {getattr(error, 'message', error)}")
        elif kind == "error":
            raise ChatProviderError(f"the API sent an error event: {event.message}")
        return []

    def _finish(self, response: Any) -> None:
        self._id = response.id
        self._usage = _usage(response.usage)
        details = getattr(response, "incomplete_details", None)
        reason = getattr(details, "reason", None)
        if response.status == "incomplete":
            self._finish_reason = "length" if reason == "max_output_tokens" else str(reason)
        elif any(item.type == "function_call" for item in response.output or ()):
            self._finish_reason = "tool_calls"
        else:
            self._finish_reason = "stop"


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    details = getattr(usage, "input_tokens_details", None)
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cached_input_tokens=getattr(details, "cached_tokens", None) or 0,
    )

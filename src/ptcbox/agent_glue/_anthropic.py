""":class:`AnthropicProvider`: Anthropic's Messages API through the official SDK.

Streaming by default: ``text_delta`` becomes :class:`TextPart`; a ``tool_use`` block
becomes :class:`ToolCallPart` fragments (its id and name from ``content_block_start``,
its input from ``input_json_delta``), assembled by ``step`` (parallel tool use: several
blocks per turn). ``stop_reason`` maps to the Chat Completions vocabulary ``step`` reads
(``max_tokens`` -> ``"length"``, which makes ``step`` ask the model to retry complete).
Tool results go back as ``tool_result`` blocks with ``is_error``, all results of a turn in
one user message. Prompt caching is on by default: ``cache_control`` breakpoints on the
last tool and the system prompt (the ``run_code`` description with its stubs is the
large, stable prefix); usage reports cache reads and writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ptcbox.agent_glue._messages import Message, Usage
from ptcbox.agent_glue._provider import (
    ChatRequest,
    StreamedPart,
    TextPart,
    ToolCallPart,
    require_async_client,
)
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.agent_glue._sdk_stream import SdkStream, translate_api_error

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicProvider", "to_anthropic_messages"]

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
_EPHEMERAL = {"type": "ephemeral"}


class AnthropicProvider:
    """A :class:`ChatProvider` over ``client.messages.create``.

    Args:
        client: An ``anthropic.AsyncAnthropic`` client (any ``base_url``).
        model: The model name, e.g. ``"claude-sonnet-4-5"``.
        max_tokens: Output-token limit per turn (the API requires one).
        stream: Stream the response (default) or make one non-streaming request.
        temperature: Sampling temperature, or ``None`` for the API default.
        parallel_tool_calls: ``False`` sends ``disable_parallel_tool_use``; ``None``
            leaves the API default (parallel tool use allowed).
        cache_prompt: Put ``cache_control`` breakpoints on the last tool and on the
            system prompt, so repeated turns read that prefix from the prompt cache.
        extra_body: More request fields, merged into every request.

    The last request is kept in :attr:`last_request` (the keyword arguments given to
    the SDK) and as a :class:`ChatRequest` in :attr:`last_chat_request`.

    Raises:
        TypeError: If ``client`` is the sync ``anthropic.Anthropic``.
        ImportError: If the ``anthropic`` SDK is not installed (``pip install
            'ptcbox[anthropic]'``).
    """

    provider_name: ClassVar[str] = "anthropic"
    """The ``gen_ai.provider.name`` of this provider's spans."""

    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        model: str,
        *,
        max_tokens: int = 4096,
        stream: bool = True,
        temperature: float | None = None,
        parallel_tool_calls: bool | None = None,
        cache_prompt: bool = True,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        import anthropic  # noqa: PLC0415 - an optional dependency, loaded when used

        require_async_client(
            client,
            provider=type(self).__name__,
            sync_types=(anthropic.Anthropic,),
            wanted="anthropic.AsyncAnthropic",
        )
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        self._client = client
        self._model = model
        self._max_tokens = max_tokens
        self._stream = stream
        self._temperature = temperature
        self._parallel_tool_calls = parallel_tool_calls
        self._cache_prompt = cache_prompt
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
        """Return the keyword arguments for ``messages.create``.

        Returns:
            ``model``, ``max_tokens``, ``messages``, ``system`` (text blocks; system
            messages inside the history are appended to it) and ``tools`` when any, the
            configured options, and ``stream`` when streaming.
        """
        extra_system, messages = to_anthropic_messages(history)
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "messages": messages,
        }
        system = [text for text in (system_prompt, *extra_system) if text]
        if system:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": "\n\n".join(system)}]
            if self._cache_prompt:
                blocks[-1]["cache_control"] = dict(_EPHEMERAL)
            body["system"] = blocks
        if tools:
            specs = [tool.to_format("anthropic") for tool in tools]
            if self._cache_prompt:
                specs[-1]["cache_control"] = dict(_EPHEMERAL)
            body["tools"] = specs
            if self._parallel_tool_calls is False:
                body["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}
        if self._temperature is not None:
            body["temperature"] = self._temperature
        if self._stream:
            body["stream"] = True
        if self._extra_body:
            body["extra_body"] = dict(self._extra_body)
        return body

    async def generate(
        self, system_prompt: str, tools: Sequence[ToolDefinition], history: Sequence[Message]
    ) -> _AnthropicStream:
        """Send the request and return the streaming message.

        Raises:
            ChatProviderError: If the API call fails (status, connection, timeout).
        """
        import anthropic  # noqa: PLC0415 - loaded by __init__ already

        request = self.build_request(system_prompt, tools, history)
        self.last_request = request
        self.last_chat_request = ChatRequest(system_prompt, tuple(tools), tuple(history))
        try:
            response = await self._client.messages.create(**request)
        except anthropic.APIError as exc:
            raise translate_api_error(exc) from exc
        return _AnthropicStream(response, streaming=self._stream)


def to_anthropic_messages(history: Sequence[Message]) -> tuple[list[str], list[dict[str, Any]]]:
    """Convert a history to Messages API ``messages``.

    Tool messages become ``tool_result`` blocks (with ``is_error``) in the user message
    after the assistant turn, consecutive messages of one role are merged (the API wants
    turns to alternate), assistant tool calls become ``tool_use`` blocks (arguments that
    are not a JSON object are sent as ``{}``; their results already told the model).

    Returns:
        The texts of system messages found in the history, and the messages.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in history:
        if message.role == "system":
            system.append(message.content)
        elif message.role == "assistant":
            content: list[dict[str, Any]] = (
                [{"type": "text", "text": message.content}] if message.content else []
            )
            content.extend(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call)}
                for call in message.tool_calls
            )
            add("assistant", content)
        elif message.role == "tool":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content,
            }
            if message.is_error:
                result["is_error"] = True
            add("user", [result])
        elif message.content:
            add("user", [{"type": "text", "text": message.content}])
    return system, out


def _input(call: Any) -> dict[str, Any]:
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class _AnthropicStream(SdkStream):
    cut_message = "the response stream ended before message_stop: the connection was cut"

    def __init__(self, response: Any, *, streaming: bool) -> None:
        super().__init__(response, streaming=streaming)
        self._counts: dict[str, int] = {}
        self._tools: dict[int, bool] = {}  # tool_use block index -> any input streamed
        self._stopped = False

    @property
    def usage(self) -> Usage | None:
        return _usage(self._counts) if self._counts else None

    def _api_error(self) -> type[Exception]:
        import anthropic  # noqa: PLC0415 - loaded by the provider already

        return anthropic.APIError

    def _complete(self) -> bool:
        return self._stopped

    def _whole(self, message: Any) -> list[StreamedPart]:
        self._id = message.id
        self._record_usage(message.usage)
        self._finish_reason = _finish(message.stop_reason)
        parts: list[StreamedPart] = []
        for index, block in enumerate(message.content or ()):
            if block.type == "text" and block.text:
                parts.append(TextPart(block.text))
            elif block.type == "tool_use":
                arguments = json.dumps(block.input if block.input is not None else {})
                parts.append(ToolCallPart(index, block.id, block.name, arguments))
        return parts

    def _event(self, event: Any) -> list[StreamedPart]:
        kind = event.type
        if kind == "message_start":
            self._id = event.message.id
            self._record_usage(event.message.usage)
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                self._tools[event.index] = False
                return [ToolCallPart(event.index, block.id, block.name)]
            if block.type == "text" and block.text:
                return [TextPart(block.text)]
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                return [TextPart(delta.text)]
            if delta.type == "input_json_delta" and event.index in self._tools:
                self._tools[event.index] = self._tools[event.index] or bool(delta.partial_json)
                return [ToolCallPart(event.index, arguments=delta.partial_json)]
        elif kind == "content_block_stop":
            if self._tools.get(event.index) is False:  # a call without arguments
                return [ToolCallPart(event.index, arguments="{}")]
        elif kind == "message_delta":
            self._finish_reason = _finish(event.delta.stop_reason)
            self._record_usage(event.usage)
        elif kind == "message_stop":
            self._stopped = True
        return []

    def _record_usage(self, usage: Any) -> None:
        if usage is None:
            return
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ):
            value = getattr(usage, key, None)
            if isinstance(value, int):
                self._counts[key] = value


def _finish(stop_reason: str | None) -> str | None:
    if stop_reason is None:
        return None
    return _FINISH.get(stop_reason, stop_reason)


def _usage(counts: Mapping[str, int]) -> Usage:
    written = counts.get("cache_creation_input_tokens", 0)
    read = counts.get("cache_read_input_tokens", 0)
    return Usage(
        input_tokens=counts.get("input_tokens", 0) + written + read,
        output_tokens=counts.get("output_tokens", 0),
        cached_input_tokens=read,
        cache_write_input_tokens=written,
    )

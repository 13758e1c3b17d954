"""The chat-provider contract a step talks to (after kosong's ``ChatProvider``).

A provider turns ``(system_prompt, tools, history)`` into a :class:`StreamedMessage`: an
async iterator of :data:`StreamedPart` deltas (text and tool-call fragments) that also
reports the message id, the finish reason and the token usage once the stream ends.
Design source: MoonshotAI/kosong (``ChatProvider.generate`` -> ``StreamedMessage``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ptcbox.agent_glue._messages import Message, Usage
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.agent_glue._tokens import count_request_tokens
from ptcbox.errors import PtcboxError

__all__ = [
    "ChatProvider",
    "ChatProviderError",
    "ChatRequest",
    "StreamedMessage",
    "StreamedPart",
    "TextPart",
    "ToolCallPart",
    "broken_stream",
    "require_async_client",
]


class ChatProviderError(PtcboxError):
    """The model API failed (connection, HTTP status, malformed or empty response).

    Args:
        message: What went wrong.
        status_code: The HTTP status, when the API answered with one.
    """

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        self.message = message
        self.status_code = status_code
        super().__init__(message if status_code is None else f"{message} (HTTP {status_code})")


def require_async_client(
    client: object, *, provider: str, sync_types: tuple[type, ...], wanted: str
) -> None:
    """Refuse a sync SDK client where an async one is needed, with the fix in the message.

    Without this check the first request fails deep inside ``step`` with ``TypeError:
    object Stream can't be used in 'await' expression``.

    Args:
        client: The client given to a provider.
        provider: The provider's class name, for the message.
        sync_types: The SDK's sync client classes (``openai.OpenAI``, ...).
        wanted: The async class to name, e.g. ``"openai.AsyncOpenAI"``.

    Raises:
        TypeError: If ``client`` is an instance of one of ``sync_types``.
    """
    if isinstance(client, sync_types):
        kind = f"{type(client).__module__.split('.')[0]}.{type(client).__name__}"
        raise TypeError(
            f"{provider} needs an async client ({wanted}), got the sync {kind}: its calls "
            f"block instead of returning awaitables. Create the client as {wanted}(...) with "
            "the same arguments; to call an agent from sync code, use Agent.run_sync()."
        )


def broken_stream(exc: BaseException) -> ChatProviderError:
    """The error for a response stream that broke (cut connection, malformed event).

    Args:
        exc: What the SDK or the transport raised while the stream was read.

    Returns:
        A :class:`ChatProviderError` naming the cause.
    """
    return ChatProviderError(f"the response stream broke: {type(exc).__name__}: {exc}")


@dataclass(frozen=True, slots=True)
class TextPart:
    """A piece of the assistant's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A fragment of one tool call, as streamed (Chat Completions ``delta.tool_calls``).

    Attributes:
        index: Position of the call in the turn; fragments with the same index belong
            together.
        id: The call id (usually only on the first fragment).
        name: The tool's name (usually only on the first fragment).
        arguments: The next piece of the arguments' JSON text.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


StreamedPart = TextPart | ToolCallPart
"""One streamed piece of an assistant message."""


@runtime_checkable
class StreamedMessage(Protocol):
    """One assistant message as it streams in.

    ``id``, ``finish_reason`` (``"stop"``, ``"tool_calls"``, ``"length"``, ...) and
    ``usage`` are final once iteration ends. ``aclose()`` releases the connection.
    """

    def __aiter__(self) -> AsyncIterator[StreamedPart]:
        """Iterate over the message's parts."""
        ...

    @property
    def id(self) -> str | None:
        """The message id, if the provider gave one."""
        ...

    @property
    def finish_reason(self) -> str | None:
        """Why the model stopped."""
        ...

    @property
    def usage(self) -> Usage | None:
        """Token usage of this request, if reported."""
        ...

    async def aclose(self) -> None:
        """Stop the stream and release its resources; safe to call twice."""
        ...


@runtime_checkable
class ChatProvider(Protocol):
    """A model behind an API: one call generates one assistant message."""

    @property
    def model_name(self) -> str:
        """The model's name."""
        ...

    async def generate(
        self,
        system_prompt: str,
        tools: Sequence[ToolDefinition],
        history: Sequence[Message],
    ) -> StreamedMessage:
        """Start generating the next assistant message.

        Args:
            system_prompt: The system prompt (``""`` for none).
            tools: The tools the model may call.
            history: The conversation so far (already repaired).

        Returns:
            The streaming message.

        Raises:
            ChatProviderError: If the request fails.
        """
        ...


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """Everything one model request carries, provider-neutral.

    Providers record the requests they send (``ScriptedProvider.requests``,
    ``OpenAIChatProvider.last_request``) so that token costs can be measured exactly.

    Attributes:
        system_prompt: The system prompt.
        tools: The tool definitions offered.
        messages: The history sent (after repair).
    """

    system_prompt: str
    tools: tuple[ToolDefinition, ...]
    messages: tuple[Message, ...]

    def to_openai(self, model: str) -> dict[str, Any]:
        """Return the Chat Completions request body (``model``, ``messages``, ``tools``)."""
        messages = [Message.system(self.system_prompt).to_openai()] if self.system_prompt else []
        messages.extend(message.to_openai() for message in self.messages)
        body: dict[str, Any] = {"model": model, "messages": messages}
        if self.tools:
            body["tools"] = [tool.to_format("openai") for tool in self.tools]
        return body

    @property
    def input_tokens(self) -> int:
        """Input tokens of this request (see :func:`count_request_tokens`)."""
        return count_request_tokens(self.system_prompt, self.tools, self.messages)

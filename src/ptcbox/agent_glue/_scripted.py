"""A scripted model for tests, demos and benchmarks: :class:`ScriptedProvider`.

Like httpx's ``MockTransport``, ptcbox ships its own test double. A script is a list of
canned assistant turns; a turn may also be a function of the request, so a scripted
"model" can read tool results and answer from them. Usage is computed with the
``o200k_base`` encoding, so token-cost benchmarks can run on a scripted model.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from ptcbox.agent_glue._messages import Message, ToolCall, Usage
from ptcbox.agent_glue._provider import (
    ChatProviderError,
    ChatRequest,
    StreamedPart,
    TextPart,
    ToolCallPart,
)
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.projections._stubs import count_tokens

__all__ = [
    "ScriptItem",
    "ScriptedError",
    "ScriptedProvider",
    "ScriptedStreamFault",
    "ScriptedTurn",
    "StreamFault",
]

CallSpec: TypeAlias = "ToolCall | tuple[str, str | Mapping[str, Any]]"


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """One canned assistant turn.

    Attributes:
        text: The assistant's text.
        tool_calls: Its tool calls: :class:`ToolCall` objects, or ``(name, arguments)``
            pairs where ``arguments`` is JSON text or a mapping (encoded as JSON). Calls
            without an id get ``call_<turn>_<n>``.
        finish_reason: Default ``"tool_calls"`` when there are calls, else ``"stop"``;
            ``"length"`` simulates a turn cut by the output-token limit.
    """

    text: str = ""
    tool_calls: Sequence[CallSpec] = ()
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class ScriptedError:
    """A scripted failure: the provider raises ``ChatProviderError`` (the scripted HTTP
    server answers with this status and an OpenAI-style error body).

    Attributes:
        message: The error message.
        status_code: The HTTP status.
    """

    message: str = "scripted failure"
    status_code: int = 500


StreamFault: TypeAlias = Literal["disconnect", "malformed", "error"]
"""How a scripted stream breaks: ``"disconnect"`` (the connection is cut mid-body),
``"malformed"`` (an event that is not JSON), ``"error"`` (an error event in the stream)."""


@dataclass(frozen=True, slots=True)
class ScriptedStreamFault:
    """A turn whose response stream breaks part-way (for provider-error tests).

    The scripted HTTP server sends ``after`` events of ``turn``'s stream, then breaks it
    as ``fault`` says; :class:`ScriptedProvider` yields ``after`` parts, then raises
    ``ChatProviderError``. A non-streaming request gets an HTTP 500 instead.

    Attributes:
        turn: The turn that starts to stream.
        after: Events (server) or parts (provider) sent before the fault.
        fault: How it breaks (see :data:`StreamFault`).
    """

    turn: ScriptedTurn
    after: int = 2
    fault: StreamFault = "disconnect"


ScriptItem: TypeAlias = (
    ScriptedTurn
    | ScriptedError
    | ScriptedStreamFault
    | str
    | Callable[[ChatRequest], ScriptedTurn | ScriptedError | str]
)
"""A turn, an error, a broken stream, plain text (a final answer), or a function of the
request."""


@dataclass(frozen=True, slots=True)
class ResolvedTurn:
    """A scripted turn with ids assigned and usage computed (internal, shared with the
    scripted HTTP server)."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str
    usage: Usage
    id: str
    fault: ScriptedStreamFault | None = None


@dataclass
class Script:
    """A thread-safe cursor over script items."""

    items: list[Any]
    position: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, request: ChatRequest) -> ResolvedTurn | ScriptedError:
        """Resolve the next item for ``request``.

        Raises:
            ChatProviderError: When the script has no turns left.
        """
        with self.lock:
            if self.position >= len(self.items):
                raise ChatProviderError(
                    f"the script has no turn left (it had {len(self.items)}); the model was "
                    f"asked for turn {self.position + 1}"
                )
            item = self.items[self.position]
            self.position += 1
            number = self.position
        if callable(item) and not isinstance(
            item, ScriptedTurn | ScriptedError | ScriptedStreamFault
        ):
            item = item(request)
        if isinstance(item, ScriptedError):
            return item
        fault = item if isinstance(item, ScriptedStreamFault) else None
        if fault is not None:
            item = fault.turn
        if isinstance(item, str):
            item = ScriptedTurn(text=item)
        if not isinstance(item, ScriptedTurn):
            raise TypeError(f"a script item must be a ScriptedTurn, got {type(item).__name__}")
        calls = tuple(_call(spec, number, i) for i, spec in enumerate(item.tool_calls, 1))
        output = count_tokens(item.text) + sum(
            count_tokens(c.name) + count_tokens(c.arguments) for c in calls
        )
        return ResolvedTurn(
            text=item.text,
            tool_calls=calls,
            finish_reason=item.finish_reason or ("tool_calls" if calls else "stop"),
            usage=Usage(input_tokens=request.input_tokens, output_tokens=output),
            id=f"scripted-{number}",
            fault=fault,
        )

    @property
    def remaining(self) -> int:
        """Turns not used yet."""
        with self.lock:
            return len(self.items) - self.position


def _call(spec: CallSpec, turn: int, number: int) -> ToolCall:
    if isinstance(spec, ToolCall):
        return spec if spec.id else ToolCall(f"call_{turn}_{number}", spec.name, spec.arguments)
    name, arguments = spec
    text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return ToolCall(f"call_{turn}_{number}", name, text)


def turn_parts(turn: ResolvedTurn, chunk_chars: int) -> list[StreamedPart]:
    """Split a turn into streamed parts of at most ``chunk_chars`` characters."""
    parts: list[StreamedPart] = [
        TextPart(turn.text[i : i + chunk_chars]) for i in range(0, len(turn.text), chunk_chars)
    ]
    for index, call in enumerate(turn.tool_calls):
        parts.append(ToolCallPart(index=index, id=call.id, name=call.name))
        args = call.arguments
        parts.extend(
            ToolCallPart(index=index, arguments=args[i : i + chunk_chars])
            for i in range(0, len(args), chunk_chars)
        )
    return parts


class ScriptedProvider:
    """A :class:`ChatProvider` that plays a script of assistant turns.

    Args:
        turns: The script: :class:`ScriptedTurn`, plain text (a final answer),
            :class:`ScriptedError`, :class:`ScriptedStreamFault` (parts, then a
            ``ChatProviderError``), or a function ``(ChatRequest) -> turn``.
        model_name: Reported as the model's name.
        chunk_chars: Streamed parts carry at most this many characters.
        delay: Seconds to wait before each streamed part (to exercise streaming).

    Every request is recorded in :attr:`requests` (a :class:`ChatRequest` with
    ``input_tokens``); usage is ``input_tokens`` of the request and ``o200k_base``
    tokens of the turn's text, tool names and arguments.
    """

    provider_name: ClassVar[str] = "ptcbox.scripted"
    """The ``gen_ai.provider.name`` of this provider's spans."""

    def __init__(
        self,
        turns: Iterable[ScriptItem],
        *,
        model_name: str = "scripted",
        chunk_chars: int = 24,
        delay: float = 0.0,
    ) -> None:
        if chunk_chars < 1:
            raise ValueError("chunk_chars must be at least 1")
        self._script = Script(list(turns))
        self._model_name = model_name
        self._chunk_chars = chunk_chars
        self._delay = delay
        self.requests: list[ChatRequest] = []

    @property
    def model_name(self) -> str:
        """The model's name."""
        return self._model_name

    @property
    def remaining(self) -> int:
        """Turns not played yet."""
        return self._script.remaining

    async def generate(
        self, system_prompt: str, tools: Sequence[ToolDefinition], history: Sequence[Message]
    ) -> _ScriptedStream:
        """Play the next turn.

        Raises:
            ChatProviderError: For a :class:`ScriptedError` item or an exhausted script.
        """
        request = ChatRequest(system_prompt, tuple(tools), tuple(history))
        self.requests.append(request)
        turn = self._script.next(request)
        if isinstance(turn, ScriptedError):
            raise ChatProviderError(turn.message, status_code=turn.status_code)
        return _ScriptedStream(turn, turn_parts(turn, self._chunk_chars), self._delay)


class _ScriptedStream:
    def __init__(self, turn: ResolvedTurn, parts: list[StreamedPart], delay: float) -> None:
        self._turn = turn
        self._parts = parts
        self._delay = delay
        self._done = False

    @property
    def id(self) -> str | None:
        return self._turn.id

    @property
    def finish_reason(self) -> str | None:
        return self._turn.finish_reason if self._done else None

    @property
    def usage(self) -> Usage | None:
        return self._turn.usage if self._done else None

    async def __aiter__(self) -> AsyncIterator[StreamedPart]:
        fault = self._turn.fault
        for number, part in enumerate(self._parts):
            if fault is not None and number >= fault.after:
                break
            if self._delay:
                await asyncio.sleep(self._delay)
            yield part
        if fault is not None:
            raise ChatProviderError(f"the response stream broke: scripted {fault.fault}")
        self._done = True

    async def aclose(self) -> None:
        return None

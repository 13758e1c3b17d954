"""Agent events (for UIs and logs), hook types and the result of a run.

The event and hook vocabulary follows pi-mono's agent loop (``ToolExecutionStart`` /
``Update`` / ``End``, ``TurnEnd``, ``beforeToolCall`` / ``afterToolCall``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ptcbox.agent_glue._messages import Message, ToolCall, Usage
from ptcbox.agent_glue._provider import StreamedPart
from ptcbox.agent_glue._tool_result import ToolResult

__all__ = [
    "AfterToolCall",
    "AgentEnd",
    "AgentEvent",
    "AgentRunResult",
    "AgentStart",
    "BeforeToolCall",
    "BlockToolCall",
    "MessageDelta",
    "StopReason",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "TurnEnd",
    "TurnStart",
]

StopReason = Literal["completed", "max_steps", "terminated", "interrupted", "length"]
"""Why a run ended (see :class:`AgentRunResult`)."""


@dataclass(frozen=True, slots=True)
class AgentStart:
    """A run started.

    Attributes:
        prompt: The user prompt of the run (``None`` to continue the conversation).
    """

    prompt: str | None


@dataclass(frozen=True, slots=True)
class TurnStart:
    """A model turn started.

    Attributes:
        turn: The turn's number in this run, from 1.
    """

    turn: int


@dataclass(frozen=True, slots=True)
class MessageDelta:
    """A streamed piece of the assistant message (text or a tool-call fragment).

    Attributes:
        turn: The turn's number.
        part: The part.
    """

    turn: int
    part: StreamedPart


@dataclass(frozen=True, slots=True)
class ToolExecutionStart:
    """A tool call started (after its arguments were complete).

    Attributes:
        tool_call: The call as the model made it.
    """

    tool_call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolExecutionUpdate:
    """Progress a running tool reported through ``context.report(partial)``.

    For ``run_code``, ``partial`` is ``{"stream": "stdout"|"stderr", "text": ...}`` for
    output chunks and ``{"tool_call": {...}}`` for each finished call the code made.

    Attributes:
        tool_call: The call that reported.
        partial: What it reported.
    """

    tool_call: ToolCall
    partial: Any


@dataclass(frozen=True, slots=True)
class ToolExecutionEnd:
    """A tool call ended (returned, failed, was blocked or interrupted).

    Attributes:
        tool_call: The call as the model made it.
        result: Its result (after the ``after_tool_call`` hook).
        is_error: ``result.is_error``.
    """

    tool_call: ToolCall
    result: ToolResult
    is_error: bool


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """A turn ended and was added to the history.

    Attributes:
        turn: The turn's number.
        message: The assistant message.
        tool_results: Its tool results, in call order.
        usage: Token usage of the turn's request, if reported.
    """

    turn: int
    message: Message
    tool_results: tuple[ToolResult, ...]
    usage: Usage | None


@dataclass(frozen=True, slots=True)
class AgentRunResult:
    """What one :meth:`Agent.run` did.

    Attributes:
        messages: The messages the run added to the history (prompt included).
        final_text: The text of the last assistant message.
        usage: Token usage summed over the run's requests.
        steps: Model requests made.
        stop_reason: ``"completed"`` (a turn without tool calls), ``"max_steps"``,
            ``"terminated"`` (a tool asked to stop), ``"interrupted"``, or
            ``"length"`` (the final text was cut by the output-token limit).
    """

    messages: tuple[Message, ...]
    final_text: str
    usage: Usage
    steps: int
    stop_reason: StopReason


@dataclass(frozen=True, slots=True)
class AgentEnd:
    """A run ended.

    Attributes:
        result: The run's result.
    """

    result: AgentRunResult


AgentEvent: TypeAlias = (
    AgentStart
    | TurnStart
    | MessageDelta
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | TurnEnd
    | AgentEnd
)
"""Any event an :class:`Agent` emits, in order: ``AgentStart``; per turn ``TurnStart``,
``MessageDelta``s, ``ToolExecutionStart`` / ``Update`` / ``End`` per call, ``TurnEnd``;
finally ``AgentEnd``."""


@dataclass(frozen=True, slots=True)
class BlockToolCall:
    """Returned by a ``before_tool_call`` hook to refuse a call.

    Attributes:
        reason: Why; the model reads ``"tool call blocked: <reason>"``.
    """

    reason: str


BeforeToolCall: TypeAlias = Callable[
    [ToolCall], "ToolCall | BlockToolCall | Awaitable[ToolCall | BlockToolCall | None] | None"
]
"""``before_tool_call(call)``: ``None`` to proceed, a :class:`BlockToolCall` to refuse, or
a :class:`ToolCall` (same id) with rewritten arguments. Sync or async."""

AfterToolCall: TypeAlias = Callable[
    [ToolCall, ToolResult], "ToolResult | Awaitable[ToolResult | None] | None"
]
"""``after_tool_call(call, result)``: ``None`` to keep the result, or a replacement."""

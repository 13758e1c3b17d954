"""Tool-history repair: make a conversation valid to send again (case B28).

Model APIs reject a history in which an assistant tool call has no result, a result
answers no call, or results come out of order. That happens after an interrupt, a crash
between a tool call and its result, or careless history editing.
:func:`repair_tool_history` fixes every such history the same way, and ``step`` applies
it before every request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ptcbox.agent_glue._messages import Message
from ptcbox.agent_glue._tool_result import INTERRUPTED

__all__ = ["ToolHistoryRepair", "repair_tool_history"]


@dataclass(frozen=True, slots=True)
class ToolHistoryRepair:
    """The outcome of :func:`repair_tool_history`.

    Attributes:
        messages: The repaired history.
        changed: ``True`` when ``messages`` differs from the input.
        synthesized: Error results added for calls that had none.
        dropped_orphans: Tool results dropped because they answer no call of their turn.
        dropped_duplicates: Second and later results for the same call, dropped.
        reordered: Results moved to follow their turn's call order.
    """

    messages: tuple[Message, ...]
    changed: bool = False
    synthesized: int = 0
    dropped_orphans: int = 0
    dropped_duplicates: int = 0
    reordered: int = 0


def repair_tool_history(messages: Sequence[Message | Mapping[str, Any]]) -> ToolHistoryRepair:
    """Return a history in which every tool call has exactly one result, in call order.

    Rules, per assistant message with tool calls (a *turn*): the turn's results are the
    tool messages after it and before the next assistant message. Each call gets the
    first result with its id (later ones are dropped as duplicates); results for ids the
    turn did not call are dropped as orphans (so an id reused in different turns is
    matched to its own turn); a call without a result gets an ``is_error`` result
    ``"Tool call interrupted by user"``. Results are placed right after the assistant
    message in call order; user or system messages found among them follow the results.
    Tool messages before any such turn are orphans. The input is never modified.

    Args:
        messages: The history, as :class:`Message` objects or Chat Completions dicts.

    Returns:
        The repaired history and counts of what changed.

    Raises:
        ValueError: If a dict has an unknown role.
    """
    source = [m if isinstance(m, Message) else Message.from_openai(m) for m in messages]
    out: list[Message] = []
    counts = {"synthesized": 0, "orphans": 0, "duplicates": 0, "reordered": 0}
    index = 0
    while index < len(source):
        message = source[index]
        index += 1
        if message.role == "tool":
            counts["orphans"] += 1
            continue
        out.append(message)
        if message.role != "assistant" or not message.tool_calls:
            continue
        results: list[Message] = []
        others: list[Message] = []
        while index < len(source) and source[index].role != "assistant":
            (results if source[index].role == "tool" else others).append(source[index])
            index += 1
        out.extend(_answer_turn(message, results, counts))
        out.extend(others)
    return ToolHistoryRepair(
        messages=tuple(out),
        changed=out != source,
        synthesized=counts["synthesized"],
        dropped_orphans=counts["orphans"],
        dropped_duplicates=counts["duplicates"],
        reordered=counts["reordered"],
    )


def _answer_turn(
    assistant: Message, results: list[Message], counts: dict[str, int]
) -> list[Message]:
    wanted = {call.id for call in assistant.tool_calls}
    found: dict[str, Message] = {}
    arrival: list[str] = []
    for result in results:
        call_id = result.tool_call_id or ""
        if call_id not in wanted:
            counts["orphans"] += 1
        elif call_id in found:
            counts["duplicates"] += 1
        else:
            found[call_id] = result
            arrival.append(call_id)
    expected = [call.id for call in assistant.tool_calls if call.id in found]
    expected = list(dict.fromkeys(expected))
    counts["reordered"] += sum(
        1 for got, want in zip(arrival, expected, strict=True) if got != want
    )
    answered: list[Message] = []
    for call in assistant.tool_calls:
        found_result = found.get(call.id)
        if found_result is None:
            counts["synthesized"] += 1
            found_result = Message.tool(call.id, INTERRUPTED, name=call.name or None, is_error=True)
        answered.append(found_result)
    return answered

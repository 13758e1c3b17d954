"""What the scripted HTTP server needs to speak one model API (a *wire*).

Each API module (``_wire_chat``, ``_wire_responses``, ``_wire_anthropic``) builds one
:class:`Wire`: how to read a request body as a :class:`ChatRequest`, how to answer with a
whole response or a stream of server-sent events, and how its error bodies look.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ptcbox.agent_glue._messages import Usage
from ptcbox.agent_glue._provider import ChatRequest
from ptcbox.agent_glue._scripted import ResolvedTurn

__all__ = ["Event", "Wire", "same_usage"]

Event = tuple[str | None, dict[str, Any]]
"""One server-sent event: its ``event:`` name (``None`` for none) and its JSON data."""


def same_usage(body: Mapping[str, Any], usage: Usage, cache: set[str]) -> Usage:
    """The default usage hook: the scripted turn's usage as it is."""
    return usage


@dataclass(frozen=True, slots=True)
class Wire:
    """One model API as the scripted server speaks it.

    Attributes:
        route: The path suffix it answers (``"/chat/completions"``, ...).
        parse: Request body -> :class:`ChatRequest` (what the script functions see).
        whole: ``(turn, body, usage)`` -> the non-streaming response body.
        events: ``(turn, body, usage, chunk_chars)`` -> the stream's events, in order.
        error: ``(message, kind)`` -> the API's error body.
        done: Bytes written after the last event (``data: [DONE]`` for Chat Completions).
        usage: ``(body, usage, cache)`` -> the usage to report; ``cache`` is the server's
            set of prompt-cache keys (Anthropic's cache simulation uses it).
        error_event: ``message`` -> the in-stream error event of a scripted fault.
    """

    route: str
    parse: Callable[[Mapping[str, Any]], ChatRequest]
    whole: Callable[[ResolvedTurn, Mapping[str, Any], Usage], dict[str, Any]]
    events: Callable[[ResolvedTurn, Mapping[str, Any], Usage, int], Iterable[Event]]
    error: Callable[[str, str], dict[str, Any]]
    error_event: Callable[[str], Event]
    done: bytes = b""
    usage: Callable[[Mapping[str, Any], Usage, set[str]], Usage] = same_usage

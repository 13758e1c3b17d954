"""The scripted server's Anthropic Messages wire (``POST /v1/messages``).

Requests are read into the provider-neutral :class:`ChatRequest` (``tool_use`` blocks
become tool calls, ``tool_result`` blocks tool messages with ``is_error``); answers are a
``message`` object or its event stream (``message_start``, ``content_block_*`` with
``text_delta`` / ``input_json_delta``, ``message_delta``, ``message_stop``). Prompt
caching is simulated: the prefix up to the last ``cache_control`` breakpoint of the tools
and the system prompt is written to the cache on first sight and read from it after.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ptcbox.agent_glue._messages import Message, ToolCall, Usage
from ptcbox.agent_glue._provider import ChatRequest
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.agent_glue._scripted import ResolvedTurn
from ptcbox.agent_glue._tokens import count_request_tokens
from ptcbox.agent_glue._wire import Event, Wire

__all__ = ["ANTHROPIC_WIRE", "chat_request_from_anthropic"]

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        str(block.get("text", ""))
        for block in content or ()
        if isinstance(block, Mapping) and block.get("type") == "text"
    )


def chat_request_from_anthropic(body: Mapping[str, Any]) -> ChatRequest:
    """Read a Messages API request body as a :class:`ChatRequest`."""
    tools = tuple(
        ToolDefinition(
            str(spec.get("name", "")),
            str(spec.get("description", "")),
            dict(spec.get("input_schema") or {"type": "object"}),
        )
        for spec in body.get("tools") or ()
    )
    messages: list[Message] = []
    for raw in body.get("messages") or ():
        content = raw.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if raw.get("role") == "assistant":
            calls = tuple(
                ToolCall(str(b["id"]), str(b["name"]), json.dumps(b.get("input") or {}))
                for b in blocks or ()
                if b.get("type") == "tool_use"
            )
            messages.append(Message.assistant(_texts(blocks), calls))
            continue
        for block in blocks or ():
            if block.get("type") == "tool_result":
                messages.append(
                    Message.tool(
                        str(block.get("tool_use_id", "")),
                        _texts(block.get("content")),
                        is_error=bool(block.get("is_error", False)),
                    )
                )
        text = _texts(blocks)
        if text:
            messages.append(Message.user(text))
    return ChatRequest(_texts(body.get("system")), tools, tuple(messages))


def _cached_prefix(body: Mapping[str, Any]) -> tuple[str, int]:
    """The request's cacheable prefix (tools, then system, up to the last breakpoint):
    its cache key and its size in tokens, counted as the request's own tokens are."""
    tools = list(body.get("tools") or ())
    system = body.get("system")
    blocks = list(system) if isinstance(system, list) else []
    pieces = [*tools, *blocks]
    last = max((i for i, p in enumerate(pieces) if p.get("cache_control")), default=-1)
    if last < 0:
        return "", 0
    key = json.dumps(pieces[: last + 1], sort_keys=True, separators=(",", ":"))
    request = chat_request_from_anthropic(
        {"tools": tools[: last + 1], "system": blocks[: max(0, last + 1 - len(tools))]}
    )
    return key, count_request_tokens(request.system_prompt, request.tools, ())


def _cache_usage(body: Mapping[str, Any], usage: Usage, cache: set[str]) -> Usage:
    prefix, tokens = _cached_prefix(body)
    if not prefix:
        return usage
    tokens = min(tokens, usage.input_tokens)
    key = hashlib.sha256(prefix.encode()).hexdigest()
    hit = key in cache
    cache.add(key)
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_input_tokens=tokens if hit else 0,
        cache_write_input_tokens=0 if hit else tokens,
    )


def _usage(usage: Usage) -> dict[str, int]:
    cached = usage.cached_input_tokens + usage.cache_write_input_tokens
    return {
        "input_tokens": usage.input_tokens - cached,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_input_tokens,
        "cache_read_input_tokens": usage.cached_input_tokens,
    }


def _input(call: ToolCall) -> Any:
    try:
        value = json.loads(call.arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _message(turn: ResolvedTurn, body: Mapping[str, Any], usage: Usage) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    content.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call)}
        for call in turn.tool_calls
    )
    return {
        "id": turn.id,
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model") or "scripted"),
        "content": content,
        "stop_reason": _STOP.get(turn.finish_reason, turn.finish_reason),
        "stop_sequence": None,
        "usage": _usage(usage),
    }


def _events(
    turn: ResolvedTurn, body: Mapping[str, Any], usage: Usage, size: int
) -> Iterable[Event]:
    start = _message(turn, body, usage)
    start.update(content=[], stop_reason=None)
    start["usage"] = {**_usage(usage), "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    index = 0
    block: dict[str, Any]
    if turn.text:
        block = {"type": "text", "text": ""}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        for at in range(0, len(turn.text), size):
            delta = {"type": "text_delta", "text": turn.text[at : at + size]}
            yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": 0}
        index = 1
    for number, call in enumerate(turn.tool_calls, index):
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": number, "content_block": block},
        )
        for at in range(0, len(call.arguments), size):
            delta = {"type": "input_json_delta", "partial_json": call.arguments[at : at + size]}
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": number, "delta": delta},
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": number}
    stop = {"stop_reason": _STOP.get(turn.finish_reason, turn.finish_reason), "stop_sequence": None}
    yield (
        "message_delta",
        {"type": "message_delta", "delta": stop, "usage": {"output_tokens": usage.output_tokens}},
    )
    yield "message_stop", {"type": "message_stop"}


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _error_event(message: str) -> Event:
    return "error", _error(message, "overloaded_error")


ANTHROPIC_WIRE = Wire(
    route="/messages",
    parse=chat_request_from_anthropic,
    whole=_message,
    events=_events,
    error=_error,
    error_event=_error_event,
    usage=_cache_usage,
)
"""Anthropic Messages: a ``message`` object or its named SSE events."""

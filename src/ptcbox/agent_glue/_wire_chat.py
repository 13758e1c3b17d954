"""The scripted server's OpenAI Chat Completions wire (``POST /v1/chat/completions``)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from ptcbox.agent_glue._messages import Message, Usage
from ptcbox.agent_glue._provider import ChatRequest
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.agent_glue._scripted import ResolvedTurn
from ptcbox.agent_glue._wire import Event, Wire

__all__ = ["CHAT_WIRE", "chat_request_from_openai"]


def chat_request_from_openai(body: Mapping[str, Any]) -> ChatRequest:
    """Read a Chat Completions request body as a :class:`ChatRequest`.

    Leading system (or developer) messages become the system prompt.
    """
    raw = list(body.get("messages") or [])
    system: list[str] = []
    while raw and isinstance(raw[0], Mapping) and raw[0].get("role") in ("system", "developer"):
        system.append(Message.from_openai(raw.pop(0)).content)
    tools = []
    for spec in body.get("tools") or ():
        function = spec.get("function") or {}
        tools.append(
            ToolDefinition(
                str(function.get("name", "")),
                str(function.get("description", "")),
                dict(function.get("parameters") or {"type": "object"}),
            )
        )
    return ChatRequest(
        "\n\n".join(system), tuple(tools), tuple(Message.from_openai(m) for m in raw)
    )


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
    }


def _completion(turn: ResolvedTurn, body: Mapping[str, Any], usage: Usage) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [call.to_openai() for call in turn.tool_calls]
    return {
        "id": turn.id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or "scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": turn.finish_reason}],
        "usage": _usage(usage),
    }


def _chunks(
    turn: ResolvedTurn, body: Mapping[str, Any], usage: Usage, size: int
) -> Iterable[Event]:
    created = int(time.time())
    model = str(body.get("model") or "scripted")
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        return None, {
            "id": turn.id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    for start in range(0, len(turn.text), size):
        yield chunk({"content": turn.text[start : start + size]})
    for index, call in enumerate(turn.tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        for start in range(0, len(call.arguments), size):
            piece = call.arguments[start : start + size]
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, turn.finish_reason)
    if include_usage:
        yield (
            None,
            {
                "id": turn.id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": _usage(usage),
            },
        )


def _error_event(message: str) -> Event:
    return None, _error(message, "server_error")


CHAT_WIRE = Wire(
    route="/chat/completions",
    parse=chat_request_from_openai,
    whole=_completion,
    events=_chunks,
    error=_error,
    error_event=_error_event,
    done=b"data: [DONE]\n\n",
)
"""OpenAI Chat Completions: JSON or SSE chunks, ``data: [DONE]`` at the end."""

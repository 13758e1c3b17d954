"""The scripted server's OpenAI Responses wire (``POST /v1/responses``).

Requests are read into the provider-neutral :class:`ChatRequest` (``instructions`` is the
system prompt; ``function_call`` items join the assistant message before them;
``function_call_output`` items become tool messages); answers are a ``response`` object
or its event stream (``response.created``, ``response.output_item.added``,
``response.output_text.delta``, ``response.function_call_arguments.delta`` / ``.done``,
``response.output_item.done``, ``response.completed`` or ``response.incomplete``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ptcbox.agent_glue._messages import Message, ToolCall, Usage
from ptcbox.agent_glue._provider import ChatRequest
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.agent_glue._scripted import ResolvedTurn
from ptcbox.agent_glue._wire import Event, Wire

__all__ = ["RESPONSES_WIRE", "chat_request_from_responses"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(part.get("text", "")) for part in content or () if isinstance(part, Mapping))


def chat_request_from_responses(body: Mapping[str, Any]) -> ChatRequest:
    """Read a Responses API request body as a :class:`ChatRequest`."""
    tools = tuple(
        ToolDefinition(
            str(spec.get("name", "")),
            str(spec.get("description", "")),
            dict(spec.get("parameters") or {"type": "object"}),
        )
        for spec in body.get("tools") or ()
        if spec.get("type") == "function"
    )
    raw = body.get("input") or []
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else list(raw)
    system = [str(body["instructions"])] if body.get("instructions") else []
    messages: list[Message] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            call = ToolCall(str(item["call_id"]), str(item["name"]), str(item["arguments"]))
            last = messages[-1] if messages else None
            if last is not None and last.role == "assistant":
                messages[-1] = Message.assistant(last.content, (*last.tool_calls, call))
            else:
                messages.append(Message.assistant("", (call,)))
        elif kind == "function_call_output":
            messages.append(Message.tool(str(item["call_id"]), _text(item.get("output"))))
        elif kind == "message":
            role = item.get("role")
            if role in ("system", "developer") and not messages:
                system.append(_text(item.get("content")))
            else:
                messages.append(
                    Message.from_openai({"role": role, "content": _text(item.get("content"))})
                )
    return ChatRequest("\n\n".join(system), tools, tuple(messages))


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_input_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total_tokens,
    }


def _items(turn: ResolvedTurn) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_{turn.id}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    items.extend(
        {
            "type": "function_call",
            "id": f"fc_{call.id}",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
            "status": "completed",
        }
        for call in turn.tool_calls
    )
    return items


def _response(
    turn: ResolvedTurn, body: Mapping[str, Any], usage: Usage | None, output: list[Any]
) -> dict[str, Any]:
    cut = turn.finish_reason == "length"
    done = usage is not None
    return {
        "id": f"resp_{turn.id}",
        "object": "response",
        "created_at": int(time.time()),
        "model": str(body.get("model") or "scripted"),
        "status": ("incomplete" if cut else "completed") if done else "in_progress",
        "incomplete_details": {"reason": "max_output_tokens"} if cut and done else None,
        "error": None,
        "output": output,
        "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
        "tool_choice": "auto",
        "tools": list(body.get("tools") or ()),
        "usage": _usage(usage) if usage is not None else None,
    }


def _whole(turn: ResolvedTurn, body: Mapping[str, Any], usage: Usage) -> dict[str, Any]:
    return _response(turn, body, usage, _items(turn))


def _events(
    turn: ResolvedTurn, body: Mapping[str, Any], usage: Usage, size: int
) -> Iterable[Event]:
    numbers = iter(range(1_000_000))

    def event(kind: str, **data: Any) -> Event:
        return kind, {"type": kind, "sequence_number": next(numbers), **data}

    yield event("response.created", response=_response(turn, body, None, []))
    for index, item in enumerate(_items(turn)):
        yield from _item_events(event, index, item, size)
    final = "response.incomplete" if turn.finish_reason == "length" else "response.completed"
    yield event(final, response=_whole(turn, body, usage))


def _item_events(event: Any, index: int, item: dict[str, Any], size: int) -> Iterator[Event]:
    if item["type"] == "message":
        text = item["content"][0]["text"]
        yield event(
            "response.output_item.added",
            output_index=index,
            item={**item, "status": "in_progress", "content": []},
        )
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        for at in range(0, len(text), size):
            yield event(
                "response.output_text.delta", **where, delta=text[at : at + size], logprobs=[]
            )
        yield event("response.output_text.done", **where, text=text, logprobs=[])
    else:
        arguments = item["arguments"]
        yield event(
            "response.output_item.added",
            output_index=index,
            item={**item, "status": "in_progress", "arguments": ""},
        )
        where = {"item_id": item["id"], "output_index": index}
        for at in range(0, len(arguments), size):
            yield event(
                "response.function_call_arguments.delta", **where, delta=arguments[at : at + size]
            )
        yield event(
            "response.function_call_arguments.done", **where, arguments=arguments, name=item["name"]
        )
    yield event("response.output_item.done", output_index=index, item=item)


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _error_event(message: str) -> Event:
    return "error", {
        "type": "error",
        "code": "server_error",
        "message": message,
        "param": None,
        "sequence_number": 0,
    }


RESPONSES_WIRE = Wire(
    route="/responses",
    parse=chat_request_from_responses,
    whole=_whole,
    events=_events,
    error=_error,
    error_event=_error_event,
)
"""OpenAI Responses: a ``response`` object or its named SSE events."""

"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, for tests, demos and examples.

It serves ``POST /v1/chat/completions`` (streaming SSE and plain JSON, tool calls,
usage) from a script of turns (the same items :class:`ScriptedProvider` takes), so the
real ``openai`` SDK can be driven end to end without a network or a key. Standard
library only (``http.server`` in a daemon thread).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ptcbox.agent_glue._messages import Message
from ptcbox.agent_glue._provider import ChatProviderError, ChatRequest
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.agent_glue._scripted import ResolvedTurn, Script, ScriptedError, ScriptItem

__all__ = ["ScriptedOpenAIServer"]


class ScriptedOpenAIServer:
    """An OpenAI-compatible chat server that plays a script.

    Args:
        turns: The script (see :class:`ScriptedProvider`); each request plays the next
            item, called with the request as a :class:`ChatRequest` when it is a function.
        host: Address to bind; loopback by default.
        port: Port to bind; ``0`` picks a free one.
        chunk_chars: Streamed deltas carry at most this many characters.
        delay: Seconds to wait before each streamed chunk.

    Use as a context manager (``with ScriptedOpenAIServer(turns) as server:``), then
    ``openai.AsyncOpenAI(base_url=server.base_url, api_key="test")`` or
    ``server.client()``. Received request bodies are kept in :attr:`requests`.
    """

    def __init__(
        self,
        turns: Iterable[ScriptItem],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        chunk_chars: int = 24,
        delay: float = 0.0,
    ) -> None:
        self._script = Script(list(turns))
        self._host = host
        self._port = port
        self.chunk_chars = max(1, chunk_chars)
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.disconnects = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``.

        Raises:
            RuntimeError: If the server is not started.
        """
        if self._server is None:
            raise RuntimeError("the server is not started; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def remaining(self) -> int:
        """Turns not played yet."""
        return self._script.remaining

    def start(self) -> ScriptedOpenAIServer:
        """Bind and serve in a daemon thread; returns ``self``."""
        if self._server is not None:
            return self
        owner = self

        class Handler(_Handler):
            server_owner = owner

        self._server = ThreadingHTTPServer((self._host, self._port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="ptcbox-scripted-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def client(self, **kwargs: Any) -> Any:
        """Return ``openai.AsyncOpenAI`` for this server (``api_key="test"``, no retries)."""
        import openai  # noqa: PLC0415

        kwargs.setdefault("api_key", "test")
        kwargs.setdefault("max_retries", 0)
        return openai.AsyncOpenAI(base_url=self.base_url, **kwargs)

    def _play(self, body: Mapping[str, Any]) -> ResolvedTurn | ScriptedError:
        with self._lock:
            self.requests.append(dict(body))
        try:
            return self._script.next(chat_request_from_openai(body))
        except ChatProviderError as exc:
            return ScriptedError(exc.message, status_code=500)
        except Exception as exc:  # a script function failed: answer, don't drop the socket
            return ScriptedError(f"the script raised {type(exc).__name__}: {exc}", 500)


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


class _Handler(BaseHTTPRequestHandler):
    server_owner: ScriptedOpenAIServer
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._json(404, _error("not found", "not_found"))

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, _error(f"no route {self.path}", "not_found"))
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
        except ValueError as exc:
            self._json(400, _error(f"invalid JSON body: {exc}", "invalid_request_error"))
            return
        owner = self.server_owner
        turn = owner._play(body)
        if isinstance(turn, ScriptedError):
            self._json(turn.status_code, _error(turn.message, "scripted_error"))
            return
        model = str(body.get("model") or "scripted")
        if body.get("stream"):
            options = body.get("stream_options") or {}
            self._stream(turn, model, include_usage=bool(options.get("include_usage")))
        else:
            self._json(200, _completion(turn, model))

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, turn: ResolvedTurn, model: str, *, include_usage: bool) -> None:
        owner = self.server_owner
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        try:
            for chunk in _chunks(turn, model, owner.chunk_chars, include_usage=include_usage):
                if owner.delay:
                    time.sleep(owner.delay)
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with owner._lock:
                owner.disconnects += 1


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _usage(turn: ResolvedTurn) -> dict[str, int]:
    usage = turn.usage
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }


def _completion(turn: ResolvedTurn, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [call.to_openai() for call in turn.tool_calls]
    return {
        "id": turn.id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": turn.finish_reason}],
        "usage": _usage(turn),
    }


def _chunks(
    turn: ResolvedTurn, model: str, size: int, *, include_usage: bool
) -> Iterable[dict[str, Any]]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
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
        yield {
            "id": turn.id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": _usage(turn),
        }

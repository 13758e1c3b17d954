"""A scripted model server on 127.0.0.1, for tests, demos and examples.

It speaks three model APIs from one script of turns (the same items
:class:`ScriptedProvider` takes), so the real SDKs can be driven end to end without a
network or a key: OpenAI Chat Completions (``POST /v1/chat/completions``), OpenAI
Responses (``POST /v1/responses``) and Anthropic Messages (``POST /v1/messages``), each
as streaming SSE and as plain JSON, with tool calls and usage.
:class:`ScriptedStreamFault` items break a stream part-way (cut connection, malformed
event, error event). Standard library only (``http.server`` in a daemon thread).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ptcbox.agent_glue._provider import ChatProviderError
from ptcbox.agent_glue._scripted import ResolvedTurn, Script, ScriptedError, ScriptItem
from ptcbox.agent_glue._wire import Event, Wire
from ptcbox.agent_glue._wire_anthropic import ANTHROPIC_WIRE
from ptcbox.agent_glue._wire_chat import CHAT_WIRE
from ptcbox.agent_glue._wire_responses import RESPONSES_WIRE

__all__ = ["ScriptedOpenAIServer"]

_WIRES = (CHAT_WIRE, RESPONSES_WIRE, ANTHROPIC_WIRE)


class ScriptedOpenAIServer:
    """A scripted model server: OpenAI Chat Completions, Responses and Anthropic Messages.

    Args:
        turns: The script (see :class:`ScriptedProvider`); each request plays the next
            item, called with the request as a :class:`ChatRequest` when it is a function.
        host: Address to bind; loopback by default.
        port: Port to bind; ``0`` picks a free one.
        chunk_chars: Streamed deltas carry at most this many characters.
        delay: Seconds to wait before each streamed chunk.

    Use as a context manager (``with ScriptedOpenAIServer(turns) as server:``), then
    ``openai.AsyncOpenAI(base_url=server.base_url, api_key="test")`` or
    ``server.client()`` (Chat Completions and Responses), and
    ``anthropic.AsyncAnthropic(base_url=server.anthropic_base_url, api_key="test")`` or
    ``server.anthropic_client()`` (Messages). All routes play the same script.
    Received request bodies are kept in :attr:`requests`; :attr:`paths` has the path
    of each.
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
        self.paths: list[str] = []
        self.disconnects = 0
        self.cache: set[str] = set()
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
    def anthropic_base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (the Anthropic SDK appends ``/v1/messages``).

        Raises:
            RuntimeError: If the server is not started.
        """
        return self.base_url.removesuffix("/v1")

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

    def anthropic_client(self, **kwargs: Any) -> Any:
        """Return ``anthropic.AsyncAnthropic`` for this server (``api_key="test"``, no retries).

        Raises:
            ImportError: If the ``anthropic`` SDK is not installed (``ptcbox[anthropic]``).
        """
        import anthropic  # noqa: PLC0415

        kwargs.setdefault("api_key", "test")
        kwargs.setdefault("max_retries", 0)
        return anthropic.AsyncAnthropic(base_url=self.anthropic_base_url, **kwargs)

    def _play(self, wire: Wire, path: str, body: Mapping[str, Any]) -> ResolvedTurn | ScriptedError:
        with self._lock:
            self.requests.append(dict(body))
            self.paths.append(path)
        try:
            return self._script.next(wire.parse(body))
        except ChatProviderError as exc:
            return ScriptedError(exc.message, status_code=500)
        except Exception as exc:  # a script function failed: answer, don't drop the socket
            return ScriptedError(f"the script raised {type(exc).__name__}: {exc}", 500)


class _Handler(BaseHTTPRequestHandler):
    server_owner: ScriptedOpenAIServer
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._json(404, CHAT_WIRE.error("not found", "not_found"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        wire = next((w for w in _WIRES if path.endswith(w.route)), None)
        if wire is None:
            self._json(404, CHAT_WIRE.error(f"no route {self.path}", "not_found"))
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
        except ValueError as exc:
            self._json(400, wire.error(f"invalid JSON body: {exc}", "invalid_request_error"))
            return
        owner = self.server_owner
        turn = owner._play(wire, path, body)
        if isinstance(turn, ScriptedError):
            self._json(turn.status_code, wire.error(turn.message, "scripted_error"))
            return
        with owner._lock:
            usage = wire.usage(body, turn.usage, owner.cache)
        if not body.get("stream"):
            if turn.fault is not None:
                self._json(500, wire.error(f"scripted {turn.fault.fault}", "api_error"))
            else:
                self._json(200, wire.whole(turn, body, usage))
            return
        events = list(wire.events(turn, body, usage, owner.chunk_chars))
        self._stream(wire, turn, events)

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, wire: Wire, turn: ResolvedTurn, events: list[Event]) -> None:
        owner, fault = self.server_owner, turn.fault
        if fault is not None:
            events = events[: fault.after]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if fault is not None and fault.fault == "disconnect":
            # promise more than is sent, so the client sees a cut connection, not an end
            self.send_header("Content-Length", str(1 << 20))
        self.end_headers()
        try:
            for data in _encode(events):
                if owner.delay:
                    time.sleep(owner.delay)
                self.wfile.write(data)
                self.wfile.flush()
            if fault is None:
                self.wfile.write(wire.done)
            elif fault.fault == "malformed":
                self.wfile.write(b"event: message_delta\ndata: {not json\n\n")
            elif fault.fault == "error":
                self.wfile.write(next(iter(_encode([wire.error_event("scripted error")]))))
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with owner._lock:
                owner.disconnects += 1


def _encode(events: Iterable[Event]) -> Iterable[bytes]:
    for name, data in events:
        head = f"event: {name}\n".encode() if name else b""
        yield head + b"data: " + json.dumps(data).encode() + b"\n\n"

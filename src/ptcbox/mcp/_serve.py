""":class:`CodeModeServer`: ``run_code`` served over MCP (the SDK's low-level ``Server``).

The server lists one tool, ``run_code`` (its description holds the tools' stubs, as
:class:`~ptcbox.RunCodeTool` renders them), and optionally the upstream MCP tools
themselves (``direct``). A call runs the code in a ptcbox session and answers
``CodeResult.render()``, with ``is_error`` when the code failed. While it runs, output
is streamed as ``notifications/progress`` (when the client sent a progress token) and
``notifications/message`` log entries (when the client opted in to logs).

Sessions (variables surviving between ``run_code`` calls):

- stdio: the server process serves exactly one client, so one ptcbox session lives as
  long as the process (any protocol era);
- streamable HTTP, handshake-era clients (``Mcp-Session-Id``): one ptcbox session per
  MCP session, closed when the MCP session ends (``DELETE``, idle expiry, shutdown);
- streamable HTTP, 2026-07-28 clients: the protocol is stateless (every request is its
  own connection), so each call starts from fresh globals.

A client that disconnects or cancels mid-run cancels the handler, and the runtime stops
the execution (a subprocess worker is killed), as its cancellation contract says.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import anyio
import mcp.types as mt
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ptcbox._result import CodeResult
from ptcbox.agent_glue import RunCodeTool
from ptcbox.errors import SessionEndedError
from ptcbox.mcp._connect import MCPTools
from ptcbox.mcp._projection import MCPToolProjection
from ptcbox.projections import ToolProjection
from ptcbox.runtimes import CodeRuntime

__all__ = ["CodeModeServer"]

_STATE_KEY = "ptcbox.session"
_MAX_NOTE_CHARS = 4000
_RESTARTED = (
    "[note: the previous session ended ({reason}); variables from earlier run_code calls "
    "are gone, this call started from fresh globals]\n"
)


class CodeModeServer:
    """An MCP server whose one tool, ``run_code``, runs Python that calls ``tools``.

    Args:
        run_code: The :class:`~ptcbox.RunCodeTool` that defines the tool's name,
            description (stubs), input schema, namespace and time cap.
        runtime: The runtime sessions are opened on (must have ``session()``); closed by
            whoever created it, not by this server.
        direct: Upstream MCP tools to list as tools of their own, forwarded as they are.
        name: The server's name in the MCP handshake.
        max_result_chars: Longest result text (head and tail kept).

    Attributes:
        server: The SDK's low-level ``Server``; :meth:`serve_stdio` and :meth:`serve_http`
            run it, or mount ``server.streamable_http_app()`` in your own ASGI app.
    """

    def __init__(
        self,
        run_code: RunCodeTool,
        runtime: CodeRuntime,
        *,
        direct: MCPTools | None = None,
        name: str = "ptcbox",
        max_result_chars: int = 20_000,
    ) -> None:
        if not callable(getattr(runtime, "session", None)):
            raise TypeError(f"{type(runtime).__name__} has no session(); pass a ptcbox runtime")
        self._run_code = run_code
        self._runtime = runtime
        self._direct: dict[str, MCPToolProjection] = dict(direct or {})
        self._max_result_chars = max_result_chars
        self._process_session: _Session | None = None
        self._stdio = False
        self.server: Server[Any] = Server(
            name, on_list_tools=self._list_tools, on_call_tool=self._call_tool
        )

    # -- transports --------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        """Serve one client over this process's stdin/stdout until it closes them."""
        self._stdio = True
        try:
            async with stdio_server() as (read_stream, write_stream):
                await self.server.run(
                    read_stream, write_stream, self.server.create_initialization_options()
                )
        finally:
            await self.aclose()

    async def serve_http(self, host: str, port: int) -> None:
        """Serve streamable HTTP on ``http://HOST:PORT/mcp`` until SIGTERM/SIGINT.

        A signal shuts down gracefully: open requests end, then every session closes.
        """
        import uvicorn  # noqa: PLC0415 - a dependency of the mcp SDK; only HTTP needs it

        class _Server(uvicorn.Server):
            # uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, which would
            # kill the process before the sessions, runtime and upstreams are closed.
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                if threading.current_thread() is not threading.main_thread():
                    yield
                    return
                signals = (signal.SIGINT, signal.SIGTERM)
                originals = {sig: signal.signal(sig, self.handle_exit) for sig in signals}
                try:
                    yield
                finally:
                    for sig, handler in originals.items():
                        signal.signal(sig, handler)

        app = self.server.streamable_http_app(host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning")
        try:
            await _Server(config).serve()
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the process-wide session (stdio); per-connection ones close with theirs."""
        session, self._process_session = self._process_session, None
        if session is not None:
            await session.aclose()

    # -- handlers ----------------------------------------------------------------------

    def tool_definitions(self) -> list[mt.Tool]:
        """The tools this server lists: ``run_code``, then the direct ones."""
        run_code = mt.Tool(
            name=self._run_code.name,
            description=self._run_code.description,
            input_schema=dict(self._run_code.parameters),
        )
        direct = [
            mt.Tool(
                name=name,
                description=projection.doc,
                input_schema=dict(projection.input_schema),
                output_schema=projection.output_schema,
            )
            for name, projection in self._direct.items()
        ]
        return [run_code, *direct]

    async def _list_tools(self, ctx: Any, params: mt.PaginatedRequestParams | None) -> Any:
        return mt.ListToolsResult(tools=self.tool_definitions())

    async def _call_tool(self, ctx: Any, params: mt.CallToolRequestParams) -> Any:
        arguments = dict(params.arguments or {})
        if params.name in self._direct:
            return await self._direct[params.name].call_raw(arguments)
        if params.name != self._run_code.name:
            known = ", ".join([self._run_code.name, *self._direct])
            return _error(f"unknown tool {params.name!r}; this server has: {known}")
        code = arguments.get("code")
        timeout = arguments.get("timeout")
        problem = _check_arguments(code, timeout, self._run_code.max_timeout)
        if problem:
            return _error(f"{self._run_code.name} got invalid arguments: {problem}")
        assert isinstance(code, str)
        limit = (
            self._run_code.max_timeout
            if timeout is None
            else min(timeout, self._run_code.max_timeout)
        )
        session = await self._session_for(ctx)
        try:
            result, note = await session.run(code, self._run_code.namespace(), limit, _Stream(ctx))
        finally:
            if session.per_call:
                await session.aclose()
        text = note + result.render(self._max_result_chars)
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text=text)], is_error=not result.ok
        )

    async def _session_for(self, ctx: Any) -> _Session:
        if self._stdio:
            if self._process_session is None:
                self._process_session = _Session(self._runtime, per_call=False)
            return self._process_session
        # The SDK keeps per-connection state (``state``, ``exit_stack`` unwound when the
        # connection closes) on ``Connection``, reachable from a request only through
        # ``ServerSession._connection`` in mcp 2.3; without it, calls are stateless.
        connection = getattr(getattr(ctx, "session", None), "_connection", None)
        state = getattr(connection, "state", None)
        stack = getattr(connection, "exit_stack", None)
        version = getattr(connection, "protocol_version", None)
        if not isinstance(state, dict) or stack is None or version in MODERN_PROTOCOL_VERSIONS:
            return _Session(self._runtime, per_call=True)  # stateless: one call, fresh globals
        session = state.get(_STATE_KEY)
        if not isinstance(session, _Session):
            session = state[_STATE_KEY] = _Session(self._runtime, per_call=False)
            stack.push_async_callback(session.aclose)
        return session


class _Session:
    """One ptcbox session, reopened (with a note) when the runtime ended it."""

    def __init__(self, runtime: CodeRuntime, *, per_call: bool) -> None:
        self._runtime = runtime
        self.per_call = per_call
        self._session: Any = None
        self._lock = anyio.Lock()

    async def run(
        self, code: str, namespace: Mapping[str, ToolProjection], limit: float, stream: _Stream
    ) -> tuple[CodeResult, str]:
        note = ""
        async with self._lock, anyio.create_task_group() as tg:
            tg.start_soon(stream.forward)
            try:
                if self._session is None:
                    self._session = self._runtime.session()  # type: ignore[attr-defined]
                try:
                    result = await self._session.execute(
                        code, namespace, timeout=limit, on_output=stream.push
                    )
                except SessionEndedError as exc:
                    self._session = self._runtime.session()  # type: ignore[attr-defined]
                    note = _RESTARTED.format(reason=exc.reason)
                    result = await self._session.execute(
                        code, namespace, timeout=limit, on_output=stream.push
                    )
            finally:
                stream.done()
        return result, note

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            with anyio.CancelScope(shield=True):
                await session.aclose()


class _Stream:
    """Forwards output chunks as progress and log notifications of one request."""

    def __init__(self, ctx: Any) -> None:
        self._session = getattr(ctx, "session", None)
        self._send, self._receive = anyio.create_memory_object_stream[tuple[str, str] | None](
            math.inf
        )
        self._count = 0

    def push(self, stream: str, text: str) -> None:
        self._send.send_nowait((stream, text))

    def done(self) -> None:
        self._send.send_nowait(None)

    async def forward(self) -> None:
        session = self._session
        async with self._receive:
            while True:
                item = await self._receive.receive()
                if item is None:
                    return
                chunks = [item]
                while True:  # coalesce what is already queued into one notification
                    try:
                        more = self._receive.receive_nowait()
                    except anyio.WouldBlock:
                        break
                    if more is None:
                        await self._send_out(session, chunks)
                        return
                    chunks.append(more)
                await self._send_out(session, chunks)

    async def _send_out(self, session: Any, chunks: list[tuple[str, str]]) -> None:
        if session is None:
            return
        text = "".join(t for _, t in chunks)
        if len(text) > _MAX_NOTE_CHARS:
            text = text[: _MAX_NOTE_CHARS - 40] + f"... [{len(text)} characters in all]"
        self._count += 1
        streams = sorted({s for s, _ in chunks})
        try:
            await session.report_progress(self._count, None, text)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                pending = session.send_log_message(
                    level="info", data=text, logger="/".join(streams)
                )
            await pending
        except Exception:  # notifications are advisory; a gone client is normal
            pass


def _check_arguments(code: object, timeout: object, cap: float) -> str:
    if not isinstance(code, str):
        return "'code' must be a string of Python source"
    if not code.strip():
        return "'code' is empty; send the Python source to run"
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        return f"'timeout' must be a positive number of seconds, at most {cap:g}"
    return ""


def _error(text: str) -> mt.CallToolResult:
    return mt.CallToolResult(content=[mt.TextContent(type="text", text=text)], is_error=True)

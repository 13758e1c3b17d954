""":class:`MCPToolProjection`: one MCP server's tool as a function inside a snippet.

The projection is async (``is_async = True``): runtimes await it on the host's event
loop, where the ``mcp.Client`` lives. Arguments are renamed to the server's property
names; the result is ``structured_content`` when the server sends it (the
``{"result": X}`` wrapper unwrapped), else the text content (decoded as JSON when the
tool declares an output schema). ``is_error`` results raise :class:`MCPToolError`
(a ``RuntimeError``) with the server's message, protocol errors :class:`MCPProtocolError`,
a call over its time limit ``TimeoutError``, a malformed answer :class:`MCPProtocolError`
too, a server that went away :class:`ServerGone` (a ``ConnectionError``);
inside the snippet each of these is also a ``ToolError``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from ptcbox.mcp._schema import MCPParam, result_wrapper

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["MCPProtocolError", "MCPToolError", "MCPToolProjection", "ServerGone"]

_GONE = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    ConnectionError,
    EOFError,
    OSError,
)


class MCPToolError(RuntimeError):
    """An MCP tool answered with ``is_error: true``; the message is the server's text.

    Attributes:
        tool: The MCP name of the tool.
        server: The label of the server (its prefix, command or URL).
    """

    def __init__(self, message: str, *, tool: str = "", server: str = "") -> None:
        super().__init__(message)
        self.tool = tool
        self.server = server


class MCPProtocolError(RuntimeError):
    """The server refused a call with a JSON-RPC error (unknown tool, bad params ...).

    Attributes:
        code: The JSON-RPC error code.
    """

    def __init__(self, message: str, *, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class ServerGone(ConnectionError):
    """The MCP server's connection closed (the process died, the URL stopped answering)."""


class MCPToolProjection:
    """A tool of an MCP server, callable from snippets with keyword arguments.

    Built by :func:`ptcbox.mcp.mcp_tools`; not usually constructed directly.

    Args:
        name: The Python name the snippet calls (sanitised, maybe prefixed).
        mcp_name: The tool's name on the server.
        client: The open ``mcp.Client``.
        server: A label for messages (prefix, command or URL).
        doc: The docstring shown in stubs.
        signature: The call signature built from the input schema.
        params: Python name to wire name of each parameter.
        output_schema: The tool's ``outputSchema`` (``None`` when it has none).
        input_schema: The tool's ``inputSchema`` (kept for forwarding it as it is).
        timeout: Limit of one call, in seconds; ``None`` for none.
    """

    is_async = True

    def __init__(
        self,
        *,
        name: str,
        mcp_name: str,
        client: Client,
        server: str,
        doc: str,
        signature: inspect.Signature,
        params: tuple[MCPParam, ...],
        output_schema: Mapping[str, Any] | None,
        timeout: float | None,
        input_schema: Mapping[str, Any] | None = None,
    ) -> None:
        self._name = name
        self.mcp_name = mcp_name
        self._client = client
        self.server = server
        self._doc = doc
        self.signature = signature
        self._params = {p.python_name: p for p in params}
        self.input_schema: Mapping[str, Any] = input_schema or {"type": "object"}
        self.output_schema = dict(output_schema) if isinstance(output_schema, Mapping) else None
        self._has_schema = isinstance(output_schema, Mapping)
        self._unwrap = result_wrapper(output_schema) is not None
        self.timeout = timeout
        self._loop = _running_loop()
        self._open = True

    @property
    def name(self) -> str:
        """The name the snippet calls the tool by."""
        return self._name

    @property
    def doc(self) -> str:
        """The tool's description with its MCP origin and argument docs."""
        return self._doc

    @property
    def client(self) -> Client:
        """The ``mcp.Client`` the calls go through."""
        return self._client

    def close(self) -> None:
        """Mark the projection unusable (its client was closed)."""
        self._open = False

    def __call__(self, **kwargs: Any) -> Any:
        """Start the call; returns a coroutine the runtime awaits on the host's loop."""
        return self.call(kwargs)

    async def call(self, kwargs: Mapping[str, Any]) -> Any:
        """Call the tool with Python-named arguments and return the decoded result.

        Args:
            kwargs: Arguments by Python name (as the snippet passed them).

        Returns:
            The structured result (``{"result": X}`` unwrapped) or the text content.

        Raises:
            MCPToolError: The server answered ``is_error``.
            MCPProtocolError: The server refused the request.
            TimeoutError: No answer within ``timeout`` seconds.
            ServerGone: The connection to the server is closed.
            RuntimeError: Called on another event loop than the one that opened it.
        """
        if not self._open:
            raise ServerGone(
                f"the MCP connection to {self.server} is closed; {self._name}() can only be "
                "called inside the `async with mcp_tools(...)` block that opened it"
            )
        loop = _running_loop()
        if self._loop is not None and loop is not self._loop:
            raise RuntimeError(
                f"{self._name}() is an MCP tool bound to the event loop that opened it; run the "
                "snippet with `await ptcbox.aexecute(...)` or a runtime on that loop, not with "
                "the blocking ptcbox.execute()"
            )
        result = await self._send(self._wire_arguments(kwargs))
        return self.decode(result)

    async def call_raw(self, arguments: Mapping[str, Any]) -> CallToolResult:
        """Forward a call as it is (wire-named arguments) and return the server's result.

        Used by the proxy's direct tools. Failures to reach the server come back as an
        ``is_error`` result with the message a snippet would see.
        """
        try:
            if not self._open:
                raise ServerGone(f"the MCP connection to {self.server} is closed")
            return await self._send(dict(arguments))
        except (TimeoutError, MCPProtocolError, ServerGone) as exc:
            text = str(exc)
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    async def _send(self, arguments: dict[str, Any]) -> CallToolResult:
        try:
            with anyio.fail_after(self.timeout):
                return await self._client.call_tool(
                    self.mcp_name, arguments, read_timeout_seconds=self.timeout
                )
        except (TimeoutError, MCPError, *_GONE) as exc:
            raise self._translate(exc) from None
        except ValidationError as exc:  # the server answered, but not with a CallToolResult
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'result'}: {e['msg']}"
                for e in exc.errors(include_url=False)[:3]
            )
            raise MCPProtocolError(
                f"MCP server {self.server} sent a malformed result for {self.mcp_name!r} "
                f"({problems})"
            ) from None

    def _translate(self, exc: BaseException) -> Exception:
        if isinstance(exc, TimeoutError) or (isinstance(exc, MCPError) and _is_timeout(exc)):
            return TimeoutError(
                f"MCP tool {self.mcp_name!r} on {self.server} did not answer within "
                f"{self.timeout:g} seconds"
            )
        if isinstance(exc, MCPError) and not _is_closed(exc):
            return MCPProtocolError(
                f"MCP server {self.server} refused {self.mcp_name!r}: {exc.message}",
                code=exc.code,
            )
        return self._gone(exc)

    def decode(self, result: CallToolResult) -> Any:
        """Turn a ``CallToolResult`` into the value the snippet gets.

        Raises:
            MCPToolError: When ``result.is_error`` is set.
        """
        if result.is_error:
            text = _text_of(result) or "the tool failed without a message"
            raise MCPToolError(text, tool=self.mcp_name, server=self.server)
        structured = result.structured_content
        if structured is not None:
            return self._unwrapped(structured)
        texts: list[str] = []
        others: list[Any] = []
        for block in result.content:
            block_text = getattr(block, "text", None)
            if getattr(block, "type", None) == "text" and isinstance(block_text, str):
                texts.append(block_text)
            else:
                others.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
        if others:
            return [*texts, *others]
        if not texts:
            return None
        text = texts[0] if len(texts) == 1 else "\n".join(texts)
        if self._has_schema:
            try:
                return self._unwrapped(json.loads(text))
            except ValueError:
                return text
        return text

    def _unwrapped(self, value: Any) -> Any:
        if self._unwrap and isinstance(value, dict) and list(value) == ["result"]:
            return value["result"]
        return value

    def _wire_arguments(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in kwargs.items():
            spec = self._params.get(key)
            if spec is None:
                out[key] = value  # **kwargs tools: passed through as given
            elif value is None and not spec.required and not _has_default(self.signature, key):
                continue  # an optional argument left out (shown as `= None` in the stub)
            else:
                out[spec.wire_name] = value
        return out

    def _gone(self, exc: BaseException) -> ServerGone:
        detail = str(exc) or type(exc).__name__
        return ServerGone(
            f"the MCP server {self.server} is gone ({detail}; seen calling {self.mcp_name!r}); "
            "its tools are unavailable until it is restarted"
        )

    def __repr__(self) -> str:
        return f"MCPToolProjection(name={self._name!r}, mcp_name={self.mcp_name!r})"


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _has_default(signature: inspect.Signature, name: str) -> bool:
    param = signature.parameters.get(name)
    return param is not None and param.default is not None and param.default is not param.empty


def _text_of(result: CallToolResult) -> str:
    parts = [getattr(b, "text", "") for b in result.content if getattr(b, "type", "") == "text"]
    return "\n".join(p for p in parts if p).strip()


def _is_timeout(exc: MCPError) -> bool:
    return exc.code == 408 or "timed out" in exc.message.lower() or "timeout" in exc.message.lower()


def _is_closed(exc: MCPError) -> bool:
    message = exc.message.lower()
    return "connection closed" in message or ("closed" in message and "stream" in message)

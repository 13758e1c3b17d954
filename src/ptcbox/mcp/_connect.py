""":func:`mcp_tools`: connect to MCP servers and offer their tools as a snippet namespace.

Each server is an ``mcp.StdioServerParameters`` (a command the SDK starts as a
subprocess), a streamable-HTTP URL, or an ``mcp.Client`` you opened (left open for you),
optionally wrapped in :class:`Upstream` for a name prefix, renames or its own timeout.
Tool names become identifiers (``get-stock`` -> ``get_stock``); two tools that end up
with one name are refused with a message that says which, instead of one silently
shadowing the other.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.types import Tool as MCPTool

from ptcbox.mcp._docs import tool_doc
from ptcbox.mcp._projection import MCPToolProjection
from ptcbox.mcp._schema import SchemaTypes, python_identifier
from ptcbox.projections import ToolProjection, validate_namespace
from ptcbox.projections._stubs import render_stubs

__all__ = ["MCPConnectError", "MCPTools", "ServerLike", "Upstream", "mcp_tools"]

ServerLike = StdioServerParameters | str | Client | MCPServer
"""What names an MCP server: a command to start, a streamable-HTTP URL, an open client,
or an ``MCPServer`` object to talk to in-process (handy in tests and notebooks)."""

_MAX_PAGES = 100


class MCPConnectError(ConnectionError):
    """An MCP server could not be reached, started or listed.

    Attributes:
        server: The server's label.
    """

    def __init__(self, server: str, detail: str) -> None:
        super().__init__(f"cannot connect to the MCP server {server}: {detail}")
        self.server = server


@dataclass(frozen=True, slots=True)
class Upstream:
    """One MCP server with per-server options.

    Attributes:
        server: A ``StdioServerParameters``, a streamable-HTTP URL, an open ``mcp.Client``
            or an in-process ``MCPServer``.
        prefix: Prepended to every tool name (``"crm"`` makes ``crm_find_contact``).
        rename: MCP tool name to the Python name to use instead (resolves clashes).
        timeout: Limit of one tool call in seconds; ``None`` uses ``mcp_tools``' timeout.
        label: How messages name the server; defaults to the prefix, URL or command.
    """

    server: ServerLike
    prefix: str = ""
    rename: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    label: str | None = None

    def display(self) -> str:
        """The label messages use."""
        if self.label:
            return self.label
        if self.prefix:
            return repr(self.prefix.rstrip("_"))
        server = self.server
        if isinstance(server, str):
            return server
        if isinstance(server, StdioServerParameters):
            args = " ".join(os.path.basename(a) if "/" in a else a for a in server.args)
            return repr(f"{os.path.basename(server.command)} {args}".strip())
        if isinstance(server, MCPServer):
            return repr(server.name)
        return "the given client"


class MCPTools(Mapping[str, ToolProjection]):
    """The tools of one or more MCP servers, as a namespace for ``execute``/runtimes.

    A read-only mapping of Python name to :class:`MCPToolProjection`; pass it as
    ``tools=`` to :func:`ptcbox.aexecute`, as the namespace of a runtime, or to
    :class:`~ptcbox.RunCodeTool`.
    """

    def __init__(
        self, projections: dict[str, MCPToolProjection], definitions: dict[str, MCPTool]
    ) -> None:
        self._projections = projections
        self._definitions = definitions

    def __getitem__(self, key: str) -> MCPToolProjection:
        return self._projections[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._projections)

    def __len__(self) -> int:
        return len(self._projections)

    @property
    def definitions(self) -> dict[str, MCPTool]:
        """Python name to the server's tool definition (name, schemas, description)."""
        return dict(self._definitions)

    @property
    def stubs(self) -> str:
        """The tools as Python stubs (what a ``run_code`` description shows)."""
        return render_stubs(self._projections)

    def origins(self) -> dict[str, tuple[str, str]]:
        """Python name to ``(server label, MCP tool name)``."""
        return {n: (p.server, p.mcp_name) for n, p in self._projections.items()}


@contextlib.asynccontextmanager
async def mcp_tools(
    *servers: ServerLike | Upstream,
    timeout: float | None = 30.0,
    connect_timeout: float = 20.0,
) -> AsyncIterator[MCPTools]:
    """Connect to MCP servers and yield their tools as a namespace.

    Example::

        params = StdioServerParameters(command="python", args=["inventory_server.py"])
        async with mcp_tools(params, Upstream("http://127.0.0.1:8000/mcp", prefix="crm")) as tools:
            result = await ptcbox.aexecute("get_stock(sku='A1') < 5", tools=tools)

    Args:
        *servers: The servers (see :data:`ServerLike`), each optionally an :class:`Upstream`.
        timeout: Limit of one tool call, in seconds (``None``: no limit); a call over it
            raises ``TimeoutError`` in the snippet.
        connect_timeout: Limit for starting/connecting to one server and listing its
            tools, in seconds.

    Yields:
        The :class:`MCPTools` namespace; its projections stop working when the block ends.

    Raises:
        MCPConnectError: A server cannot be started, reached or listed.
        ValueError: Two tools have one Python name after sanitising and prefixing (the
            message names both and how to fix it), or a prefix/rename is not usable.
    """
    upstreams = [s if isinstance(s, Upstream) else Upstream(s) for s in servers]
    # One cancel scope around the clients' whole life: its deadline bounds each
    # connection and listing, then is lifted. (A scope that ended before the client's
    # task groups would corrupt anyio's scope stack.)
    scope = anyio.CancelScope()
    state = _Connecting()
    try:
        with scope:
            async with contextlib.AsyncExitStack() as stack:
                catalog = _Catalog(timeout)
                for index, upstream in enumerate(upstreams):
                    state.label = label = upstream.display()
                    scope.deadline = anyio.current_time() + connect_timeout
                    client = await _open(stack, upstream, label)
                    state.step = "tools/list"
                    listed = await _list_tools(client, label)
                    state.step = "connect"
                    catalog.add(upstream, index, client, label, listed)
                scope.deadline = math.inf
                validate_namespace(catalog.projections)
                state.connected = True
                try:
                    yield MCPTools(catalog.projections, catalog.definitions)
                finally:
                    for projection in catalog.projections.values():
                        projection.close()
    except BaseExceptionGroup as group:
        # The clients' task groups wrap whatever crosses them, the block's own errors
        # included; a single error is re-raised as itself.
        inner = _single(group)
        if inner is None:
            raise
        raise inner from None
    if not state.connected and scope.cancelled_caught:
        what = "no answer" if state.step == "connect" else "tools/list got no answer"
        raise MCPConnectError(state.label, f"{what} within {connect_timeout:g} seconds")


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop()
        if isinstance(exc, BaseExceptionGroup):
            stack.extend(exc.exceptions)
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 and isinstance(leaves[0], Exception) else None


class _Catalog:
    """The projections of every server so far, refusing a second tool with one name."""

    def __init__(self, timeout: float | None) -> None:
        self._timeout = timeout
        self.projections: dict[str, MCPToolProjection] = {}
        self.definitions: dict[str, MCPTool] = {}
        self._origin: dict[str, str] = {}

    def add(
        self, upstream: Upstream, index: int, client: Client, label: str, listed: list[MCPTool]
    ) -> None:
        types = SchemaTypes(prefix=_class_prefix(upstream.prefix, index))
        timeout = upstream.timeout if upstream.timeout is not None else self._timeout
        for tool in listed:
            name = _python_name(upstream, tool.name)
            where = f"{tool.name!r} on {label}"
            if name in self.projections:
                raise ValueError(
                    f"MCP tools {self._origin[name]} and {where} both become {name!r} in "
                    "Python; give one server a prefix (Upstream(server, prefix=...)) or rename "
                    f"one (Upstream(server, rename={{{tool.name!r}: 'other_name'}}))"
                )
            self.projections[name] = _projection(
                tool, name, client=client, label=label, types=types, timeout=timeout
            )
            self.definitions[name] = tool
            self._origin[name] = where


class _Connecting:
    __slots__ = ("connected", "label", "step")

    def __init__(self) -> None:
        self.connected = False
        self.label = ""
        self.step = "connect"


def _python_name(upstream: Upstream, mcp_name: str) -> str:
    chosen = upstream.rename.get(mcp_name)
    if chosen is not None:
        if not chosen.isidentifier() or chosen.startswith("_"):
            raise ValueError(f"rename[{mcp_name!r}] = {chosen!r} is not a usable identifier")
        base = chosen
    else:
        base = python_identifier(mcp_name)
    if not upstream.prefix:
        return base
    prefix = upstream.prefix if upstream.prefix.endswith("_") else upstream.prefix + "_"
    name = python_identifier(prefix + base)
    return name


def _class_prefix(prefix: str, index: int) -> str:
    if prefix:
        return "".join(w[:1].upper() + w[1:] for w in prefix.split("_") if w)
    return "" if index == 0 else f"S{index + 1}"


def _projection(
    tool: MCPTool,
    name: str,
    *,
    client: Client,
    label: str,
    types: SchemaTypes,
    timeout: float | None,
) -> MCPToolProjection:
    output_schema = tool.output_schema
    returns = types.returns(name, output_schema)
    signature, params = types.signature(name, tool.input_schema or {}, returns)
    doc = tool_doc(
        tool.description,
        mcp_name=tool.name,
        python_name=name,
        params=params,
        output_schema=output_schema,
    )
    return MCPToolProjection(
        name=name,
        mcp_name=tool.name,
        client=client,
        server=label,
        doc=doc,
        signature=signature,
        params=params,
        output_schema=output_schema,
        timeout=timeout,
        input_schema=tool.input_schema,
    )


async def _open(stack: contextlib.AsyncExitStack, upstream: Upstream, label: str) -> Client:
    server = upstream.server
    if isinstance(server, Client):
        return server  # the caller's client: theirs to open and close
    if not isinstance(server, StdioServerParameters | str | MCPServer):
        raise TypeError(
            "an MCP server is a StdioServerParameters, a URL string, an mcp.Client or an "
            f"MCPServer; got {type(server).__name__}"
        )
    client = Client(server)
    try:
        await stack.enter_async_context(client)
    except Exception as exc:  # any failure to start or reach the server
        raise MCPConnectError(label, describe(exc)) from exc
    return client


async def _list_tools(client: Client, label: str) -> list[MCPTool]:
    tools: list[MCPTool] = []
    cursor: str | None = None
    try:
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
    except Exception as exc:  # a server that answers garbage, or dies
        raise MCPConnectError(label, f"tools/list failed: {describe(exc)}") from exc
    return tools


def describe(exc: BaseException) -> str:
    """One line for an exception, looking inside exception groups.

    Args:
        exc: Any exception (an ``ExceptionGroup`` from a task group included).

    Returns:
        ``"Type: message"`` of the innermost, most specific error.
    """
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or "(no message)"
    return f"{type(exc).__name__}: {text}"

"""``ptcbox mcp serve``: what the command line dispatches to.

``ptcbox.cli`` parses the arguments and loads ``--tools``; :func:`serve_command` connects
the ``--upstream`` servers, builds the runtime and the :class:`CodeModeServer`, and serves
stdio or streamable HTTP until the client (stdio) or a signal (HTTP) ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

from ptcbox.agent_glue import RunCodeTool
from ptcbox.mcp._connect import MCPConnectError, MCPTools, Upstream, mcp_tools
from ptcbox.mcp._discovery import DiscoveryRunCodeTool
from ptcbox.mcp._serve import CodeModeServer
from ptcbox.projections import ToolProjection
from ptcbox.runtimes import CodeRuntime, SubprocessRuntime, ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

__all__ = ["parse_http", "parse_upstream", "serve_command"]

_PREFIXED = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)=(.+)$", re.DOTALL)


def parse_upstream(spec: str) -> Upstream:
    """Turn one ``--upstream`` value into an :class:`Upstream`.

    ``http(s)://...`` is a streamable-HTTP URL; anything else is a command line
    (``"python server.py --flag"``, split like a shell would, started with this process's
    environment). ``PREFIX=...`` in front
    gives the server's tools a name prefix (``crm=http://127.0.0.1:9000/mcp``).

    Raises:
        ValueError: For an empty spec or an unbalanced quote.
    """
    prefix = ""
    match = _PREFIXED.match(spec.strip())
    if match and " " not in match.group(1):
        prefix, spec = match.group(1), match.group(2)
    spec = spec.strip()
    if not spec:
        raise ValueError("--upstream needs a command or a URL")
    if spec.startswith(("http://", "https://")):
        return Upstream(spec, prefix=prefix)
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        raise ValueError(f"--upstream {spec!r}: {exc}") from None
    # Like a shell, the command gets this process's environment (the SDK's default is a
    # short allowlist, which drops the API keys upstream servers are usually given).
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    return Upstream(params, prefix=prefix)


def parse_http(text: str) -> tuple[str, int]:
    """Parse ``HOST:PORT`` (``127.0.0.1:8765``, ``:8765`` for 127.0.0.1).

    Raises:
        ValueError: When the port is not a number in 1..65535.
    """
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--http expects HOST:PORT (for example 127.0.0.1:8765), got {text!r}")
    return host or "127.0.0.1", int(port)


def serve_command(
    tools: Mapping[str, ToolProjection],
    *,
    upstreams: Sequence[str] = (),
    runtime: Literal["thread", "subprocess"] | None = None,
    policy: SandboxPolicy | None = None,
    http: str | None = None,
    direct: bool = False,
    discovery: bool = False,
    max_timeout: float = 30.0,
) -> int:
    """Serve ``run_code`` over MCP; returns the process exit code.

    Args:
        tools: Local tools (from ``--tools``).
        upstreams: ``--upstream`` specs (see :func:`parse_upstream`).
        runtime: ``"thread"`` or ``"subprocess"`` (default).
        policy: The sandbox policy of the runtime.
        http: ``HOST:PORT`` for streamable HTTP; ``None`` for stdio.
        direct: Also list the upstream tools as tools of their own.
        discovery: Describe tools by name and summary only; the code finds full stubs
            with ``search_tools(query)`` and ``help(tool)``.
        max_timeout: Cap of one ``run_code`` execution, in seconds.

    Returns:
        ``0`` after a clean shutdown, ``2`` for bad usage (message on stderr).
    """
    try:
        parsed = [parse_upstream(spec) for spec in upstreams]
        address = parse_http(http) if http is not None else None
        if direct and not parsed:
            raise ValueError("--direct lists upstream tools; give at least one --upstream")
        options = _Options(runtime or "subprocess", policy, address, direct, discovery, max_timeout)
        asyncio.run(_serve(tools, parsed, options))
    except (ValueError, TypeError, ImportError, MCPConnectError) as exc:  # Import: --policy data
        print(f"ptcbox mcp serve: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


@dataclass(frozen=True, slots=True)
class _Options:
    runtime: str
    policy: SandboxPolicy | None
    address: tuple[str, int] | None
    direct: bool
    discovery: bool
    max_timeout: float


async def _serve(
    local: Mapping[str, ToolProjection], upstreams: list[Upstream], options: _Options
) -> None:
    warnings.simplefilter("ignore", MCPDeprecationWarning)  # the log notifications we send
    async with contextlib.AsyncExitStack() as stack:
        remote: MCPTools | None = None
        if upstreams:
            remote = await stack.enter_async_context(mcp_tools(*upstreams))
        namespace = merge_namespaces(local, remote)
        runtime: CodeRuntime = (
            ThreadRuntime(options.policy)
            if options.runtime == "thread"
            else SubprocessRuntime(options.policy)
        )
        stack.push_async_callback(runtime.aclose)  # type: ignore[attr-defined]
        kind = DiscoveryRunCodeTool if options.discovery else RunCodeTool
        tool = kind(namespace, runtime=runtime, max_timeout=options.max_timeout)
        server = CodeModeServer(tool, runtime, direct=remote if options.direct else None)
        if options.address is None:
            await server.serve_stdio()
        else:
            await server.serve_http(*options.address)


def merge_namespaces(
    local: Mapping[str, ToolProjection], remote: Mapping[str, ToolProjection] | None
) -> dict[str, ToolProjection]:
    """Local tools and upstream tools in one namespace.

    Raises:
        ValueError: When a local tool and an upstream tool share a name.
    """
    merged = dict(local)
    for name, projection in (remote or {}).items():
        if name in merged:
            raise ValueError(
                f"the tool {name!r} comes from --tools and from an --upstream; give the "
                "upstream a prefix: --upstream 'PREFIX=...'"
            )
        merged[name] = projection
    return merged

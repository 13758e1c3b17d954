"""MCP both ways: MCP servers' tools inside snippets, and ``run_code`` served over MCP.

Needs the ``mcp`` extra (``pip install 'ptcbox[mcp]'``): the official ``mcp`` SDK 2.x.
``import ptcbox`` never imports this package.

- :func:`mcp_tools` connects to MCP servers (stdio commands, streamable-HTTP URLs or open
  ``mcp.Client`` objects) and yields their tools as a namespace of
  :class:`MCPToolProjection` for ``aexecute``, runtimes and ``RunCodeTool``.
- :class:`CodeModeServer` serves ``run_code`` (and optionally the upstream tools) over
  MCP; :func:`serve_command` is ``ptcbox mcp serve``, the code-mode proxy included.
- :class:`DiscoveryRunCodeTool`: for large catalogs, names and summaries in the
  description, ``search_tools(query)`` and ``help(name)`` inside the code.
"""

from ptcbox.mcp._command import merge_namespaces, parse_upstream, serve_command
from ptcbox.mcp._connect import MCPConnectError, MCPTools, ServerLike, Upstream, mcp_tools
from ptcbox.mcp._discovery import DiscoveryRunCodeTool, ToolIndex, catalog_lines
from ptcbox.mcp._projection import MCPProtocolError, MCPToolError, MCPToolProjection, ServerGone
from ptcbox.mcp._schema import MCPParam
from ptcbox.mcp._serve import CodeModeServer

__all__ = [
    "CodeModeServer",
    "DiscoveryRunCodeTool",
    "MCPConnectError",
    "MCPParam",
    "MCPProtocolError",
    "MCPToolError",
    "MCPToolProjection",
    "MCPTools",
    "ServerGone",
    "ServerLike",
    "ToolIndex",
    "Upstream",
    "catalog_lines",
    "mcp_tools",
    "merge_namespaces",
    "parse_upstream",
    "serve_command",
]

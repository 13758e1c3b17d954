"""MCP both ways: MCP servers' tools inside snippets, and ``run_code`` served over MCP.

Needs the ``mcp`` extra (``pip install 'ptcbox[mcp]'``): the official ``mcp`` SDK 2.x.
``import ptcbox`` never imports this package.

- :func:`mcp_tools` connects to MCP servers (stdio commands, streamable-HTTP URLs or open
  ``mcp.Client`` objects) and yields their tools as a namespace of
  :class:`MCPToolProjection` for ``aexecute``, runtimes and ``RunCodeTool``.
"""

from ptcbox.mcp._connect import MCPConnectError, MCPTools, ServerLike, Upstream, mcp_tools
from ptcbox.mcp._projection import MCPProtocolError, MCPToolError, MCPToolProjection, ServerGone

__all__ = [
    "MCPConnectError",
    "MCPProtocolError",
    "MCPToolError",
    "MCPToolProjection",
    "MCPTools",
    "ServerGone",
    "ServerLike",
    "Upstream",
    "mcp_tools",
]

"""MCP tools inside a snippet: connect to an MCP server, run code that calls its tools.

The server (``mcp_inventory_server.py``) is started over stdio by the official SDK; its
tools ``get-stock`` and ``catalog.list_items`` become ``get_stock`` and
``catalog_list_items``, typed from their schemas. Needs the ``mcp`` extra.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcp import StdioServerParameters

import ptcbox
from ptcbox.mcp import mcp_tools

SERVER = StdioServerParameters(
    command=sys.executable, args=[str(Path(__file__).with_name("mcp_inventory_server.py"))]
)

CODE = """
low = [i["name"] for i in catalog_list_items(category="tools") if get_stock(sku=i["sku"]) < 5]
print("reorder:", low)
try:
    get_stock(sku="ZZ")
except ToolError as exc:
    print("as expected:", exc)
len(low)
"""


async def main() -> None:
    async with mcp_tools(SERVER) as tools:
        print(tools.stubs)
        result = await ptcbox.aexecute(CODE, tools=tools, runtime="subprocess")
    print(result.render())
    print("tool calls:", [call.name for call in result.tool_calls])


if __name__ == "__main__":
    asyncio.run(main())

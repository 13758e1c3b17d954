"""A small MCP server (the official SDK's ``MCPServer``) for the MCP examples.

Run it over stdio (what ``mcp_tools`` and ``ptcbox mcp serve --upstream`` start), or
over streamable HTTP with ``python examples/mcp_inventory_server.py --http 8765``.
"""

from __future__ import annotations

import sys
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("inventory", log_level="WARNING")


class Item(BaseModel):
    """One catalog item."""

    sku: str
    name: str
    category: Literal["tools", "toys"]
    price: float


ITEMS = [
    Item(sku="A1", name="hammer", category="tools", price=12.5),
    Item(sku="B2", name="yo-yo", category="toys", price=3.0),
    Item(sku="C3", name="saw", category="tools", price=20.0),
]
STOCK = {"A1": 3, "B2": 12, "C3": 0}


@server.tool(name="get-stock")
def get_stock(sku: str) -> int:
    """Units in stock for one SKU."""
    if sku not in STOCK:
        raise ToolError(f"unknown SKU {sku!r}")
    return STOCK[sku]


@server.tool(name="catalog.list_items")
def list_items(category: Literal["tools", "toys"] | None = None) -> list[Item]:
    """Catalog items, optionally of one category."""
    return [i for i in ITEMS if category is None or i.category == category]


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()

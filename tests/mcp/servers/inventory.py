"""A real MCP server (the SDK's ``MCPServer``) for the tests: ``python inventory.py [--http PORT]``.

Tools cover the shapes the projections must handle: names with ``-`` and ``.``, an
``int`` result (the ``{"result": ...}`` wrapper), pydantic models (``$defs``), enums,
optional arguments, no output schema, ``is_error``, a slow tool, a crash mid-call and a
huge result.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

server = MCPServer("inventory", log_level="WARNING")

STOCK = {"A1": 3, "B2": 12, "C3": 0}


class Item(BaseModel):
    """One item of the catalog."""

    sku: str
    name: str
    category: Literal["tools", "toys"]
    price: float


class Address(BaseModel):
    city: str
    zip_code: str


class Customer(BaseModel):
    id: str
    name: str
    address: Address
    tags: list[str] = Field(default_factory=list)


ITEMS = [
    Item(sku="A1", name="hammer", category="tools", price=12.5),
    Item(sku="B2", name="yo-yo", category="toys", price=3.0),
    Item(sku="C3", name="saw", category="tools", price=20.0),
]


@server.tool(name="get-stock")
def get_stock(sku: str) -> int:
    """Units in stock for one SKU."""
    if sku not in STOCK:
        raise ToolError(f"unknown SKU {sku!r}; known: {', '.join(sorted(STOCK))}")
    return STOCK[sku]


@server.tool(name="catalog.list_items")
def list_items(category: Literal["tools", "toys"] | None = None, limit: int = 10) -> list[Item]:
    """List catalog items, optionally of one category.

    Args:
        category: Only items of this category.
        limit: At most this many items.
    """
    items = [i for i in ITEMS if category is None or i.category == category]
    return items[:limit]


@server.tool()
def get_customer(customer_id: str) -> Customer:
    """One customer with their address."""
    return Customer(id=customer_id, name="Ada", address=Address(city="Oslo", zip_code="0150"))


@server.tool(name="notes/read", structured_output=False)
def read_note(note_id: str) -> str:
    """Read a note as text (no output schema)."""
    return f"note {note_id}: restock hammers"


@server.tool()
def fail(message: str) -> str:
    """Always fails with the given message."""
    raise ToolError(message)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await anyio.sleep(seconds)
    return "slept"


@server.tool()
def crash() -> str:
    """Kill the server process in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


@server.tool()
def huge(size: int) -> str:
    """A text result of ``size`` characters."""
    return "x" * size


@server.tool(name="get_stock")
def get_stock_clash(sku: str) -> int:
    """Registered only with --clash: same Python name as get-stock."""
    return 0


@server.tool()
async def progress(steps: int, ctx: Context) -> int:
    """Report progress, then answer the number of steps."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps)
    return steps


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


if "--clash" not in sys.argv:
    server.remove_tool("get_stock")


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        time.sleep(0)
        server.run()

"""Discovery mode: one line per tool in the description, search_tools() and help() in code."""

from __future__ import annotations

from typing import Any

import pytest
from _mcp_helpers import SERVED_TOOLS, ptcbox_serve
from mcp import Client, StdioServerParameters

from ptcbox.mcp import DiscoveryRunCodeTool, ToolIndex, catalog_lines, mcp_tools
from ptcbox.projections import DirectProjection

pytestmark = pytest.mark.anyio


def get_stock(sku: str) -> int:
    """Units in stock for one SKU."""
    return {"A1": 3}.get(sku, 0)


def find_customer(name: str, limit: int = 5) -> list[str]:
    """Search customers by name."""
    return [name][:limit]


def cancel_invoice(invoice_id: str, reason: str = "") -> bool:
    """Cancel an unpaid invoice."""
    return True


TOOLS = [get_stock, find_customer, cancel_invoice]


def test_catalog_lines_and_index() -> None:
    namespace = {f.__name__: DirectProjection(f.__name__, f) for f in TOOLS}
    assert catalog_lines(namespace).splitlines() == [
        "cancel_invoice(invoice_id, reason=...)  # Cancel an unpaid invoice.",
        "find_customer(name, limit=...)  # Search customers by name.",
        "get_stock(sku)  # Units in stock for one SKU.",
    ]
    index = ToolIndex(namespace)
    assert index.search("how many units are in stock")[0] == "get_stock"
    assert index.search("invoice")[0] == "cancel_invoice"
    assert index.search("zebra") == []
    assert index.stub("get_stock").startswith("def get_stock(sku: str) -> int:")


def test_description_lists_names_not_stubs() -> None:
    tool = DiscoveryRunCodeTool(TOOLS)
    assert "get_stock(sku)  # Units in stock for one SKU." in tool.description
    assert "def get_stock" not in tool.description
    assert "search_tools(" in tool.description and "help('tool_name')" in tool.description
    assert {"search_tools", "help", "get_stock"} <= set(tool.namespace())


def test_a_tool_named_help_is_refused() -> None:
    def help(topic: str) -> str:
        """Our own help."""
        return topic

    with pytest.raises(ValueError, match="rename your 'help'"):
        DiscoveryRunCodeTool([help])


async def test_search_and_help_inside_snippets(runtime: Any) -> None:
    tool = DiscoveryRunCodeTool(TOOLS, runtime=runtime)
    code = """
print(search_tools("units in stock", limit=1))
print(help("find_customer"))
try:
    help(get_stock)
except ToolError as exc:
    print("refused:", exc)
get_stock(sku="A1")
"""
    result = await runtime.execute(code, tool.namespace())
    assert result.ok, result.render()
    assert result.stdout.startswith('def get_stock(sku: str) -> int:\n    """Units in stock')
    assert "def find_customer(name: str, limit: int = 5) -> list[str]:" in result.stdout
    assert "def cancel_invoice" not in result.stdout
    assert "help('" in result.stdout.split("refused:", 1)[1]
    assert result.value == 3


async def test_discovery_over_mcp_tools(inventory: StdioServerParameters) -> None:
    async with mcp_tools(inventory) as tools:
        tool = DiscoveryRunCodeTool(tools, runtime=None)
        try:
            result = await tool.runtime.execute(
                "print(search_tools('customer address', limit=1))", tool.namespace()
            )
        finally:
            await tool.aclose()
    assert "class Customer(TypedDict):" in result.stdout
    assert "def get_customer(customer_id: str) -> Customer:" in result.stdout


async def test_serve_with_discovery() -> None:
    server = ptcbox_serve("--tools", f"{SERVED_TOOLS}:TOOLS", "--discovery", "--runtime", "thread")
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
        found = await client.call_tool("run_code", {"code": "print(search_tools('population'))"})
    description = listed[0].description or ""
    assert "get_population(city)  # Population of a city." in description
    assert "def get_population" not in description
    text = "".join(getattr(b, "text", "") for b in found.content)
    assert "def get_population(city: str) -> int:" in text

"""mcp_tools against real MCP servers: stubs, calls in both runtimes, several servers,
clashing names, and servers that are down, slow, garbage or crash."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _mcp_helpers import INVENTORY, free_port, mcp_servers, stdio, wait_gone
from mcp import Client, StdioServerParameters

import ptcbox
from ptcbox.mcp import MCPConnectError, Upstream, mcp_tools

pytestmark = pytest.mark.anyio

GARBAGE = Path(__file__).parent / "servers" / "garbage.py"


async def test_stubs_show_types_names_and_unknown_shapes(inventory: StdioServerParameters) -> None:
    async with mcp_tools(inventory) as tools:
        stubs = tools.stubs
        origins = tools.origins()
    assert "def get_stock(sku: str) -> int:" in stubs
    assert "MCP tool 'get-stock'" in stubs
    assert (
        "def catalog_list_items(category: Literal['tools', 'toys'] | None = None, "
        "limit: int = 10) -> list[Item]:" in stubs
    )
    assert "class Item(TypedDict):\n    sku: str" in stubs
    assert "class Customer(TypedDict):" in stubs and "    address: Address" in stubs
    assert "def get_customer(customer_id: str) -> Customer:" in stubs
    assert "def notes_read(note_id: str) -> Any:" in stubs
    assert "shape is unknown" in stubs and "Print a sample" in stubs
    assert "category: Only items of this category." in stubs
    assert origins["notes_read"][1] == "notes/read"
    compile(stubs, "<stubs>", "exec")


async def test_calls_in_both_runtimes(inventory: StdioServerParameters, runtime: Any) -> None:
    code = """
low = [i["sku"] for i in catalog_list_items(category="tools") if get_stock(sku=i["sku"]) < 5]
print(low, get_stock("B2") + 1)
print(get_customer(customer_id="c1")["address"]["city"])
print(notes_read(note_id="n1"))
len(catalog_list_items())
"""
    async with mcp_tools(inventory) as tools:
        result = await runtime.execute(code, tools)
    assert result.ok, result.render()
    assert result.stdout == "['A1', 'C3'] 13\nOslo\nnote n1: restock hammers\n"
    assert result.value == 3
    assert [c.name for c in result.tool_calls][:3] == [
        "catalog_list_items",
        "get_stock",
        "get_stock",
    ]


async def test_streamable_http_and_stdio_together_with_prefixes(
    inventory: StdioServerParameters, inventory_url: str, runtime: Any
) -> None:
    servers = (Upstream(inventory, prefix="local"), Upstream(inventory_url, prefix="remote"))
    async with mcp_tools(*servers) as tools:
        assert {"local_get_stock", "remote_get_stock"} <= set(tools)
        assert "class LocalItem(TypedDict):" in tools.stubs
        assert "class RemoteItem(TypedDict):" in tools.stubs
        result = await runtime.execute(
            "local_get_stock(sku='A1') + remote_get_stock(sku='B2')", tools
        )
    assert result.value == 15, result.render()


async def test_an_open_client_is_used_and_left_open(inventory_url: str) -> None:
    async with Client(inventory_url) as client:
        async with mcp_tools(client) as tools:
            result = await ptcbox.aexecute("get_stock(sku='C3')", tools=tools, runtime="thread")
        assert result.value == 0
        again = await client.call_tool("get-stock", {"sku": "A1"})
        assert again.structured_content == {"result": 3}


async def test_names_that_clash_after_sanitising_are_refused() -> None:
    with pytest.raises(
        ValueError, match=r"'get-stock' .* and 'get_stock' .* both become 'get_stock'"
    ):
        async with mcp_tools(stdio(INVENTORY, "--clash")):
            pass
    rename = {"get-stock": "stock_level"}
    async with mcp_tools(Upstream(stdio(INVENTORY, "--clash"), rename=rename)) as tools:
        assert {"stock_level", "get_stock"} <= set(tools)
        result = await ptcbox.aexecute("stock_level(sku='A1')", tools=tools, runtime="thread")
    assert result.value == 3


async def test_the_same_server_twice_needs_a_prefix(inventory: StdioServerParameters) -> None:
    with pytest.raises(ValueError, match="give one server a prefix"):
        async with mcp_tools(inventory, inventory):
            pass


async def test_a_command_that_does_not_exist() -> None:
    with pytest.raises(MCPConnectError, match="No such file"):
        async with mcp_tools(StdioServerParameters(command="/nonexistent/mcp-server")):
            pass


async def test_a_url_nobody_listens_on() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(MCPConnectError, match=f"cannot connect to the MCP server {url}"):
        async with mcp_tools(url, connect_timeout=10):
            pass


async def test_a_server_that_answers_garbage_is_refused_in_time() -> None:
    before = mcp_servers()
    start = time.monotonic()
    with pytest.raises(MCPConnectError, match="no answer within 2 seconds"):
        async with mcp_tools(stdio(GARBAGE), connect_timeout=2):
            pass
    assert time.monotonic() - start < 30
    assert not wait_gone(mcp_servers() - before)


async def test_a_server_that_exits_at_once() -> None:
    quits = StdioServerParameters(command=sys.executable, args=["-c", "pass"])
    with pytest.raises(MCPConnectError, match="cannot connect"):
        async with mcp_tools(quits, connect_timeout=10):
            pass


async def test_an_in_process_server_object() -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("tiny", log_level="WARNING")

    @server.tool(name="add.two")
    def add_two(a: int, b: int = 2) -> int:
        """Add b to a."""
        return a + b

    async with mcp_tools(Upstream(server, prefix="m")) as tools:
        assert tools.origins() == {"m_add_two": ("'m'", "add.two")}
        result = await ptcbox.aexecute("m_add_two(40)", tools=tools, runtime="thread")
    assert result.value == 42


async def test_something_that_is_not_a_server() -> None:
    with pytest.raises(TypeError, match="StdioServerParameters, a URL string"):
        async with mcp_tools(42):  # type: ignore[arg-type]
            pass

"""The MCP examples run and print what they promise; the README's MCP commands work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _mcp_helpers import PTCBOX, free_port, start_http, stop
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

pytestmark = pytest.mark.anyio


def test_mcp_tools_example() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "mcp_tools.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "def get_stock(sku: str) -> int:" in done.stdout
    assert "def catalog_list_items(category: Literal['tools', 'toys'] | None = None)" in done.stdout
    assert "reorder: ['hammer', 'saw']" in done.stdout
    assert "as expected: Error executing tool get-stock: unknown SKU 'ZZ'" in done.stdout
    assert "[value] 2" in done.stdout


async def test_readme_proxy_command_over_stdio() -> None:
    """`ptcbox mcp serve --upstream "python examples/mcp_inventory_server.py"` from the README."""
    upstream = f"{sys.executable} examples/mcp_inventory_server.py"
    server = StdioServerParameters(
        command=PTCBOX, args=["mcp", "serve", "--upstream", upstream], cwd=str(ROOT)
    )
    async with Client(server) as client:
        result = await client.call_tool("run_code", {"code": "get_stock(sku='B2')"})
    assert result.content[0].text == "[value] 12"  # type: ignore[union-attr]


async def test_readme_serve_command_over_http() -> None:
    """`ptcbox mcp serve --tools cli_tools:TOOLS --http 127.0.0.1:PORT` from the README."""
    port = free_port()
    args = [PTCBOX, "mcp", "serve", "--tools", "examples/cli_tools.py:TOOLS", "--runtime", "thread"]
    proc = start_http([*args, "--http", f"127.0.0.1:{port}"], port)
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            listed = (await client.list_tools()).tools
            result = await client.call_tool("run_code", {"code": "print(1 + 1)"})
    finally:
        stop(proc)
    assert [t.name for t in listed] == ["run_code"]
    assert result.content[0].text == "[stdout]\n```\n2\n```"  # type: ignore[union-attr]

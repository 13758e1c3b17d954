"""The code-mode proxy: ``ptcbox mcp serve --upstream ...`` in front of real MCP servers."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from _mcp_helpers import PTCBOX, SERVED_TOOLS, free_port, inventory_command, ptcbox_serve
from mcp import Client, StdioServerParameters

from ptcbox.mcp import parse_upstream

pytestmark = pytest.mark.anyio

TOOLS = f"{SERVED_TOOLS}:TOOLS"


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _serve_cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [PTCBOX, "mcp", "serve", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_parse_upstream() -> None:
    url = parse_upstream("crm=http://127.0.0.1:9/mcp")
    assert (url.server, url.prefix) == ("http://127.0.0.1:9/mcp", "crm")
    command = parse_upstream("python 'my server.py' --flag=1")
    assert isinstance(command.server, StdioServerParameters)
    assert command.server.args == ["my server.py", "--flag=1"] and command.prefix == ""
    assert command.server.env is not None and command.server.env.get("PATH") == os.environ["PATH"]
    with pytest.raises(ValueError, match="No closing quotation"):
        parse_upstream("python 'oops")


async def test_proxy_offers_run_code_and_direct_tools() -> None:
    server = ptcbox_serve(
        "--tools", TOOLS, "--upstream", f"inv={inventory_command()}", "--direct", "--timeout", "5"
    )
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        direct = await client.call_tool("inv_get_stock", {"sku": "A1"})
        refused = await client.call_tool("inv_fail", {"message": "shelf empty"})
        code = """
low = [i["name"] for i in inv_catalog_list_items() if inv_get_stock(sku=i["sku"]) < 5]
print(low, get_population(city="Lisbon"))
"""
        ran = await client.call_tool("run_code", {"code": code})
        slow = await client.call_tool("run_code", {"code": "inv_slow(seconds=60)"})
        crashed = await client.call_tool("run_code", {"code": "inv_crash()"})
        after = await client.call_tool("run_code", {"code": "get_population(city='Oslo')"})
        gone = await client.call_tool("inv_get_stock", {"sku": "A1"})
    assert {"run_code", "inv_get_stock", "inv_catalog_list_items"} <= set(listed)
    assert listed["inv_get_stock"].input_schema["required"] == ["sku"]
    assert "def inv_get_stock(sku: str) -> int:" in (listed["run_code"].description or "")
    assert direct.structured_content == {"result": 3} and not direct.is_error
    assert refused.is_error and "shelf empty" in _text(refused)
    assert _text(ran) == "[stdout]\n```\n['hammer', 'saw'] 545000\n```", _text(ran)
    assert slow.is_error and "TimeoutError" in _text(slow)
    assert crashed.is_error and "ServerGone" in _text(crashed)
    assert _text(after) == "[value] 709000"
    assert gone.is_error and "is gone" in _text(gone)


async def test_proxy_over_a_streamable_http_upstream(inventory_url: str) -> None:
    async with Client(ptcbox_serve("--upstream", inventory_url, "--runtime", "thread")) as client:
        ran = await client.call_tool("run_code", {"code": "get_stock(sku='B2') * 2"})
    assert _text(ran) == "[value] 24"


def test_an_upstream_that_is_down_is_a_usage_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    down = _serve_cli("--upstream", url)
    assert down.returncode == 2
    assert f"cannot connect to the MCP server {url}" in down.stderr


def test_two_upstreams_whose_names_clash_need_prefixes() -> None:
    twice = _serve_cli("--upstream", inventory_command(), "--upstream", inventory_command())
    assert twice.returncode == 2 and "give one server a prefix" in twice.stderr


def test_policy_data_without_the_extra_is_a_usage_error(
    hide_modules: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    """Without numpy/pandas, `--policy data` ended the server with an ImportError traceback."""
    from ptcbox.mcp import serve_command
    from ptcbox.sandbox import SandboxPolicy

    hide_modules("numpy", "pandas")
    assert serve_command({}, upstreams=[], policy=SandboxPolicy.data()) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptcbox mcp serve: the policy allows numpy and pandas, which are not")

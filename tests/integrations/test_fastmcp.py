"""PtcboxSandboxProvider as the sandbox of the real FastMCP CodeMode, driven by FastMCP's client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("fastmcp", reason="needs the fastmcp extra: pip install -e '.[fastmcp]'")

from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError as FastMCPToolError
from fastmcp.experimental.transforms.code_mode import CodeMode

from ptcbox.integrations.fastmcp import (
    PtcboxSandboxProvider,
    with_top_level_return,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["thread", "subprocess"])
async def provider(request: pytest.FixtureRequest) -> AsyncIterator[PtcboxSandboxProvider]:
    made = PtcboxSandboxProvider(request.param, timeout=20)
    try:
        yield made
    finally:
        await made.aclose()


def _server(provider: PtcboxSandboxProvider) -> FastMCP:
    server = FastMCP("shop")

    @server.tool
    def get_price(sku: str) -> float:
        """Price of one SKU."""
        return {"A1": 2.5, "B2": 4.0}[sku]

    @server.tool
    def list_skus() -> list[str]:
        """Every SKU."""
        return ["A1", "B2"]

    server.add_transform(CodeMode(sandbox_provider=provider))
    return server


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_code_mode_runs_on_cpython(provider: PtcboxSandboxProvider) -> None:
    code = """
skus = (await call_tool("list_skus", {}))["result"]
total = 0
for sku in skus:
    total += (await call_tool("get_price", {"sku": sku}))["result"]
return {"skus": skus, "total": total}
"""
    async with Client(_server(provider)) as client:
        names = {tool.name for tool in await client.list_tools()}
        result = await client.call_tool("execute", {"code": code})
    assert "execute" in names and "get_price" not in names
    assert result.structured_content == {"skus": ["A1", "B2"], "total": 6.5}


async def test_failures_come_back_as_errors_the_model_can_read(
    provider: PtcboxSandboxProvider,
) -> None:
    async with Client(_server(provider)) as client:
        failed = await client.call_tool(
            "execute", {"code": "print('halfway')\nreturn 1 / 0"}, raise_on_error=False
        )
        unknown = await client.call_tool(
            "execute", {"code": "return await call_tool('nope', {})"}, raise_on_error=False
        )
        refused = await client.call_tool("execute", {"code": "import os"}, raise_on_error=False)
    assert failed.is_error and "ZeroDivisionError" in _text(failed) and "halfway" in _text(failed)
    assert unknown.is_error and "nope" in _text(unknown)
    assert refused.is_error and "os" in _text(refused)


async def test_inputs_stdout_and_final_expression(provider: PtcboxSandboxProvider) -> None:
    assert await provider.run("x * 2", inputs={"x": 21}) == 42
    assert await provider.run("print('hi')") == "hi\n"
    assert await provider.run("print('hi')\nreturn 7") == {"value": 7, "stdout": "hi\n"}

    async def double(n: int) -> int:
        return n * 2

    assert await provider.run("return await double(4)", external_functions={"double": double}) == 8
    with pytest.raises(FastMCPToolError, match="TimeoutError"):
        await PtcboxSandboxProvider("thread", timeout=0.5).run("while True:\n    pass")


def test_top_level_return_is_wrapped_only_when_needed() -> None:
    assert with_top_level_return("x = 1\nx") == "x = 1\nx"
    wrapped = with_top_level_return("if True:\n    return 1\n")
    assert wrapped.startswith("async def ptcbox_main():") and wrapped.endswith(
        "await ptcbox_main()"
    )
    assert with_top_level_return("def f():\n    return 1") == "def f():\n    return 1"
    assert with_top_level_return("return (") == "return ("


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="'thread' or 'subprocess'"):
        PtcboxSandboxProvider("monty")  # type: ignore[arg-type]

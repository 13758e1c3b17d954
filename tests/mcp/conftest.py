"""Fixtures for the MCP tests: real MCP servers (stdio subprocesses and streamable HTTP
on 127.0.0.1) and both ptcbox runtimes. Skipped when the ``mcp`` extra is absent."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

pytest.importorskip("mcp", reason="needs the mcp extra: pip install -e '.[mcp]'")

from _mcp_helpers import INVENTORY, free_port, start_http, stdio, stop
from mcp import StdioServerParameters

from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def inventory() -> StdioServerParameters:
    """The inventory test server over stdio."""
    return stdio(INVENTORY)


@pytest.fixture(scope="module")
def inventory_url() -> Iterator[str]:
    """The inventory test server over streamable HTTP on a free 127.0.0.1 port."""
    port = free_port()
    proc = start_http([sys.executable, str(INVENTORY), "--http", str(port)], port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop(proc)


@pytest.fixture(params=["thread", "subprocess"])
async def runtime(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """Each ptcbox runtime in turn."""
    made = ThreadRuntime() if request.param == "thread" else SubprocessRuntime()
    try:
        yield made
    finally:
        await made.aclose()

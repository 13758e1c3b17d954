"""MCPToolProjection inside snippets: results, is_error, timeouts, a server that dies
mid-call, huge results, and misuse, against the real inventory server in both runtimes."""

from __future__ import annotations

from typing import Any

import pytest
from _mcp_helpers import mcp_servers, wait_gone
from mcp import StdioServerParameters

import ptcbox
from ptcbox.mcp import Upstream, mcp_tools

pytestmark = pytest.mark.anyio


async def test_is_error_raises_in_the_snippet_with_the_servers_message(
    inventory: StdioServerParameters, runtime: Any
) -> None:
    code = """
try:
    get_stock(sku="ZZ")
except ToolError as exc:
    print("caught:", exc)
fail(message="disk full on shelf 3")
"""
    async with mcp_tools(inventory) as tools:
        result = await runtime.execute(code, tools)
    assert "caught:" in result.stdout and "unknown SKU 'ZZ'; known: A1, B2, C3" in result.stdout
    assert result.return_code == 1 and result.error_type == "MCPToolError"
    assert "disk full on shelf 3" in (result.error or "")
    assert result.tool_calls[-1].ok is False


async def test_a_slow_call_times_out_and_the_next_call_works(
    inventory: StdioServerParameters, runtime: Any
) -> None:
    async with mcp_tools(Upstream(inventory, timeout=0.5)) as tools:
        slow = await runtime.execute("slow(seconds=30)", tools)
        fine = await runtime.execute("get_stock(sku='A1')", tools)
    assert slow.return_code == 1
    assert "TimeoutError: MCP tool 'slow'" in (slow.error or "")
    assert "did not answer within 0.5 seconds" in (slow.error or "")
    assert fine.value == 3, fine.render()


async def test_a_server_that_dies_mid_call_gives_a_clear_error(
    inventory: StdioServerParameters, runtime: Any
) -> None:
    before = mcp_servers()
    async with mcp_tools(inventory) as tools:
        server_pid = (await runtime.execute("pid()", tools)).value
        crashed = await runtime.execute("crash()", tools)
        after = await runtime.execute("get_stock(sku='A1')", tools)
    assert crashed.return_code == 1 and "ServerGone" in (crashed.error or "")
    assert "is gone" in (crashed.error or "") and "restarted" in (crashed.error or "")
    assert after.return_code == 1 and "ServerGone" in (after.error or "")
    assert not wait_gone({server_pid})
    assert not wait_gone(mcp_servers() - before)


async def test_a_huge_result_reaches_the_snippet(
    inventory: StdioServerParameters, runtime: Any
) -> None:
    async with mcp_tools(inventory, timeout=60) as tools:
        result = await runtime.execute("len(huge(size=3_000_000))", tools)
    assert result.value == 3_000_000, result.render()


async def test_tools_stop_working_after_the_block(inventory: StdioServerParameters) -> None:
    async with mcp_tools(inventory) as tools:
        pass
    result = await ptcbox.aexecute("get_stock(sku='A1')", tools=tools, runtime="thread")
    assert result.return_code == 1 and "connection to" in (result.error or "")
    assert "is closed" in (result.error or "")


async def test_blocking_execute_gets_a_clear_error(inventory: StdioServerParameters) -> None:
    async with mcp_tools(inventory) as tools:
        result = ptcbox.execute("get_stock(sku='A1')", tools=tools, runtime="thread")
    assert result.return_code == 1
    assert "ptcbox.aexecute" in (result.error or ""), result.error


async def test_positional_arguments_and_wrong_arguments(inventory: StdioServerParameters) -> None:
    async with mcp_tools(inventory) as tools:
        bad = await ptcbox.aexecute("get_stock(sku='A1', colour=2)", tools=tools, runtime="thread")
    assert bad.return_code == 1
    assert "get_stock(sku: str)" in (bad.error or "") and "colour" in (bad.error or "")


def _projection(output_schema: dict[str, Any] | None) -> Any:
    import inspect

    from ptcbox.mcp import MCPToolProjection

    return MCPToolProjection(
        name="t",
        mcp_name="t",
        client=None,  # type: ignore[arg-type]  # decode() never touches the client
        server="'test'",
        doc="",
        signature=inspect.Signature(),
        params=(),
        output_schema=output_schema,
        timeout=None,
    )


WRAPPED = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}


def test_decode_prefers_structured_content_and_unwraps_result() -> None:
    from mcp.types import CallToolResult, TextContent

    text = [TextContent(type="text", text="7")]
    assert (
        _projection(WRAPPED).decode(CallToolResult(content=text, structured_content={"result": 7}))
        == 7
    )
    assert (
        _projection(WRAPPED).decode(CallToolResult(content=text)) == 7
    )  # JSON text, schema says so
    assert _projection(None).decode(CallToolResult(content=text)) == "7"  # no schema: the text
    obj = {"result": 1, "more": 2}
    assert (
        _projection({"type": "object"}).decode(CallToolResult(content=[], structured_content=obj))
        == obj
    )


def test_decode_several_blocks_and_errors() -> None:
    from mcp.types import CallToolResult, ImageContent, TextContent

    from ptcbox.mcp import MCPToolError

    two = [TextContent(type="text", text="a"), TextContent(type="text", text="b")]
    assert _projection(None).decode(CallToolResult(content=two)) == "a\nb"
    image = ImageContent(type="image", data="aGk=", mime_type="image/png")
    mixed = _projection(None).decode(CallToolResult(content=[two[0], image]))
    assert mixed[0] == "a" and mixed[1]["mimeType"] == "image/png"
    assert _projection(None).decode(CallToolResult(content=[])) is None
    with pytest.raises(MCPToolError, match=r"^disk full$"):
        _projection(None).decode(
            CallToolResult(content=[TextContent(type="text", text="disk full")], is_error=True)
        )


async def test_a_server_that_answers_garbage_mid_call() -> None:
    from _mcp_helpers import SERVERS, stdio

    broken = Upstream(stdio(SERVERS / "broken.py"), timeout=2)
    async with mcp_tools(broken) as tools:
        garbage = await ptcbox.aexecute("garbage()", tools=tools, runtime="thread")
        shape = await ptcbox.aexecute("bad_shape()", tools=tools, runtime="thread")
        fine = await ptcbox.aexecute("echo()", tools=tools, runtime="thread")
    assert "TimeoutError: MCP tool 'garbage'" in (garbage.error or "")
    assert "MCPProtocolError: MCP server 'python broken.py' sent a malformed result" in (
        shape.error or ""
    )
    assert "content: Input should be a valid list" in (shape.error or "")
    assert fine.value == "ok"


async def test_gather_runs_mcp_calls_concurrently(
    inventory: StdioServerParameters, runtime: Any
) -> None:
    code = """
import asyncio
done = await asyncio.gather(*[slow(seconds=1.5) for _ in range(6)])
len(done)
"""
    async with mcp_tools(inventory) as tools:
        result = await runtime.execute(code, tools)
    assert result.value == 6, result.render()
    assert sum(call.duration_s for call in result.tool_calls) >= 9
    assert result.duration_s < 6  # one after another it would take 9 s

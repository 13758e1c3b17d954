"""``ptcbox mcp serve`` driven by the SDK's real client: stdio and streamable HTTP,
sessions, streamed output, errors, and clients that leave mid-run."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from _mcp_helpers import (
    PTCBOX,
    SERVED_TOOLS,
    free_port,
    ptcbox_serve,
    start_http,
    stop,
    wait_gone,
)
from mcp import Client
from served_tools import TOOLS as TOOLS_LIST

from ptcbox import RunCodeTool
from ptcbox.mcp import CodeModeServer
from ptcbox.runtimes import ThreadRuntime

pytestmark = pytest.mark.anyio

TOOLS = f"{SERVED_TOOLS}:TOOLS"
SPIN = """
import time
while True:
    tick()
    time.sleep(0.05)
"""


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.parametrize("runtime", ["thread", "subprocess"])
async def test_stdio_run_code_keeps_variables_and_streams_output(runtime: str) -> None:
    logs: list[str] = []
    progress: list[str] = []

    async def on_log(params: Any) -> None:
        logs.append(str(params.data))

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    server = ptcbox_serve("--tools", TOOLS, "--runtime", runtime)
    async with Client(server, logging_callback=on_log, log_level="info") as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == ["run_code"]
        assert "def get_population(city: str) -> int:" in (listed[0].description or "")
        assert listed[0].input_schema["required"] == ["code"]
        first = await client.call_tool(
            "run_code",
            {"code": "n = get_population(city='Oslo')\nprint('got', n)"},
            progress_callback=on_progress,
        )
        second = await client.call_tool("run_code", {"code": "n + 1"})
        failed = await client.call_tool("run_code", {"code": "print('before')\n1/0"})
        empty = await client.call_tool("run_code", {"code": "  "})
    assert (_text(first), first.is_error) == ("[stdout]\n```\ngot 709000\n```", False)
    assert (_text(second), second.is_error) == ("[value] 709001", False)
    assert failed.is_error and "before" in _text(failed)
    assert "[error: ZeroDivisionError]" in _text(failed)
    assert empty.is_error and "'code' is empty" in _text(empty)
    assert any("got 709000" in m for m in progress), progress
    assert any("got 709000" in m for m in logs), logs


async def test_stdio_client_that_leaves_mid_run_stops_the_code(tmp_path: Path) -> None:
    ticks = tmp_path / "ticks"
    env = {"PTCBOX_TICK_FILE": str(ticks)}
    server = ptcbox_serve("--tools", TOOLS, "--runtime", "subprocess", env=env)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    async with Client(server) as client:
        async with anyio.create_task_group() as calls:  # leave once the code is running
            calls.start_soon(lambda: client.call_tool("run_code", {"code": SPIN}))
            deadline = time.monotonic() + 60
            while not (ticks.exists() and ticks.read_text().count("\n") > 3):
                assert time.monotonic() < deadline, "the snippet never ran"
                await anyio.sleep(0.05)
            calls.cancel_scope.cancel()
        spawned = {p.pid for p in psutil.Process().children(recursive=True)} - before
    assert not wait_gone(spawned, limit=20), "ptcbox mcp serve left processes behind"
    count = ticks.read_text().count("\n")
    await anyio.sleep(0.5)
    assert ticks.read_text().count("\n") == count


async def test_http_cancelled_call_stops_the_code_and_server_keeps_serving(
    tmp_path: Path,
) -> None:
    port = free_port()
    ticks = tmp_path / "ticks"
    args = [PTCBOX, "mcp", "serve", "--tools", TOOLS, "--runtime", "thread"]
    proc = start_http(
        [*args, "--http", f"127.0.0.1:{port}"], port, env={"PTCBOX_TICK_FILE": str(ticks)}
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with Client(url) as client, anyio.create_task_group() as calls:
            calls.start_soon(lambda: client.call_tool("run_code", {"code": SPIN}))
            deadline = time.monotonic() + 60
            while not (ticks.exists() and ticks.read_text().count("\n") > 3):
                assert time.monotonic() < deadline, "the snippet never ran"
                await anyio.sleep(0.05)
            calls.cancel_scope.cancel()  # the client cancels the call mid-run
        deadline = time.monotonic() + 15
        while True:  # the cancelled execution stops ticking
            count = ticks.read_text().count("\n")
            await anyio.sleep(0.5)
            if ticks.read_text().count("\n") == count:
                break
            assert time.monotonic() < deadline, "the execution kept running after the cancel"
        async with Client(url) as client:
            again = await client.call_tool("run_code", {"code": "get_population(city='Porto')"})
        assert _text(again) == "[value] 232000"
    finally:
        stop(proc)


async def test_http_sessions_keep_variables_only_for_handshake_clients() -> None:
    port = free_port()
    args = [PTCBOX, "mcp", "serve", "--tools", TOOLS, "--runtime", "thread"]
    proc = start_http([*args, "--http", f"127.0.0.1:{port}"], port)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with Client(url, mode="legacy") as client:
            await client.call_tool("run_code", {"code": "n = 41"})
            kept = await client.call_tool("run_code", {"code": "n + 1"})
        async with Client(url, mode="legacy") as client:
            fresh = await client.call_tool("run_code", {"code": "n"})
        async with Client(url) as client:  # 2026-07-28: stateless over HTTP
            await client.call_tool("run_code", {"code": "m = 1"})
            stateless = await client.call_tool("run_code", {"code": "m"})
    finally:
        stop(proc)
    assert proc.returncode == 0, "SIGTERM should end the server cleanly"
    assert _text(kept) == "[value] 42"
    assert fresh.is_error and "NameError" in _text(fresh)
    assert stateless.is_error and "NameError" in _text(stateless)


def _serve_cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [PTCBOX, "mcp", "serve", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_bad_usage_exits_2() -> None:
    no_tools = _serve_cli()
    assert no_tools.returncode == 2 and "--tools" in no_tools.stderr
    bad_http = _serve_cli("--tools", TOOLS, "--http", "nowhere")
    assert bad_http.returncode == 2 and "HOST:PORT" in bad_http.stderr
    direct = _serve_cli("--tools", TOOLS, "--direct")
    assert direct.returncode == 2 and "--upstream" in direct.stderr


class _CountingThreadRuntime(ThreadRuntime):
    """A real ThreadRuntime that counts the sessions it opened and closed."""

    def __init__(self) -> None:
        super().__init__()
        self.opened = 0
        self.sessions_closed = 0

    def session(self) -> Any:
        session = super().session()
        self.opened += 1
        close = session.aclose

        async def aclose() -> None:
            self.sessions_closed += 1
            await close()

        session.aclose = aclose  # type: ignore[method-assign]
        return session


async def test_a_handshake_session_owns_one_ptcbox_session_closed_with_it() -> None:
    runtime = _CountingThreadRuntime()
    try:
        server = CodeModeServer(RunCodeTool(TOOLS_LIST, runtime=runtime), runtime)
        async with Client(server.server, mode="legacy") as client:
            await client.call_tool("run_code", {"code": "n = 1"})
            kept = await client.call_tool("run_code", {"code": "n + 1"})
            assert (runtime.opened, runtime.sessions_closed) == (1, 0)
        assert _text(kept) == "[value] 2"
        assert (runtime.opened, runtime.sessions_closed) == (1, 1)
        async with Client(server.server) as client:  # 2026-07-28: one session per call
            await client.call_tool("run_code", {"code": "1"})
        assert (runtime.opened, runtime.sessions_closed) == (2, 2)
    finally:
        await runtime.aclose()


async def test_a_subprocess_session_ended_by_a_timeout_restarts_with_a_note() -> None:
    server = ptcbox_serve("--tools", TOOLS, "--runtime", "subprocess")
    async with Client(server) as client:
        await client.call_tool("run_code", {"code": "x = 1"})
        stuck = await client.call_tool("run_code", {"code": "while True:\n    pass", "timeout": 1})
        after = await client.call_tool("run_code", {"code": "x"})
        again = await client.call_tool("run_code", {"code": "y = 2\ny"})
    assert stuck.is_error and "TimeoutError" in _text(stuck)
    assert _text(after).startswith("[note: the previous session ended")
    assert after.is_error and "NameError" in _text(after)
    assert _text(again) == "[value] 2"

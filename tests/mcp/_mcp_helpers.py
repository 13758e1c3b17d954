"""Helpers for the MCP tests: start real MCP servers (stdio subprocesses, streamable HTTP
on a free 127.0.0.1 port) and stop them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

SERVERS = Path(__file__).parent / "servers"
INVENTORY = SERVERS / "inventory.py"


def stdio(script: Path | str, *args: str) -> StdioServerParameters:
    """Parameters that start ``script`` with this interpreter as a stdio MCP server."""
    return StdioServerParameters(command=sys.executable, args=[str(script), *args])


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[Any], limit: float = 30.0) -> None:
    """Block until something accepts connections on ``port`` (or fail)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode} before listening")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listened on port {port} within {limit} s")


def start_http(
    args: list[str], port: int, env: dict[str, str] | None = None
) -> subprocess.Popen[Any]:
    """Start a server process that listens on ``port``; waits until it does."""
    proc = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    try:
        wait_for_port(port, proc)
    except BaseException:
        stop(proc)
        raise
    return proc


def stop(proc: subprocess.Popen[Any]) -> None:
    """Terminate a server process and reap it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def descendants(marker: str = "") -> set[int]:
    """Pids of this process's live descendants (zombies excluded) whose command line
    contains ``marker`` (e.g. ``"servers/"`` for the test servers, not runtime workers)."""
    import psutil

    alive = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and marker in " ".join(child.cmdline()):
                alive.add(child.pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def mcp_servers() -> set[int]:
    """Pids of the test MCP servers (any script under tests/mcp/servers/) still alive."""
    return descendants(str(SERVERS))


def wait_gone(pids: set[int], limit: float = 10.0) -> set[int]:
    """Wait until none of ``pids`` is alive; return the ones still alive at the limit."""
    deadline = time.monotonic() + limit
    while True:
        left = pids & descendants()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


SERVED_TOOLS = SERVERS / "served_tools.py"
PTCBOX = str(Path(sys.executable).parent / "ptcbox")


def ptcbox_serve(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """``ptcbox mcp serve ARGS`` as a stdio MCP server."""
    return StdioServerParameters(command=PTCBOX, args=["mcp", "serve", *args], env=env)


def inventory_command() -> str:
    """The ``--upstream`` command line of the inventory server."""
    return f"{sys.executable} {INVENTORY}"


sys.path.insert(0, str(SERVERS))  # the served_tools module, importable by the tests

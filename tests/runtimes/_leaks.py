"""Leak checks shared by the subprocess runtime tests: processes, threads, fds."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import AsyncIterator

import anyio
import psutil
import pytest


def snapshot() -> tuple[set[int], int, int]:
    """This process's descendants (pids), thread count and open fd count."""
    children = {child.pid for child in psutil.Process().children(recursive=True)}
    return children, threading.active_count(), len(os.listdir("/proc/self/fd"))


@contextlib.asynccontextmanager
async def no_leaks() -> AsyncIterator[None]:
    """Fail unless processes, threads and fds are back to where they were."""
    children, threads, fds = snapshot()
    yield
    deadline = time.monotonic() + 5.0
    while True:
        now = snapshot()
        extra = now[0] - children
        if not extra and now[1] <= threads and now[2] <= fds:
            return
        if time.monotonic() > deadline:
            pytest.fail(
                f"leaked: processes {extra}, threads {now[1]}/{threads}, fds {now[2]}/{fds}"
            )
        await anyio.sleep(0.02)

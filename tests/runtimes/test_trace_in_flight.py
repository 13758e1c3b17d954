"""Tool calls still in flight are reported truthfully, identically in both runtimes.

Issue 13: calls still running when the snippet ended were missing from ``tool_calls``
and never reached ``on_tool_call`` (SubprocessRuntime), or were listed as cancelled
although they completed (ThreadRuntime). The rules are in
:mod:`ptcbox.runtimes._shared._trace`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from ptcbox import DirectProjection, ToolCallRecord
from ptcbox.runtimes._shared._trace import CANCELLED, CANCELLED_AT_END, RUNNING_AT_END

pytestmark = pytest.mark.anyio


class Tools:
    def __init__(self, sync_seconds: float) -> None:
        self.sync_seconds = sync_seconds
        self.events: list[tuple[str, int]] = []
        self.release = threading.Event()

    async def slow_async(self, x: int) -> int:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.events.append(("cancelled", x))
            raise
        return x

    def slow_sync(self, x: int) -> int:
        self.release.wait(self.sync_seconds)
        self.events.append(("sync-completed", x))
        return x

    def quick(self, x: int) -> int:
        return x

    def namespace(self) -> dict[str, DirectProjection]:
        fns = (self.slow_async, self.slow_sync, self.quick)
        return {fn.__name__: DirectProjection(fn.__name__, fn) for fn in fns}


ABANDON = """
import asyncio
async def main():
    for call in (slow_async(x=1), slow_sync(x=2)):
        try:
            await asyncio.wait_for(call, 0.2)
        except asyncio.TimeoutError:
            print('gave up')
    quick(x=3)
    await asyncio.sleep(WAIT)
await main()
"""


async def _run(runtime: Any, code: str, tools: Tools) -> tuple[Any, list[ToolCallRecord]]:
    seen: list[ToolCallRecord] = []
    result = await runtime.execute(code, tools.namespace(), on_tool_call=seen.append)
    await asyncio.sleep(0.05)  # anything delivered late would show up here
    return result, seen


async def test_calls_abandoned_and_still_running_at_the_end(runtime: Any) -> None:
    """The async call is cancelled at once; the sync one cannot be and is still running
    when the execution ends: ``ok=None``. Both are in the trace and reach the observer."""
    tools = Tools(sync_seconds=30)
    try:
        result, seen = await _run(runtime, ABANDON.replace("WAIT", "0"), tools)
    finally:
        tools.release.set()
    assert result.ok, result.error
    assert result.stdout == "gave up\ngave up\n"
    calls = [(c.name, c.ok, c.error) for c in result.tool_calls]
    assert calls == [
        ("slow_async", False, CANCELLED),
        ("slow_sync", None, RUNNING_AT_END),
        ("quick", True, None),
    ]
    assert sorted((c.name, c.ok, c.error) for c in seen) == sorted(calls)
    assert ("cancelled", 1) in tools.events  # really cancelled on the host


async def test_an_abandoned_sync_call_that_ends_in_time_reports_its_outcome(
    runtime: Any,
) -> None:
    """The sync tool ran on and returned while the snippet still ran: ``ok=True`` with
    its real duration, not "cancelled"."""
    tools = Tools(sync_seconds=0.5)
    result, seen = await _run(runtime, ABANDON.replace("WAIT", "3"), tools)
    assert result.ok, result.error
    by_name = {c.name: c for c in result.tool_calls}
    assert (by_name["slow_sync"].ok, by_name["slow_sync"].error) == (True, None)
    assert by_name["slow_sync"].duration_s >= 0.4
    assert (by_name["slow_async"].ok, by_name["slow_async"].error) == (False, CANCELLED)
    assert len(seen) == 3 and ("sync-completed", 2) in tools.events


async def test_an_async_call_running_at_a_timeout_is_cancelled(make_runtime: Any) -> None:
    from ptcbox.sandbox import SandboxPolicy

    runtime = make_runtime(SandboxPolicy(timeout=1.0))
    tools = Tools(sync_seconds=0)
    started = time.monotonic()
    result, seen = await _run(runtime, "await slow_async(x=7)", tools)
    assert result.timed_out and time.monotonic() - started < 20
    calls = [(c.name, c.ok, c.error) for c in result.tool_calls]
    assert calls == [("slow_async", False, CANCELLED_AT_END)]
    assert [(c.name, c.ok, c.error) for c in seen] == calls
    for _ in range(100):
        if ("cancelled", 7) in tools.events:
            break
        await asyncio.sleep(0.02)
    assert ("cancelled", 7) in tools.events


async def test_the_trace_keeps_a_summary_and_the_observer_the_full_arguments(
    runtime: Any,
) -> None:
    """Issue 13: records held every argument in full (2.6 GB of host memory in 30 s)."""

    def store(blob: str, rows: list[int]) -> int:
        return len(blob) + len(rows)

    seen: list[ToolCallRecord] = []
    code = "for _ in range(3):\n    store(blob='x' * 2_000_000, rows=list(range(100_000)))"
    tools = {"store": DirectProjection("store", store)}
    result = await runtime.execute(code, tools, on_tool_call=seen.append)
    assert result.ok, result.error
    assert len(result.tool_calls) == 3 and len(seen) == 3
    for record in result.tool_calls:
        kept, note = record.arguments["blob"].split("…")
        assert note == f"[+{2_000_000 - len(kept)} chars]"
        assert record.arguments["rows"][-1] == "…[+99992 items]"
        assert len(str(record.arguments)) < 8192
    assert len(seen[0].arguments["blob"]) == 2_000_000
    assert seen[0].arguments["rows"] == list(range(100_000))

"""The cheap per-execution parts of ThreadRuntime: the stop latch a snippet's ``sleep``
waits on, ``Control.finished``, and the one future an execution's outcome, its deadline
and ``aclose`` all resolve (``_Handover``)."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from typing import Any

import pytest

from ptcbox import DirectProjection, ThreadRuntime
from ptcbox.runtimes.thread import _runtime
from ptcbox.runtimes.thread._control import Control, _Latch

pytestmark = pytest.mark.anyio


def test_latch_wait_times_out_until_set_then_lets_every_waiter_through() -> None:
    latch = _Latch()
    assert latch.wait(0.01) is False
    woken: list[bool] = []
    waiters = [threading.Thread(target=lambda: woken.append(latch.wait(30))) for _ in range(3)]
    for thread in waiters:
        thread.start()
    latch.set()
    for thread in waiters:
        thread.join(10)
    assert woken == [True, True, True]
    assert latch.wait(0) is True  # and every later wait
    assert latch.wait(30) is True


def test_a_stop_wakes_a_sleeping_execution_once_however_often_it_is_requested() -> None:
    control = Control()
    control.request_stop("timeout")
    control.request_stop("cancelled")  # a second request must not release twice
    assert control.reason == "timeout"
    assert control.wake.wait(0) is True


def test_control_is_finished_only_after_finish() -> None:
    control = Control()
    assert not control.finished
    control.enter()
    assert not control.finished
    assert control.finish() is False
    assert control.finished
    assert control.request_stop("timeout") is False  # left the snippet: result stands


async def test_handover_keeps_an_outcome_delivered_after_the_deadline_won() -> None:
    loop = asyncio.get_running_loop()
    handover = _runtime._Handover(loop)
    _runtime._resolve(handover.future, _runtime._EXPIRED)
    outcome = object()
    loop.call_soon(handover.deliver, outcome)
    assert await handover.future is _runtime._EXPIRED
    assert await handover.late() is outcome  # delivered before late() was called


async def test_handover_late_waits_for_an_outcome_still_on_its_way() -> None:
    loop = asyncio.get_running_loop()
    handover = _runtime._Handover(loop)
    _runtime._resolve(handover.future, _runtime._EXPIRED)
    outcome = object()
    loop.call_later(0.01, handover.deliver, outcome)
    assert await asyncio.wait_for(handover.late(), 30) is outcome


async def test_sleeping_snippet_returns_at_the_deadline() -> None:
    async with ThreadRuntime() as runtime:
        started = time.monotonic()
        result = await runtime.execute("import time\ntime.sleep(60)", {}, timeout=0.3)
    assert result.timed_out
    assert result.error_type == "TimeoutError"
    assert time.monotonic() - started < 0.3 + 10  # woken by the stop, not after 60 s


async def test_cancelled_caller_leaves_no_pending_outcome_behind() -> None:
    async with ThreadRuntime() as runtime:
        task = asyncio.ensure_future(runtime.execute("import time\ntime.sleep(60)", {}))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert runtime._active == {}
        result: Any = await runtime.execute("print(2)", {})  # the runtime still works
    assert result.stdout == "2\n"


@pytest.mark.parametrize(
    "code",
    [
        "print(1)",
        "for i in range(3):\n    ping(i=i)",
        "import json\nprint(json.dumps([ping(i=2)]))",
    ],
)
async def test_a_finished_execution_leaves_no_reference_cycle(code: str) -> None:
    """Its state is freed when the execution ends, not by the cyclic collector (whose
    collections every execution's cycles used to trigger, on the host's threads).
    (A snippet that imports ``time`` or ``random`` still gets a per-execution module
    view class, and a class is always in a cycle.)"""
    namespace = {"ping": DirectProjection(name="ping", fn=lambda i: i)}
    per_execution = {"Run", "Control", "Route", "_Target", "_Sink", "OutputBuffer", "Deadline"}
    async with ThreadRuntime() as runtime:
        await runtime.execute(code, namespace)  # warm: first-use caches are not garbage
        gc.collect()
        gc.disable()
        try:
            for _ in range(3):
                result = await runtime.execute(code, namespace)
                assert result.ok, result.error
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            left = sorted({type(o).__name__ for o in gc.garbage} & per_execution)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    assert left == []

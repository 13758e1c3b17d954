"""Waiting for a worker slot is bounded (issue 13, item 2).

With 50 hostile executions queued, a benign ``timeout=2`` call returned after 14.6 s:
the wait for a slot did not count. Now it is bounded by the execution's timeout (or
``queue_timeout``), first come first served, and a call that got no slot is a
``TimeoutError`` result whose code did not run.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from ptcbox import SubprocessRuntime

pytestmark = pytest.mark.anyio

HOG = "import time\ntime.sleep(20)\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("queue_timeout", [None, 0.5])
async def test_a_queued_call_returns_within_its_bound(queue_timeout: float | None) -> None:
    async with SubprocessRuntime(max_workers=1, min_idle=0, queue_timeout=queue_timeout) as rt:
        hog = asyncio.create_task(rt.execute(HOG, {}, timeout=30))
        while rt._pool.busy == 0:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        waited = await rt.execute("print('never')", {}, timeout=1.0)
        assert time.monotonic() - started < 10  # the hog holds the slot for 20 s
        assert waited.timed_out and waited.error_type == "TimeoutError"
        bound = 1 if queue_timeout is None else queue_timeout
        assert waited.error == (
            f"TimeoutError: no worker slot became free within {bound:g} seconds (1 "
            "executions were running, others queued first); the code did not run"
        )
        assert waited.stdout == ""
        hog.cancel()
        with pytest.raises(asyncio.CancelledError):
            await hog
        after = await rt.execute("print('ran')", {}, timeout=30)  # the slot came back
        assert after.stdout == "ran\n"


async def test_waiters_are_served_first_come_first_served() -> None:
    order: list[int] = []
    async with SubprocessRuntime(max_workers=1, min_idle=1) as rt:

        async def run(n: int) -> None:
            result = await rt.execute(f"{n}", {}, timeout=30)
            order.append(result.value)

        await asyncio.gather(*(run(n) for n in range(6)))
    assert order == list(range(6))

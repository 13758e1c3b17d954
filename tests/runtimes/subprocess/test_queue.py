"""Waiting for a worker slot is bounded (issue 13, item 2).

With 50 hostile executions queued, a benign ``timeout=2`` call returned after 14.6 s:
the wait for a slot did not count. Now it is bounded by the execution's timeout (or
``queue_timeout``), and a call that got no slot is a ``TimeoutError`` result whose code
did not run. Waiters are served first come, first served per caller (``caller=``, a
session is its own), and the callers in turn: a flood of one caller's executions does
not hold another caller's execution back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable

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


FLOOD = 20
SHORT = "import time\ntime.sleep(0.02)\n"


async def _flood_then(
    rt: SubprocessRuntime, flood_caller: Hashable, late: Callable[[], Awaitable[object]]
) -> list[str]:
    """Queue ``FLOOD`` executions of one caller, then ``late()``; the completion order."""
    done: list[str] = []

    async def flood(n: int) -> None:
        result = await rt.execute(SHORT, {}, timeout=120, caller=flood_caller)
        assert result.ok, result.error
        done.append(f"flood{n}")

    async def benign() -> None:
        await late()
        done.append("benign")

    tasks = [asyncio.create_task(flood(n)) for n in range(FLOOD)]
    while rt._pool._slots.waiting() < FLOOD - 1:  # one runs, the others wait
        await asyncio.sleep(0.01)
    await asyncio.gather(benign(), *tasks)
    return done


async def test_one_callers_flood_does_not_hold_back_another_caller() -> None:
    """The benign call waits for a slot hand-over or two, not for the flood's 19 more."""
    async with SubprocessRuntime(max_workers=1, min_idle=1) as rt:

        async def late() -> object:
            result = await rt.execute("'benign'", {}, timeout=120, caller="benign")
            assert result.value == "benign"
            return result

        done = await _flood_then(rt, "flood", late)
    assert done.index("benign") <= 2, done  # the running one, at most one more first
    assert sorted(done) == sorted([*(f"flood{n}" for n in range(FLOOD)), "benign"])


async def test_a_session_is_its_own_caller() -> None:
    async with SubprocessRuntime(max_workers=1, min_idle=1) as rt, rt.session() as session:

        async def late() -> object:
            result = await session.execute("'benign'", {}, timeout=120)
            assert result.value == "benign"
            return result

        done = await _flood_then(rt, None, late)
    assert done.index("benign") <= 2, done


async def test_callers_that_name_no_one_share_one_queue() -> None:
    """Without ``caller=`` the late call is one more in the same first-come queue."""
    async with SubprocessRuntime(max_workers=1, min_idle=1) as rt:

        async def late() -> object:
            return await rt.execute("'benign'", {}, timeout=120)

        done = await _flood_then(rt, None, late)
    assert done[-1] == "benign", done


async def test_a_caller_that_gives_up_leaves_no_trace_in_the_turns() -> None:
    """A waiter of its own caller that times out is forgotten: the slot still flows."""
    async with SubprocessRuntime(max_workers=1, min_idle=0, queue_timeout=0.2) as rt:
        hog = asyncio.create_task(rt.execute(HOG, {}, timeout=30))
        while rt._pool.busy == 0:
            await asyncio.sleep(0.01)
        waited = await rt.execute("1", {}, caller="gives up")
        assert waited.error_type == "TimeoutError"
        assert rt._pool._slots.waiting() == 0
        hog.cancel()
        with pytest.raises(asyncio.CancelledError):
            await hog
        assert rt._pool.busy == 0
        after = await rt.execute("print('ran')", {}, timeout=30, caller="another")
        assert after.stdout == "ran\n"

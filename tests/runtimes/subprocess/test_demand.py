"""Workers forked ahead sized to demand (runtimes/subprocess/_demand.py): more under
sustained demand, never more than MAX_AHEAD (or min_idle) plus the executions waiting,
none left behind, and no rehearsal while executions come back to back."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from ptcbox import SubprocessRuntime
from ptcbox.runtimes.subprocess import _demand
from ptcbox.runtimes.subprocess._demand import MAX_AHEAD, WINDOW_S, Demand

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_ahead_follows_recent_hand_outs_within_bounds() -> None:
    demand = Demand(min_idle=2)
    assert demand.ahead() == 2 and demand.rehearse() and not demand.deeper()
    demand.taken()
    assert demand.ahead() == 2 and demand.rehearse()  # one at a time: an agent's pace
    for _ in range(5):
        demand.taken()
    assert demand.ahead() == 6 and not demand.rehearse() and demand.deeper()
    for _ in range(100):
        demand.taken()
    assert demand.ahead() == MAX_AHEAD  # capped, however fast
    time.sleep(2 * WINDOW_S)  # at least that long, however loaded the machine
    assert demand.recent() == 0
    assert demand.ahead() == 2 and demand.rehearse()


def test_workers_that_come_back_cover_later_hand_outs() -> None:
    demand = Demand(min_idle=2)
    for _ in range(6):
        demand.taken()
        demand.returned()  # reuse mode: the worker serves again
    assert demand.recent() == 0 and demand.ahead() == 2 and demand.rehearse()


def test_min_idle_zero_forks_only_on_demand() -> None:
    demand = Demand(min_idle=0)
    for _ in range(6):
        demand.taken()
    assert demand.ahead() == 0


def _children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as children:
        return {int(child) for child in children.read().split()}


@pytest.mark.parametrize("in_flight", [1, 8])
async def test_sustained_demand_stays_bounded_and_leaves_no_process(in_flight: int) -> None:
    seen: set[int] = set()
    most = 0
    async with SubprocessRuntime() as runtime:
        pool = runtime._pool
        await runtime.start()
        template = pool._proc
        assert template is not None

        async def one() -> None:
            nonlocal most
            result = await runtime.execute("print(1)", {})
            assert result.stdout == "1\n", result
            ahead = len(pool._idle) + pool._requested
            most = max(most, ahead)
            assert ahead <= max(MAX_AHEAD, pool.min_idle) + len(pool._waiters)
            seen.update(_children(template.pid))

        for _ in range(40 // in_flight):
            await asyncio.gather(*(one() for _ in range(in_flight)))
        assert len(_children(template.pid)) <= MAX_AHEAD + in_flight + 2  # + exiting ones
    assert template.poll() is not None  # the template is gone
    left = [pid for pid in seen if os.path.exists(f"/proc/{pid}")]
    for pid in left:  # a pid reused since would not be a child of ours: check the parent
        with open(f"/proc/{pid}/stat") as stat:
            assert int(stat.read().rpartition(")")[2].split()[1]) != template.pid
    assert most >= 1


async def test_rehearsal_is_asked_for_only_at_an_agents_pace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The spawn messages the pool sends: ``rehearse`` true at first, false once
    executions come back to back (control: the same pool paced asks for it again)."""
    sent: list[dict[str, object]] = []
    real = _demand.Demand.rehearse

    def record(self: Demand) -> bool:
        answer = real(self)
        sent.append({"recent": self.recent(), "rehearse": answer})
        return answer

    monkeypatch.setattr(_demand.Demand, "rehearse", record)
    async with SubprocessRuntime() as runtime:
        await runtime.start()
        assert sent and sent[0]["rehearse"] is True  # the first workers rehearse
        sent.clear()
        await asyncio.gather(*(runtime.execute("print(1)", {}) for _ in range(8)))
        assert any(entry["rehearse"] is False for entry in sent), sent
        sent.clear()
        for _ in range(3 * MAX_AHEAD):  # paced: the extra workers drain, then refills
            await asyncio.sleep(2 * WINDOW_S)
            await runtime.execute("print(1)", {})
            if sent:
                break
        assert sent and all(entry["rehearse"] is True for entry in sent), sent

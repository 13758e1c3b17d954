"""A channel thread hands its execution's outcome to the loop before it makes way.

The thread that served an execution's sync tool calls ends after it; its pool then
starts a spare thread in its place (``_shared/_fresh_threads``), which holds the GIL
for a while. It waits until the loop has taken the outcome, so that the start does not
delay the caller's result (``HostExecution._serve``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.runtimes.subprocess import _execution
from runtimes._leaks import no_leaks

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def lookup(key: str) -> str:
    """A sync tool: its call hands the socket to a channel thread."""
    return key.upper()


@pytest.mark.parametrize("uses", [1, 50], ids=["fresh", "reuse"])
async def test_the_spare_thread_starts_after_the_loop_took_the_outcome(
    monkeypatch: pytest.MonkeyPatch, uses: int
) -> None:
    events: list[str] = []
    real_finish = _execution.HostExecution._finish
    real_stop = _execution.HostExecution._stop

    def slow_finish(self: Any, outcome: Any) -> None:
        time.sleep(0.02)  # the loop is late: the channel thread must still wait for it
        real_finish(self, outcome)

    def stop(self: Any) -> None:
        events.append("loop took the outcome")
        real_stop(self)

    monkeypatch.setattr(_execution, "_HAND_OVER_WAIT_S", 30.0)  # no bound in the way
    monkeypatch.setattr(_execution.HostExecution, "_finish", slow_finish)
    monkeypatch.setattr(_execution.HostExecution, "_stop", stop)
    namespace = {"lookup": DirectProjection("lookup", lookup)}
    async with no_leaks(), SubprocessRuntime(min_idle=1, max_executions_per_worker=uses) as rt:
        fresh = rt._threads._fresh
        real_replenish = fresh._replenish

        def replenish() -> None:
            events.append("spare started")
            real_replenish()

        monkeypatch.setattr(fresh, "_replenish", replenish)
        for index in range(3):
            result = await rt.execute(f"print(lookup(key='k{index}'))\n", namespace)
            assert (result.ok, result.stdout) == (True, f"K{index}\n"), result.error
            for _ in range(200):  # the thread ends after the result
                if len(events) == 2 * (index + 1):
                    break
                time.sleep(0.005)
    assert events == ["loop took the outcome", "spare started"] * 3

"""The pausable deadline: overlapping pauses stop the clock once; the timer obeys pauses."""

from __future__ import annotations

import asyncio
import contextvars
import math
import time

from ptcbox.runtimes._shared._clock import CallScope, Deadline, call_in_scope, current_call


def test_overlapping_pauses_count_once() -> None:
    clock = Deadline(10.0, started=time.perf_counter())
    end = clock.end()
    clock.pause()
    clock.pause()  # a second approval pending over the same time
    assert clock.paused and clock.end() == math.inf and clock.remaining() == math.inf
    time.sleep(0.05)
    clock.resume()
    assert clock.paused  # one is still pending
    time.sleep(0.05)
    clock.resume()
    assert not clock.paused
    paused = clock.paused_seconds()
    assert 0.1 <= paused < 1.0  # the union of both pauses, not the sum (0.15)
    assert clock.end() == end + paused
    assert clock.used(time.perf_counter()) < 0.5


def test_budget_end_moves_during_a_pause() -> None:
    clock = Deadline(1.0)
    clock.pause()
    first = clock.budget_end()
    time.sleep(0.02)
    assert clock.budget_end() >= first + 0.02  # the budget left does not shrink
    clock.resume()
    assert Deadline(math.inf).end() == math.inf


def test_the_timer_fires_after_the_budget_plus_the_pauses() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        clock = Deadline(0.2)
        fired = loop.create_future()
        clock.arm(loop, lambda: fired.set_result(time.perf_counter()))
        clock.pause()
        await asyncio.sleep(0.4)  # past the budget, but paused
        assert not fired.done()
        clock.resume()
        when: float = await asyncio.wait_for(fired, 5)
        clock.disarm()
        return when - clock.started

    elapsed = asyncio.run(main())
    assert 0.6 <= elapsed < 3.0


def test_a_disarmed_timer_never_fires() -> None:
    async def main() -> bool:
        loop = asyncio.get_running_loop()
        clock = Deadline(0.05)
        fired: list[bool] = []
        clock.arm(loop, lambda: fired.append(True))
        clock.disarm()
        await asyncio.sleep(0.15)
        return bool(fired)

    assert asyncio.run(main()) is False


def test_the_scope_is_current_only_inside_the_call_context() -> None:
    scope = CallScope(3, "pay", Deadline(1.0))
    seen = contextvars.copy_context().run(
        call_in_scope, scope, lambda **kwargs: (current_call(), kwargs), scope=1, fn=2
    )
    assert seen == (scope, {"scope": 1, "fn": 2})  # argument names never clash
    assert current_call() is None
    scope.replace_arguments({"amount": 1})
    assert scope.arguments == {"amount": 1}

"""FreshThreads and ScopedExecutor: threads that never serve two executions."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from ptcbox.runtimes._shared._fresh_threads import REUSE, FreshThreads, ScopedExecutor

LOCAL = threading.local()


def _wait(predicate: object, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return bool(predicate())  # type: ignore[operator]


def _run(fresh: FreshThreads, result: object = True) -> str:
    """Run a task that reads then sets a thread-local; return what it read."""
    seen: list[str] = []
    done = threading.Event()

    def task() -> object:
        seen.append(getattr(LOCAL, "v", "unset"))
        LOCAL.v = "set"
        done.set()
        return result

    fresh.start(task)
    assert done.wait(10)
    return seen[0]


def test_each_task_gets_a_thread_no_task_ran_in_before() -> None:
    fresh = FreshThreads("t-fresh", spares=1)
    try:
        assert [_run(fresh) for _ in range(5)] == ["unset"] * 5
        # control: a task that says REUSE hands its thread (and what it set) back
        assert _wait(lambda: len(fresh._spares) == 1)
        assert _run(fresh, REUSE) == "unset"
        assert _wait(lambda: len(fresh._spares) == 1)
        assert _run(fresh, REUSE) == "set"
    finally:
        fresh.close()


def test_a_stopped_task_ends_its_thread_without_a_spare_and_close_ends_the_spares() -> None:
    fresh = FreshThreads("t-stop", spares=1)
    _run(fresh, False)
    assert _wait(lambda: not fresh.threads())  # no spare was started
    _run(fresh)  # this one starts a spare when it ends
    assert _wait(lambda: len(fresh.threads()) == 1)
    fresh.close()
    assert _wait(lambda: not fresh.threads())
    with pytest.raises(RuntimeError):
        fresh.start(lambda: None)


def test_starts_that_find_no_spare_raise_the_spares_kept_up_to_max_spares() -> None:
    growing = FreshThreads("t-grow", spares=0, max_spares=2)
    fixed = FreshThreads("t-fixed", spares=0)  # control: max_spares defaults to spares
    try:
        for fresh in (growing, fixed):
            assert _run(fresh) == "unset"  # no spare: the start made the thread itself
        assert _wait(lambda: len(growing._spares) == 1)  # its end started a spare
        assert _wait(lambda: not fixed.threads())  # none kept
        release = threading.Event()
        for _ in range(3):  # at once: the first takes the spare, the others find none
            growing.start(release.wait)
        release.set()
        assert growing._target == 2  # raised by one per start without a spare, up to 2
        assert _wait(lambda: len(growing._spares) == 2)
        assert _run(growing) == "unset"  # a spare ran nothing before
    finally:
        growing.close()
        fixed.close()


def test_scoped_executor_reuses_its_threads_only_until_shutdown() -> None:
    fresh = FreshThreads("t-scope", spares=0)
    capacity = threading.BoundedSemaphore(2)
    running = [0]
    most = [0]
    lock = threading.Lock()

    def work() -> str:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        seen = getattr(LOCAL, "v", "unset")
        LOCAL.v = "set"
        return str(seen)

    first = ScopedExecutor(fresh, capacity)
    assert all(f.result(10) for f in [first.submit(work) for _ in range(6)])
    assert most[0] <= 2  # the shared capacity bounds the tasks running at once
    assert _wait(lambda: first._idle == 6)  # every thread idle now
    assert first.submit(work).result(10) == "set"  # within one execution: reused
    first.shutdown(wait=False)
    with pytest.raises(RuntimeError):
        first.submit(work)
    assert _wait(lambda: not fresh.threads())  # its threads ended with it
    second = ScopedExecutor(fresh, capacity)
    assert second.submit(work).result(10) == "unset"  # never the first's threads
    second.shutdown(wait=False)
    fresh.close()


def test_scoped_executor_that_never_ran_a_task_shuts_down_and_refuses_tasks() -> None:
    """Most executions submit nothing: shutting such an executor down makes no thread,
    and a task submitted afterwards is refused as after any shutdown."""
    fresh = FreshThreads("t-unused", spares=0)
    unused = ScopedExecutor(fresh)
    unused.shutdown(wait=False, cancel_futures=True)
    with pytest.raises(RuntimeError):
        unused.submit(lambda: None)
    assert not fresh.threads()
    fresh.close()


def _submit_when_ready(
    executor: ScopedExecutor, ready: threading.Barrier, futures: list[Any], refused: list[int]
) -> None:
    ready.wait()
    try:
        futures.append(executor.submit(lambda: 1))
    except RuntimeError:
        refused.append(1)


def test_scoped_executor_submit_racing_shutdown_runs_cancels_or_refuses_each_task() -> None:
    """A task submitted while the executor shuts down (its first task: the executor
    sets itself up then) is refused, cancelled or run; none is left pending."""
    fresh = FreshThreads("t-race", spares=0)
    refused: list[int] = []
    futures: list[Any] = []
    for _ in range(200):
        executor = ScopedExecutor(fresh)
        ready = threading.Barrier(2)
        thread = threading.Thread(
            target=_submit_when_ready, args=(executor, ready, futures, refused)
        )
        thread.start()
        ready.wait()
        executor.shutdown(wait=False, cancel_futures=True)
        thread.join(10)
    assert len(refused) + len(futures) == 200
    assert all(_wait(future.done) for future in futures)
    assert _wait(lambda: not fresh.threads())
    fresh.close()

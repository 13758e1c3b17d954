"""Execution slots of a SubprocessRuntime: at most ``max_workers`` executions at once.

An async semaphore bound to the pool's event loop, fair between callers (issue 13,
item 2): waiters queue per *caller* (first come, first served within a caller) and a
freed slot goes to the callers in turn (round robin), so one caller with 50 queued
executions delays another caller's execution by at most one slot hand-over per
caller waiting, not by its 50. A caller is the ``caller=`` key of
:meth:`~ptcbox.runtimes.subprocess.SubprocessRuntime.execute` (a session is its own
caller); executions that name none share one caller, ``None``. A freed slot is handed
to the waiter directly, so nobody can take it in between.

The slots are separate from the workers themselves: an execution holds a slot for its
whole run, while a worker is taken and released inside it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Hashable

__all__ = ["ExecutionSlots"]


class ExecutionSlots:
    """Counts executions in flight; waiters are served per caller, callers in turn.

    Args:
        limit: Executions that may run at once.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.busy = 0
        self._queues: dict[Hashable, deque[asyncio.Future[None]]] = {}
        self._turns: deque[Hashable] = deque()  # callers with waiters, next to serve first

    def available(self) -> bool:
        """Whether a slot can be taken now without overtaking a waiter."""
        return self.busy < self.limit and not self._turns

    def take(self) -> None:
        """Take a slot without waiting (after :meth:`available` said yes)."""
        self.busy += 1

    def free(self) -> None:
        """Give back a slot: to the next caller's first waiter if any, else to the pool."""
        while self._turns:
            caller = self._turns.popleft()
            queue = self._queues[caller]
            waiter = queue.popleft()
            if queue:
                self._turns.append(caller)  # its next waiter comes after the others
            else:
                del self._queues[caller]
            if not waiter.done():
                waiter.set_result(None)  # the slot is the waiter's now: busy stays
                return
        self.busy -= 1

    @contextlib.asynccontextmanager
    async def hold(
        self,
        loop: asyncio.AbstractEventLoop,
        wait: float | None = None,
        caller: Hashable = None,
    ) -> AsyncIterator[None]:
        """Hold one slot for the ``async with`` block, waiting on ``loop`` for one.

        Args:
            loop: The pool's loop.
            wait: Longest wait for a slot, in seconds; ``None`` for no bound.
            caller: Whose turn this wait is (see the module docstring).

        Raises:
            TimeoutError: No slot was free within ``wait`` seconds.
        """
        if self.available():
            self.busy += 1
        else:
            waiter: asyncio.Future[None] = loop.create_future()
            queue = self._queues.get(caller)
            if queue is None:
                queue = self._queues[caller] = deque()
                self._turns.append(caller)
            queue.append(waiter)
            try:
                if wait is None:
                    await waiter
                else:
                    await asyncio.wait_for(waiter, max(0.0, wait))
            except BaseException:
                if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                    self.free()  # handed a slot just as it gave up: pass it on
                else:
                    self._forget(caller, waiter)
                raise
        try:
            yield
        finally:
            self.free()

    def _forget(self, caller: Hashable, waiter: asyncio.Future[None]) -> None:
        queue = self._queues.get(caller)
        if queue is None:
            return
        with contextlib.suppress(ValueError):
            queue.remove(waiter)
        if not queue:
            del self._queues[caller]
            with contextlib.suppress(ValueError):
                self._turns.remove(caller)

    def waiting(self) -> int:
        """Executions waiting for a slot."""
        return sum(len(queue) for queue in self._queues.values())

    def forget_waiters(self) -> None:
        """Drop the waiters (their event loop is gone)."""
        self._queues.clear()
        self._turns.clear()

    def fail_waiters(self, error: Callable[[], BaseException]) -> None:
        """Fail every waiter with a fresh ``error()`` and drop them."""
        for queue in self._queues.values():
            for waiter in queue:
                if not waiter.done():
                    waiter.set_exception(error())
        self.forget_waiters()

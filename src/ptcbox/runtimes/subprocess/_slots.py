"""Execution slots of a SubprocessRuntime: at most ``max_workers`` executions at once.

A first-come, first-served async semaphore bound to the pool's event loop. It is
separate from the workers themselves: an execution holds a slot for its whole run,
while a worker is taken and released inside it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable

__all__ = ["ExecutionSlots"]


class ExecutionSlots:
    """Counts executions in flight; waiters are served in arrival order.

    Args:
        limit: Executions that may run at once.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.busy = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    def available(self) -> bool:
        """Whether a slot can be taken now without overtaking a waiter."""
        return self.busy < self.limit and not self._waiters

    def take(self) -> None:
        """Take a slot without waiting (after :meth:`available` said yes)."""
        self.busy += 1

    def free(self) -> None:
        """Give back a slot and wake the next waiter."""
        self.busy -= 1
        self._wake()

    @contextlib.asynccontextmanager
    async def hold(
        self, loop: asyncio.AbstractEventLoop, wait: float | None = None
    ) -> AsyncIterator[None]:
        """Hold one slot for the ``async with`` block, waiting on ``loop`` for one.

        Args:
            loop: The pool's loop.
            wait: Longest wait for a slot, in seconds; ``None`` for no bound.

        Raises:
            TimeoutError: No slot was free within ``wait`` seconds.
        """
        deadline = None if wait is None else loop.time() + wait
        while self.busy >= self.limit:
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append(waiter)
            try:
                if deadline is None:
                    await waiter
                else:
                    await asyncio.wait_for(waiter, max(0.0, deadline - loop.time()))
            except BaseException:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
                if waiter.done() and not waiter.cancelled():
                    self._wake()
                raise
        self.busy += 1
        try:
            yield
        finally:
            self.free()

    def forget_waiters(self) -> None:
        """Drop the waiters (their event loop is gone)."""
        self._waiters.clear()

    def fail_waiters(self, error: Callable[[], BaseException]) -> None:
        """Fail every waiter with a fresh ``error()`` and drop them."""
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(error())
        self._waiters.clear()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

"""The actors of a RayRuntime as the caller sees them: slots, back-pressure, replacement.

:class:`ActorPool` starts ``actors`` actors (Ray places each where its resources are
free; a cluster autoscaler adds nodes for actors that do not fit), hands out execution
slots (``executions_per_actor`` per actor, the least busy actor first), queues callers
first come, first served when every slot is taken, replaces an actor that died, and
kills every actor on :meth:`ActorPool.aclose`. Ray is imported by the caller
(:mod:`ptcbox.runtimes.ray._runtime`) and handed in.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import Any

__all__ = ["ActorPool", "ActorSlot"]

_CLOSE_S = 5.0
_DEATH_WAIT_S = 10.0


class ActorSlot:
    """One actor: its handle and the executions running on it."""

    __slots__ = ("alive", "busy", "handle", "ready")

    def __init__(self, handle: Any, ready: Any) -> None:
        self.handle = handle
        self.ready = ready  # the ObjectRef of its ``ready()`` call
        self.busy = 0
        self.alive = True


class ActorPool:
    """The actors and their execution slots.

    Args:
        ray: The ``ray`` module.
        make_actor: Creates one actor handle (with its resources and options).
        actors: Actors kept running.
        executions_per_actor: Executions one actor runs at once.
    """

    def __init__(self, ray: Any, make_actor: Any, actors: int, executions_per_actor: int) -> None:
        self._ray = ray
        self._make_actor = make_actor
        self._count = actors
        self.capacity = executions_per_actor
        self.actors: list[ActorSlot] = []
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def slots(self) -> int:
        """Executions that can run at once."""
        return self._count * self.capacity

    def _spawn(self) -> ActorSlot:
        handle = self._make_actor()
        slot = ActorSlot(handle, handle.ready.remote())
        self.actors.append(slot)
        return slot

    async def start(self) -> None:
        """Create the actors and wait until each has started its worker pool."""
        while len(self.actors) < self._count:
            self._spawn()
        await asyncio.gather(*(slot.ready for slot in self.actors))

    def _free(self, only: ActorSlot | None) -> ActorSlot | None:
        candidates = [only] if only is not None else self.actors
        best = None
        for slot in candidates:
            if slot.alive and slot.busy < self.capacity and (best is None or slot.busy < best.busy):
                best = slot
        return best

    async def acquire(self, wait_s: float, only: ActorSlot | None = None) -> ActorSlot | None:
        """A slot on the least busy actor (or on ``only``); ``None`` after ``wait_s`` seconds."""
        deadline = time.monotonic() + wait_s
        while True:
            slot = self._free(only) if not self._waiters or only is not None else None
            if slot is not None:
                slot.busy += 1
                return slot
            if only is not None and not only.alive:
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._wake()  # a wake-up this caller got and did not use goes on
                return None
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(waiter), remaining)
            finally:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            slot = self._free(only)
            if slot is not None:
                slot.busy += 1
                self._wake()  # another free slot may be there for the next in line
                return slot

    def release(self, slot: ActorSlot) -> None:
        """Give a slot back."""
        slot.busy -= 1
        self._wake()

    def _wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
                return

    def replace(self, slot: ActorSlot) -> None:
        """The actor of ``slot`` died: kill what is left of it and start another."""
        if not slot.alive:
            return
        slot.alive = False
        with contextlib.suppress(Exception):
            self._ray.kill(slot.handle, no_restart=True)
        if slot in self.actors:
            self.actors.remove(slot)
            self._spawn()
        for waiter in self._waiters:  # all of them: some wait for this actor only
            if not waiter.done():
                waiter.set_result(None)

    async def aclose(self) -> None:
        """Close every actor's worker pool, kill the actors and wait until Ray sees them dead."""
        slots, self.actors = self.actors, []
        closing = [slot.handle.close.remote() for slot in slots if slot.alive]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), _CLOSE_S)
        for slot in slots:
            slot.alive = False
            with contextlib.suppress(Exception):
                self._ray.kill(slot.handle, no_restart=True)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        deadline = time.monotonic() + _DEATH_WAIT_S
        for slot in slots:  # a call to a killed actor fails once Ray knows it is dead
            while time.monotonic() < deadline:
                try:
                    await asyncio.wait_for(slot.handle.ready.remote(), deadline - time.monotonic())
                except Exception:
                    break
                await asyncio.sleep(0.01)

"""The worker threads of :class:`~ptcbox.runtimes.ThreadRuntime`: a small process-wide pool.

A thread runs one job at a time; a job says whether its thread may be reused (a
stopped thread never is, see :mod:`ptcbox.runtimes.thread._control`). At most a few
idle threads are kept, each for at most a minute.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Callable

__all__ = ["submit"]

_MAX_IDLE_WORKERS = 8
_IDLE_SECONDS = 60.0


class _Pool:
    """Process-wide pool of snippet threads; at most a few idle ones are kept."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[queue.SimpleQueue[Callable[[], bool] | None]] = []
        self.names = itertools.count(1)

    def submit(self, job: Callable[[], bool]) -> None:
        with self.lock:
            inbox = self.idle.pop() if self.idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            thread = threading.Thread(
                target=self._work,
                args=(inbox,),
                name=f"ptcbox-snippet-{next(self.names)}",
                daemon=True,
            )
            thread.start()
        inbox.put(job)

    def _work(self, inbox: queue.SimpleQueue[Callable[[], bool] | None]) -> None:
        while True:
            try:
                job = inbox.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self.lock:
                    if inbox in self.idle:
                        self.idle.remove(inbox)
                        return
                continue
            if job is None:
                return
            try:
                reusable = job()
            except BaseException:  # a job never raises; if it does, retire the thread
                reusable = False
            del job  # drop the execution's objects before waiting for the next one
            if not reusable:
                return
            with self.lock:
                if len(self.idle) >= _MAX_IDLE_WORKERS:
                    return
                self.idle.append(inbox)


_pool = _Pool()


def submit(job: Callable[[], bool]) -> None:
    """Run ``job`` in a pool thread; it returns ``True`` if the thread may be reused."""
    _pool.submit(job)


def _after_fork_in_child() -> None:
    global _pool
    _pool = _Pool()


os.register_at_fork(after_in_child=_after_fork_in_child)

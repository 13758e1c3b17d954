"""A small pool of reusable host threads, one per running SubprocessRuntime execution.

Each execution's socket is served by one host thread (blocking ``recv``, sync tools run
right there), which keeps a tool call's round trip free of event-loop scheduling. Threads
are created on demand, reused, and end after ``idle_seconds`` without work or when the
pool is shut down. Unlike ``concurrent.futures.ThreadPoolExecutor`` the pool is
unbounded: a thread held by a slow tool never delays another execution.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ChannelThreads"]

_Task = tuple[Callable[..., Any], tuple[Any, ...]]


class _Worker:
    __slots__ = ("cond", "task")

    def __init__(self) -> None:
        self.cond = threading.Condition(threading.Lock())
        self.task: _Task | None = None


class ChannelThreads:
    """Run callables in reusable daemon threads.

    Args:
        name: Thread name prefix.
        idle_seconds: An idle thread ends after this many seconds.
    """

    def __init__(self, name: str, idle_seconds: float = 30.0) -> None:
        self._name = name
        self._idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._threads: set[threading.Thread] = set()
        self._closed = False
        self._count = 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` in an idle thread, or a new one.

        Raises:
            RuntimeError: If the pool is shut down.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("the thread pool is shut down")
            if self._idle:
                worker = self._idle.pop()
                with worker.cond:
                    worker.task = (fn, args)
                    worker.cond.notify()
                return
            worker = _Worker()
            worker.task = (fn, args)
            self._count += 1
            thread = threading.Thread(
                target=self._run, args=(worker,), name=f"{self._name}-{self._count}", daemon=True
            )
            self._threads.add(thread)
        thread.start()

    def _run(self, worker: _Worker) -> None:
        try:
            while True:
                task = worker.task
                worker.task = None
                if task is None:
                    return
                fn, args = task
                fn(*args)
                del task, fn, args
                with self._lock:
                    if self._closed:
                        return
                    self._idle.append(worker)
                with worker.cond:
                    if worker.task is None:
                        worker.cond.wait(self._idle_seconds)
                if worker.task is None:
                    with self._lock:
                        if worker.task is None:
                            if worker in self._idle:
                                self._idle.remove(worker)
                            return
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def threads(self) -> list[threading.Thread]:
        """The pool's live threads."""
        with self._lock:
            return list(self._threads)

    def shutdown(self, timeout: float) -> bool:
        """Stop idle threads and wait up to ``timeout`` seconds for busy ones.

        Returns:
            ``True`` when every thread ended in time.
        """
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            threads = list(self._threads)
        for worker in idle:
            with worker.cond:
                worker.cond.notify()
        ended = True
        for thread in threads:
            if thread is not threading.current_thread():
                if timeout > 0:
                    thread.join(timeout)
                ended = ended and not thread.is_alive()
        return ended

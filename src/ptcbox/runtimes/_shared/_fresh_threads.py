"""Host threads that never run code of two executions (issue 12, item 4).

A ``threading.local`` (or anything else a library keeps per thread) that a tool sets
lives as long as its thread. A reused thread hands it to whatever runs there next: a
later, unrelated execution's tools. So every thread that runs snippet or tool code here
serves one execution and then ends; its thread-local state dies with it.

:class:`FreshThreads` starts such single-use threads and keeps a few *spares* started in
advance (waiting for their first and only task), so that an execution rarely waits for
a thread start: a thread that finishes its task starts the replacement spare itself,
after its execution has had its result, off the caller's critical path. A thread whose
task ran no host code at all (an execution that called no tool) may be kept as a spare:
nothing of a tool's can be in it.
:class:`ScopedExecutor` is a :class:`concurrent.futures.Executor` of one execution: its
threads come from a :class:`FreshThreads`, run only that execution's tasks (reused
between them) and end when it is shut down.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["REUSE", "FreshThreads", "ScopedExecutor"]

REUSE = "reuse"
"""What a task returns when its thread may serve another task: it ran no host code
(no tool, no callable of the host), so it holds no thread-local state of anyone's."""

_Task = Callable[[], object]
_LAZY_LOCK = threading.Lock()  # makes a ScopedExecutor's condition once


class FreshThreads:
    """Run each task in a thread that ran nothing before and ends after it.

    Args:
        name: Thread name prefix.
        spares: Threads kept started in advance, waiting for a task.
        idle_seconds: A spare ends after this many seconds without a task.
        max_spares: Each start that finds no spare (and so starts a thread itself, on
            its caller's time) raises the number of spares kept by one, up to this
            (default: ``spares``): many tasks started at once find spares next time.
    """

    def __init__(
        self,
        name: str,
        *,
        spares: int = 2,
        idle_seconds: float = 60.0,
        max_spares: int | None = None,
    ) -> None:
        self._name = name
        self._target = spares
        self._max_target = spares if max_spares is None else max(spares, max_spares)
        self._idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._spares: list[queue.SimpleQueue[_Task | None]] = []
        self._starting = 0
        self._threads: set[threading.Thread] = set()
        self._closed = False
        self._names = itertools.count(1)

    def start(self, task: _Task) -> None:
        """Run ``task()`` in a spare thread, or a new one; the thread ends after it.

        ``task`` must not raise (what it raises is dropped); when it returns ``False``
        (a stopped snippet thread) the thread ends at once, without starting a spare;
        :data:`REUSE` puts it back among the spares (it ran no host code).

        Raises:
            RuntimeError: After :meth:`close`.
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("the thread pool is shut down")
            inbox = self._spares.pop() if self._spares else None
            if inbox is None and self._target < self._max_target:
                self._target += 1
        if inbox is None:
            self._new_thread(task)
        else:
            inbox.put(task)

    def _new_thread(self, task: _Task | None) -> None:
        inbox: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        if task is not None:
            inbox.put(task)
        thread = threading.Thread(
            target=self._run,
            args=(inbox, task is None),
            name=f"{self._name}-{next(self._names)}",
            daemon=True,
        )
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _run(self, inbox: queue.SimpleQueue[_Task | None], spare: bool) -> None:
        try:
            if spare:
                with self._lock:
                    self._starting -= 1
                    if self._closed:
                        return
                    self._spares.append(inbox)
            while True:
                task = self._next(inbox)
                if task is None:
                    return
                keep: object = False
                with contextlib.suppress(BaseException):
                    keep = task()
                del task
                if keep is REUSE:  # it ran no host code: back to the spares
                    with self._lock:
                        if not self._closed and len(self._spares) < self._target:
                            self._spares.append(inbox)
                            continue
                if keep is not False:  # False: a stopped thread, which runs nothing more
                    self._replenish()
                return
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _next(self, inbox: queue.SimpleQueue[_Task | None]) -> _Task | None:
        """The thread's next task; ``None`` when it should end."""
        while True:
            try:
                return inbox.get(timeout=self._idle_seconds)
            except queue.Empty:
                with self._lock:
                    if inbox in self._spares:
                        self._spares.remove(inbox)
                        return None

    def _replenish(self) -> None:
        """Start one spare if fewer than the target are ready or starting."""
        with self._lock:
            if self._closed or len(self._spares) + self._starting >= self._target:
                return
            self._starting += 1
        try:
            self._new_thread(None)
        except RuntimeError:  # interpreter shutdown: no new threads
            with self._lock:
                self._starting -= 1

    def threads(self) -> list[threading.Thread]:
        """The live threads (busy and spare)."""
        with self._lock:
            return list(self._threads)

    def close(self) -> None:
        """End the spares; busy threads end after their task. Idempotent."""
        with self._lock:
            self._closed = True
            spares, self._spares = self._spares, []
        for inbox in spares:
            inbox.put(None)


class ScopedExecutor(concurrent.futures.Executor):
    """An executor of one execution: threads from ``fresh``, reused only for this
    execution's tasks, ending at :meth:`shutdown` (a busy one after its task).

    Args:
        fresh: Where the threads come from.
        capacity: Shared by several executors: at most its value of their tasks run at
            once (a task holds it while it runs); ``None`` for no such bound.
    """

    def __init__(self, fresh: FreshThreads, capacity: threading.Semaphore | None = None) -> None:
        self._fresh = fresh
        self._capacity = capacity
        self._cond: threading.Condition | None = None  # made by the first submit
        self._tasks: collections.deque[tuple[concurrent.futures.Future[Any], _Task]] = (
            collections.deque()
        )
        self._idle = 0
        self._closed = False

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        """Run ``fn(*args, **kwargs)`` in one of this execution's threads.

        Raises:
            RuntimeError: After :meth:`shutdown`.
        """
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        cond = self._cond or self._make_cond()
        with cond:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._tasks.append((future, lambda: fn(*args, **kwargs)))
            if self._idle:
                cond.notify()
                return future
        self._fresh.start(self._work)
        return future

    def _make_cond(self) -> threading.Condition:
        """The executor's condition, made once (most executions never submit a task)."""
        with _LAZY_LOCK:
            if self._cond is None:
                self._cond = threading.Condition(threading.Lock())
            return self._cond

    def _work(self) -> None:
        cond = self._cond
        assert cond is not None  # a task was submitted
        while True:
            with cond:
                while not self._tasks and not self._closed:
                    self._idle += 1
                    cond.wait()
                    self._idle -= 1
                if not self._tasks:
                    return
                future, task = self._tasks.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            capacity = self._capacity
            if capacity is not None:
                capacity.acquire()
            try:
                future.set_result(task())
            except BaseException as exc:
                future.set_exception(exc)
            finally:
                if capacity is not None:
                    capacity.release()
            del future, task

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Let the threads end: at once when idle, else after their task.

        Args:
            wait: Ignored (the threads end on their own; see :meth:`FreshThreads.threads`).
            cancel_futures: Cancel the tasks not started yet.
        """
        with _LAZY_LOCK:
            cond = self._cond
            if cond is None:  # nothing was ever submitted: nothing to cancel or wake
                self._closed = True
                return
        with cond:
            self._closed = True
            if cancel_futures:
                while self._tasks:
                    self._tasks.popleft()[0].cancel()
            cond.notify_all()

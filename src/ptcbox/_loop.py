"""The private event loop of :func:`ptcbox.execute`: one daemon thread, started on use.

It also keeps the shared runtimes that live on it: the default runtime of each kind
(until the loop stops) and the runtimes made for a ``policy`` (one per kind and policy,
the :data:`POLICY_RUNTIMES` most recently used; an evicted one is closed once no call
uses it). It gets the functions that make and close them from :mod:`ptcbox._execute`,
so it imports nothing of the facade.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Hashable
from typing import Any, TypeVar

from ptcbox.runtimes import CodeRuntime

__all__ = ["BackgroundLoop", "run_in_new_thread"]

_T = TypeVar("_T")
_CLOSE_WAIT_S = 5.0
POLICY_RUNTIMES = 4
"""Runtimes made for a ``policy`` that are kept open (least recently used evicted)."""


def run_in_new_thread(make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """Run ``make()`` with ``asyncio.run`` in a new thread and wait for its result."""
    outcome: list[tuple[bool, Any]] = []

    def target() -> None:
        try:
            outcome.append((True, asyncio.run(make())))
        except BaseException as exc:
            outcome.append((False, exc))

    thread = threading.Thread(target=target, name="ptcbox-execute", daemon=True)
    thread.start()
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


class BackgroundLoop:
    """An event loop in a daemon thread, plus the shared default runtimes living on it.

    Args:
        make_runtime: Builds the shared runtime of a kind (``"thread"``, ...) and policy
            (``None`` for the default), on the loop.
        close_runtime: Closes one of them (at :meth:`shutdown`, or when evicted).
    """

    def __init__(
        self,
        make_runtime: Callable[[str, Any], CodeRuntime],
        close_runtime: Callable[[CodeRuntime], Awaitable[None]],
    ) -> None:
        self._make_runtime = make_runtime
        self._close_runtime = close_runtime
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runtimes: OrderedDict[tuple[str, Hashable], CodeRuntime] = OrderedDict()
        self._users: dict[int, int] = {}  # id(runtime) -> calls using it
        self._retired: dict[int, CodeRuntime] = {}  # evicted while in use
        self._closing: set[asyncio.Task[None]] = set()

    def is_loop_thread(self) -> bool:
        """Whether the calling thread is the loop's own."""
        return self._thread is not None and threading.current_thread() is self._thread

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                thread = threading.Thread(
                    target=_serve, args=(loop, ready), name="ptcbox-execute-loop", daemon=True
                )
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
                self._runtimes = OrderedDict()
            return self._loop

    def start(self) -> asyncio.AbstractEventLoop:
        """The private loop, started if it is not running."""
        return self._ensure()

    def shared_runtime(self, kind: str) -> CodeRuntime:
        """The shared default runtime of ``kind``, made on first use."""
        # Only called on the loop thread, so no lock is needed for the dict.
        runtime = self._runtimes.get((kind, None))
        if runtime is None:
            runtime = self._runtimes[kind, None] = self._make_runtime(kind, None)
        return runtime

    @contextlib.asynccontextmanager
    async def policy_runtime(self, kind: str, policy: Hashable) -> AsyncIterator[CodeRuntime]:
        """Use the shared runtime of ``kind`` and ``policy`` for the ``async with`` block.

        Made on first use; the :data:`POLICY_RUNTIMES` most recently used stay open, an
        older one is closed as soon as no block uses it. Only on the loop thread.
        """
        key = (kind, policy)
        runtime = self._runtimes.get(key)
        if runtime is None:
            runtime = self._runtimes[key] = self._make_runtime(kind, policy)
        self._runtimes.move_to_end(key)
        self._users[id(runtime)] = self._users.get(id(runtime), 0) + 1
        self._evict()
        try:
            yield runtime
        finally:
            left = self._users[id(runtime)] = self._users[id(runtime)] - 1
            if left == 0:
                del self._users[id(runtime)]
                retired = self._retired.pop(id(runtime), None)
                if retired is not None:
                    self._close_later(retired)

    def _evict(self) -> None:
        keyed = [key for key in self._runtimes if key[1] is not None]
        for key in keyed[: max(0, len(keyed) - POLICY_RUNTIMES)]:
            runtime = self._runtimes.pop(key)
            if self._users.get(id(runtime)):
                self._retired[id(runtime)] = runtime  # closed when its last call ends
            else:
                self._close_later(runtime)

    def _close_later(self, runtime: CodeRuntime) -> None:
        task = asyncio.get_running_loop().create_task(self._close_quietly(runtime))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _close_quietly(self, runtime: CodeRuntime) -> None:
        with contextlib.suppress(Exception):
            await self._close_runtime(runtime)

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coro`` on the loop and block the calling thread until it is done."""
        loop = self._ensure()
        finished = threading.Event()

        async def guarded() -> _T:
            try:
                return await coro
            finally:
                finished.set()

        future = asyncio.run_coroutine_threadsafe(guarded(), loop)
        try:
            return future.result()
        except BaseException:
            # KeyboardInterrupt in the caller (or a cancelled future): cancel the task
            # and give the runtime a bounded moment to clean up before re-raising.
            if not future.done():
                future.cancel()
                finished.wait(_CLOSE_WAIT_S)
            raise

    def shutdown(self) -> None:
        """Close the shared runtimes and stop the loop thread (idempotent)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            runtimes = [*self._runtimes.values(), *self._retired.values()]
            self._loop, self._thread, self._runtimes = None, None, OrderedDict()
            self._retired, self._users = {}, {}
        if loop is None or thread is None or not thread.is_alive():
            return

        async def close_all() -> None:
            for runtime in runtimes:
                await self._close_quietly(runtime)
            await asyncio.gather(*self._closing, return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(close_all(), loop).result(_CLOSE_WAIT_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_CLOSE_WAIT_S)

    def forget(self) -> None:
        """After fork(): the loop thread does not exist in the child; start afresh."""
        self._lock = threading.Lock()
        self._loop, self._thread, self._runtimes = None, None, OrderedDict()
        self._retired, self._users, self._closing = {}, {}, set()


def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    try:
        loop.run_forever()
    finally:
        tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

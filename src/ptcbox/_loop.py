"""The private event loop of :func:`ptcbox.execute`: one daemon thread, started on use.

It also keeps the shared default runtimes (one per kind) that live on it; it gets the
functions that make and close them from :mod:`ptcbox._execute`, so it imports nothing
of the facade.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from ptcbox.runtimes import CodeRuntime

__all__ = ["BackgroundLoop", "run_in_new_thread"]

_T = TypeVar("_T")
_CLOSE_WAIT_S = 5.0


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
        make_runtime: Builds the shared runtime of a kind (``"thread"``, ...), on the loop.
        close_runtime: Closes one of them at :meth:`shutdown`.
    """

    def __init__(
        self,
        make_runtime: Callable[[str], CodeRuntime],
        close_runtime: Callable[[CodeRuntime], Awaitable[None]],
    ) -> None:
        self._make_runtime = make_runtime
        self._close_runtime = close_runtime
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runtimes: dict[str, CodeRuntime] = {}

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
                self._loop, self._thread, self._runtimes = loop, thread, {}
            return self._loop

    def start(self) -> asyncio.AbstractEventLoop:
        """The private loop, started if it is not running."""
        return self._ensure()

    def shared_runtime(self, kind: str) -> CodeRuntime:
        """The shared default runtime of ``kind``, made on first use."""
        # Only called on the loop thread, so no lock is needed for the dict.
        runtime = self._runtimes.get(kind)
        if runtime is None:
            runtime = self._runtimes[kind] = self._make_runtime(kind)
        return runtime

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
            loop, thread, runtimes = self._loop, self._thread, self._runtimes
            self._loop, self._thread, self._runtimes = None, None, {}
        if loop is None or thread is None or not thread.is_alive():
            return

        async def close_all() -> None:
            for runtime in runtimes.values():
                with contextlib.suppress(Exception):
                    await self._close_runtime(runtime)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(close_all(), loop).result(_CLOSE_WAIT_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_CLOSE_WAIT_S)

    def forget(self) -> None:
        """After fork(): the loop thread does not exist in the child; start afresh."""
        self._lock = threading.Lock()
        self._loop, self._thread, self._runtimes = None, None, {}


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

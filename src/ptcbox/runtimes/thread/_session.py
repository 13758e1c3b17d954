"""``ThreadSession``: executions of a :class:`~ptcbox.runtimes.ThreadRuntime` that share
the snippet's globals."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from ptcbox._result import CodeResult
from ptcbox.errors import RuntimeClosedError, SessionEndedError
from ptcbox.projections import ToolProjection
from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback
from ptcbox.runtimes.thread._control import Control, ExecutionInterrupted
from ptcbox.runtimes.thread._pool import submit
from ptcbox.runtimes.thread._route import Route
from ptcbox.runtimes.thread._tools import Run
from ptcbox.sandbox._caches import snippet_thread

if TYPE_CHECKING:
    from ptcbox.runtimes.thread._runtime import ThreadRuntime

__all__ = ["ThreadSession"]

_SESSION_GRACE_S = 2.0


class ThreadSession:
    """Executions that share the snippet's globals, like the cells of a notebook.

    Variables, functions and imports of one execution are visible to the next; tools
    and ``extra_globals`` are refreshed on every call. An execution that fails keeps
    what earlier ones defined. After a timeout the session stays usable: the next
    execution waits (up to 2 s) for the stopped thread to leave the snippet; if it is
    stuck in a blocking call, the session ends and :class:`~ptcbox.errors.SessionEndedError`
    is raised. Executions of one session run one at a time. Closing the session frees
    its globals (in a worker thread, under a time limit, since they may run snippet
    finalizers).

    Create it with :meth:`ThreadRuntime.session`.
    """

    def __init__(self, runtime: ThreadRuntime) -> None:
        self._runtime = runtime
        self._namespace: dict[str, Any] = {}
        self._injected: dict[str, Any] = {}
        self._route = Route()
        self._lock = anyio.Lock()
        self._last: Run | None = None
        self._ended: str | None = None
        self._closed = False

    async def __aenter__(self) -> ThreadSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def closed(self) -> bool:
        """``True`` after :meth:`aclose` (or when the runtime was closed)."""
        return self._closed or self._runtime.closed

    async def execute(
        self,
        code: str,
        namespace: Mapping[str, ToolProjection],
        *,
        timeout: float | None = None,
        extra_globals: Mapping[str, Any] | None = None,
        on_tool_call: ToolCallCallback | None = None,
        on_output: OutputCallback | None = None,
    ) -> CodeResult:
        """Run ``code`` with the session's globals; see :meth:`ThreadRuntime.execute`.

        Raises:
            RuntimeClosedError: If the session or its runtime is closed.
            SessionEndedError: If an earlier execution timed out and its thread could
                not be stopped.
        """
        async with self._lock:
            if self.closed:
                raise RuntimeClosedError("session")
            await self._settle()
            return await self._runtime._execute(
                code,
                namespace,
                timeout=timeout,
                extra_globals=extra_globals,
                on_tool_call=on_tool_call,
                on_output=on_output,
                session=self,
            )

    async def _settle(self) -> None:
        if self._ended is not None:
            raise SessionEndedError(self._ended)
        last = self._last
        if last is None or last.control.finished:
            return
        with anyio.move_on_after(_SESSION_GRACE_S):
            while not last.control.finished:
                await anyio.sleep(0.005)
        if not last.control.finished:
            self._ended = (
                "an earlier execution timed out and its thread is still stuck in a "
                "blocking call, so the session's globals are not safe to use"
            )
            raise SessionEndedError(self._ended)

    async def aclose(self) -> None:
        """Stop a running execution (it raises ``RuntimeClosedError``), then free the
        session's globals. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._runtime._sessions.discard(self)
        last = self._last
        with anyio.CancelScope(shield=True):
            if last is not None and not last.control.finished and self._ended is None:
                last.control.request_stop("closed")
                with anyio.move_on_after(_SESSION_GRACE_S):
                    while not last.control.finished:
                        await anyio.sleep(0.005)
            namespace, self._namespace = self._namespace, {}
            self._injected = {}
            if namespace:
                await _clear_in_worker(namespace)


async def _clear_in_worker(namespace: dict[str, Any]) -> None:
    """Clear a session's globals in a snippet thread, stopped after 1 s."""
    control = Control()
    done = anyio.Event()
    loop = asyncio.get_running_loop()

    def job() -> bool:
        snippet_thread(True)  # snippet finalizers may run here
        while True:
            try:
                try:
                    control.enter()
                    namespace.clear()
                except ExecutionInterrupted:
                    pass
                stopped = control.finish()
                break
            except ExecutionInterrupted:
                continue
        snippet_thread(False)
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(done.set)
        return not stopped

    submit(job)
    with anyio.move_on_after(1.0):
        await done.wait()
    control.request_stop("closed")

"""Sessions of :class:`~ptcbox.runtimes.RayRuntime`: one worker on one actor, kept globals."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ptcbox._result import CodeResult
from ptcbox.errors import RuntimeClosedError, SessionEndedError
from ptcbox.projections import ToolProjection
from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback
from ptcbox.runtimes._shared._preflight import oversized
from ptcbox.runtimes.subprocess._result import queue_timeout_result

if TYPE_CHECKING:
    from ptcbox.runtimes.ray._pool import ActorSlot
    from ptcbox.runtimes.ray._runtime import RayRuntime

__all__ = ["RaySession"]

_CLOSE_S = 5.0


class RaySession:
    """A worker on one actor whose globals persist across :meth:`execute` calls.

    Created by :meth:`RayRuntime.session`. The actor is chosen at the first execute (the
    least busy one) and kept; its SubprocessRuntime keeps the session's worker (a
    :class:`~ptcbox.runtimes.SubprocessSession`). Executes run one at a time. A timeout
    or crash of the worker, or the death of the actor, ends the session; closing it
    kills the worker.
    """

    def __init__(self, runtime: RayRuntime) -> None:
        self._runtime = runtime
        self._id = uuid.uuid4().hex
        self._slot: ActorSlot | None = None
        self._lock = asyncio.Lock()
        self._ended: str | None = None
        self._closed = False

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
        """Run ``code`` in the session's worker; see :meth:`RayRuntime.execute`.

        Raises:
            SessionEndedError: An earlier execute timed out or crashed the worker, or
                the actor died.
            RuntimeClosedError: The session or its runtime is closed.
        """
        runtime = self._runtime
        if self._closed:
            raise RuntimeClosedError("session")
        if self._ended is not None:
            raise SessionEndedError(self._ended)
        prepared = runtime._prepare(code, namespace, timeout, extra_globals)
        too_long = oversized(code, runtime.policy.max_code_chars, time.perf_counter())
        if too_long is not None:  # refused here: it never travels to the actor
            return too_long
        await runtime.start()
        pool = runtime._pool
        async with self._lock:
            wait = prepared[1] if runtime._queue_timeout is None else runtime._queue_timeout
            slot = await pool.acquire(wait, self._slot)
            if slot is None:
                if self._slot is not None and not self._slot.alive:
                    self._ended = "its Ray actor died"
                    raise SessionEndedError(self._ended)
                runtime._check_open()
                return queue_timeout_result(wait, pool.capacity)
            self._slot = slot
            try:
                if self._closed:
                    raise RuntimeClosedError("session")
                result = await runtime._run(slot, prepared, self._id, on_tool_call, on_output)
            except SessionEndedError as exc:
                self._ended = exc.reason
                raise
            finally:
                pool.release(slot)
            if not slot.alive:
                self._ended = "its Ray actor died"
            return result

    async def aclose(self) -> None:
        """Kill the session's worker. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._runtime._sessions.discard(self)
        slot = self._slot
        if slot is not None and slot.alive:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(slot.handle.close_session.remote(self._id), _CLOSE_S)

    async def __aenter__(self) -> RaySession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

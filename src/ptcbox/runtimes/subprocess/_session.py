"""Sessions of :class:`~ptcbox.runtimes.SubprocessRuntime`: one worker, kept globals."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ptcbox._result import CodeResult
from ptcbox.errors import RuntimeClosedError, SessionEndedError
from ptcbox.projections import ToolProjection
from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback
from ptcbox.runtimes.subprocess._handle import WorkerHandle

if TYPE_CHECKING:
    from ptcbox.runtimes.subprocess._runtime import SubprocessRuntime

__all__ = ["SubprocessSession"]


class SubprocessSession:
    """A dedicated worker whose globals persist across :meth:`execute` calls.

    Created by :meth:`SubprocessRuntime.session`. Executes run one at a time (later
    ones wait). A timeout, a crash or a malformed message kills the worker and ends the
    session; closing it (``aclose``/``async with``) kills the worker.
    """

    def __init__(self, runtime: SubprocessRuntime) -> None:
        self._runtime = runtime
        self._worker: WorkerHandle | None = None
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
        """Run ``code`` in the session's worker; see :meth:`SubprocessRuntime.execute`.

        Raises:
            SessionEndedError: An earlier execute timed out or crashed the worker.
            RuntimeClosedError: The session or its runtime is closed.
        """
        runtime = self._runtime
        if self._closed:
            raise RuntimeClosedError("session")
        if self._ended is not None:
            raise SessionEndedError(self._ended)
        prepared = runtime._prepare(code, namespace, timeout, extra_globals, True)
        if prepared.refusal is not None:
            return prepared.refusal
        async with self._lock, runtime._pool.slot(caller=self):  # its own turn
            if self._closed:
                raise RuntimeClosedError("session")
            if self._ended is not None:
                raise SessionEndedError(self._ended)
            if self._worker is None:
                self._worker = await runtime._pool.take_worker()
            try:
                outcome, result = await runtime._run(
                    self._worker, prepared, on_tool_call, on_output
                )
            except BaseException:
                self._end("the execution was cancelled or failed in the host")
                raise
            if outcome[0] != "done":
                reason = {
                    "timeout": "the code timed out and its worker was killed",
                    "protocol": "the worker sent a malformed message",
                }.get(outcome[0], "the worker process crashed")
                self._end(reason)
            return result

    def _end(self, reason: str) -> None:
        if self._ended is None:
            self._ended = reason
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.kill()
            worker.close()

    async def aclose(self) -> None:
        """Kill the session's worker. Idempotent."""
        self._closed = True
        self._end("the session was closed")
        self._runtime._sessions.discard(self)

    async def __aenter__(self) -> SubprocessSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

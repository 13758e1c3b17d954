"""Reuse mode on the host: give a worker back to the pool or retire it.

With ``SubprocessRuntime(max_executions_per_worker=N)``, N > 1, a worker that finished
an execution cleanly goes back to the pool's idle queue (first in line) instead of
being killed, until it has served N executions. The worker resets itself between
executions and says in its ``done`` whether it may serve again (see
:mod:`ptcbox.runtimes.subprocess.worker._reuse`); the host retires it as well after an
execution that did not end with a ``done`` (timeout, crash, malformed message, a
cancelled call), that failed, whose output was truncated or that left a tool call
running.

A reused worker resets itself after it sent its ``done``; one whose reset fails exits
with :data:`~ptcbox.runtimes.subprocess.worker._reuse.EXIT_RESET_FAILED` before it reads
anything more. A ``run`` the host handed it meanwhile ends with the end of the stream
and nothing received: :meth:`Recycler.failed_reset` tells that case, and the runtime runs
the execution once more on another worker (:data:`RETRY`; no tool ran and no output
was kept, so the caller sees one execution).
"""

from __future__ import annotations

from typing import Any

from ptcbox._result import CodeResult
from ptcbox.runtimes.subprocess._handle import WorkerHandle
from ptcbox.runtimes.subprocess._pool import WorkerPool
from ptcbox.runtimes.subprocess.worker._reuse import EXIT_RESET_FAILED

__all__ = ["RETRY", "Recycler"]

RETRY = "retry"
"""The outcome kind of an execution to run again on another worker (see above)."""


class Recycler:
    """Counts each worker's executions and decides its fate after each one.

    Args:
        pool: The runtime's pool.
        limit: Executions a worker may serve (1: single use, every worker is killed).
    """

    def __init__(self, pool: WorkerPool, limit: int) -> None:
        self.pool = pool
        self.limit = limit
        self._uses: dict[WorkerHandle, int] = {}  # executions served so far

    def give_back(
        self, worker: WorkerHandle, outcome: tuple[str, Any] | None, result: CodeResult | None
    ) -> None:
        """Recycle ``worker`` after a clean execution with uses left, else kill it."""
        if self.limit > 1 and _clean(outcome, result):
            uses = self._uses.get(worker, 0) + 1
            if uses < self.limit and self.pool.recycle(worker):
                self._uses[worker] = uses
                if len(self._uses) > 4 * self.pool.max_workers + 16:  # died while idle
                    for gone in [w for w in self._uses if w.exited]:
                        del self._uses[gone]
                return
        self._uses.pop(worker, None)
        self.pool.release(worker)

    def failed_reset(self, worker: WorkerHandle) -> bool:
        """Whether ``worker``, reused, exited because its reset failed (call once it
        ended the execution with the end of the stream: its exit report was awaited)."""
        return (
            self.limit > 1
            and worker in self._uses
            and worker.exited
            and worker.signal_number is None
            and worker.exit_code == EXIT_RESET_FAILED
        )


def _clean(outcome: tuple[str, Any] | None, result: CodeResult | None) -> bool:
    if outcome is None or result is None or outcome[0] != "done":
        return False
    return (
        outcome[1].get("reuse") is True
        and result.error is None
        and not result.timed_out
        and not result.truncated
        and all(record.ok is not None for record in result.tool_calls)
    )

"""Turning how a SubprocessRuntime execution ended into its :class:`CodeResult`."""

from __future__ import annotations

import signal
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ptcbox._result import CodeResult, ToolCallRecord
from ptcbox.errors import WorkerCrashed
from ptcbox.runtimes._shared._error_text import timeout_error_text
from ptcbox.runtimes._shared._output import cap_text
from ptcbox.runtimes._shared._trace import CANCELLED_AT_END, RUNNING_AT_END
from ptcbox.runtimes.subprocess._handle import WorkerHandle

if TYPE_CHECKING:
    from ptcbox.runtimes.subprocess._execution import HostExecution, Outcome

__all__ = ["build_result", "queue_timeout_result"]

_ERROR_TYPE_CHARS = 100
_IN_FLIGHT_AT_END = (RUNNING_AT_END, CANCELLED_AT_END)


def build_result(
    execution: HostExecution, outcome: Outcome, timeout: float, duration: float
) -> CodeResult:
    """Build the :class:`CodeResult` of a finished execution.

    Args:
        execution: The execution (its output buffers, tool-call records, worker).
        outcome: How it ended.
        timeout: Its time limit, in seconds.
        duration: Its wall-clock time, in seconds.

    Returns:
        The frozen result; a timeout, crash or malformed message is a failed result.
    """
    kind, detail = outcome
    value: Any = None
    timed_out = False
    error_truncated = False
    if kind == "done":
        value = detail.get("value")
        error = detail["error"]
        error_type = detail["error_type"]
        error_truncated = detail["truncated"]  # the error text, or a dropped value
        if error is not None:
            error, cut = cap_text(error, execution.policy.max_output_bytes)
            error_truncated = error_truncated or cut
            error_type = (error_type or "Exception")[:_ERROR_TYPE_CHARS]
    elif kind == "timeout":
        timed_out = True
        error = timeout_error_text(timeout, paused=execution.clock.paused_seconds())
        error_type = "TimeoutError"
        error += _killed_while(execution.records)
    elif kind == "protocol":
        error, error_type = f"WireProtocolError: {detail}", "WireProtocolError"
    elif kind == "limit":
        limit, note = detail
        error_type = type(limit).__name__
        error = f"{error_type}: {limit}{note}"
    else:
        error, error_type = f"WorkerCrashed: {_crash(execution.worker)}", "WorkerCrashed"
    return CodeResult(
        stdout=execution.stdout.getvalue(),
        stderr=execution.stderr.getvalue(),
        return_code=0 if error is None else 1,
        error=error,
        error_type=error_type if error is not None else None,
        timed_out=timed_out,
        value=value,
        tool_calls=tuple(record for record in execution.records if record is not None),
        duration_s=duration,
        truncated=execution.stdout.truncated or execution.stderr.truncated or error_truncated,
    )


def _crash(worker: WorkerHandle) -> WorkerCrashed:
    if worker.signal_number is not None:
        detail = ""
        if worker.signal_number == signal.SIGXCPU:
            detail = "CPU time limit (max_cpu_seconds) exceeded"
        elif worker.signal_number == signal.SIGKILL:
            detail = "out of memory, or killed by another process"
        return WorkerCrashed(signal_number=worker.signal_number, detail=detail)
    if worker.exit_code is not None:
        return WorkerCrashed(exit_code=worker.exit_code, detail="it exited before finishing")
    return WorkerCrashed(detail="its connection closed before it finished")


def queue_timeout_result(wait: float, max_workers: int) -> CodeResult:
    """The result of an execution that got no worker slot within ``wait`` seconds."""
    error = (
        f"TimeoutError: no worker slot became free within {wait:g} seconds "
        f"({max_workers} executions were running, others queued first); the code did not run"
    )
    return CodeResult(
        stdout="",
        stderr="",
        return_code=1,
        error=error,
        error_type="TimeoutError",
        timed_out=True,
        duration_s=wait,
    )


def _killed_while(records: Iterable[ToolCallRecord | None]) -> str:
    """What the timed-out snippet was doing: the tool call it waited for, when one was
    still running (the worker's line is gone with it: a model then knows the tool, not
    its own loop, took the time)."""
    waiting = [r for r in records if r is not None and r.error in _IN_FLIGHT_AT_END]
    if not waiting:
        return " (the worker process was killed)"
    names = sorted({record.name for record in waiting})
    calls = "the tool call " if len(waiting) == 1 else f"{len(waiting)} tool calls: "
    return (
        f" (it was waiting for {calls}{', '.join(names)}, still running after "
        f"{max(r.duration_s for r in waiting):.1f} seconds; the worker process was killed)"
    )

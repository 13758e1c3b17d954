"""The CPU clocks of the sandbox's ``time`` view count from the execution's start.

``time.process_time()`` and ``thread_time()`` count from the start of the process (of
the thread). A reused ``SubprocessRuntime`` worker runs several executions in one
process, and a ``ThreadRuntime`` pool thread several executions in one thread: the next
execution read how much CPU the earlier ones used, to the microsecond (redteam24): a
channel from one execution to the next, and a view of another's work. The view's
clocks count from the execution's start instead (from the view's making in
``ThreadRuntime``, whose views are per execution); durations, what these clocks are for,
are unchanged.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["CPU_START", "cpu_clocks", "mark_cpu_start"]

CPU_START = [0, 0]
"""Process and thread CPU nanoseconds when the current execution of this process
started: the zero of the shared time view's CPU clocks (see :func:`mark_cpu_start`)."""


def mark_cpu_start() -> None:
    """Start the CPU clocks of the shared ``time`` view at zero for the execution that
    starts now (a reused ``SubprocessRuntime`` worker calls it before each run)."""
    CPU_START[:] = [time.process_time_ns(), time.thread_time_ns()]


def cpu_clocks(start: list[int]) -> dict[str, Any]:
    """``process_time``/``thread_time`` (and ``_ns``) counting from ``start``."""
    process_ns, thread_ns = time.process_time_ns, time.thread_time_ns

    def process_time_ns() -> int:
        """CPU time of the process in nanoseconds, counted from the execution's start."""
        return process_ns() - start[0]

    def process_time() -> float:
        """CPU time of the process in seconds, counted from the execution's start."""
        return (process_ns() - start[0]) / 1e9

    def thread_time_ns() -> int:
        """CPU time of this thread in nanoseconds, counted from the execution's start."""
        return thread_ns() - start[1]

    def thread_time() -> float:
        """CPU time of this thread in seconds, counted from the execution's start."""
        return (thread_ns() - start[1]) / 1e9

    return {
        "process_time": process_time,
        "process_time_ns": process_time_ns,
        "thread_time": thread_time,
        "thread_time_ns": thread_time_ns,
    }

"""What the trace says about tool calls that did not finish normally (both runtimes).

A call is recorded when it starts (a slot in the execution's trace) and completed when
it ends; calls that were still in flight are reported truthfully, identically by both
runtimes:

- an async tool whose waiting the snippet cancelled (``asyncio.wait_for`` timed out,
  ``task.cancel()``): the host cancels the tool's coroutine at once; ``ok=False``,
  :data:`CANCELLED`;
- a sync tool whose waiting the snippet cancelled: a running thread cannot be
  cancelled, so the tool runs on in its host thread; when it ends before the
  execution, the record holds its real outcome (``ok`` and duration);
- an async tool still running when the execution ends (the code finished, or was
  stopped): cancelled; ``ok=False``, :data:`CANCELLED_AT_END`;
- a sync tool still running when the execution ends: not waited for (no grace period:
  the execution's time stays bounded) and not cancellable; ``ok=None``,
  :data:`RUNNING_AT_END`.

Every record, these included, reaches ``on_tool_call`` before the result is returned.
"""

from __future__ import annotations

__all__ = ["CANCELLED", "CANCELLED_AT_END", "RUNNING_AT_END"]

CANCELLED = "CancelledError: the call was cancelled"
CANCELLED_AT_END = (
    "CancelledError: the call was still running when the execution ended, so it was cancelled"
)
RUNNING_AT_END = (
    "the call was still running when the execution ended (a sync tool cannot be "
    "cancelled: it ran on in the host and its result was discarded)"
)

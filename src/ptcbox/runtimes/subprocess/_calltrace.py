"""The trace half of a SubprocessRuntime execution's tool calls (see ``_calls``).

:class:`PendingCall` is one call in progress; :class:`CallTrace` completes each call's
trace entry exactly once (a size-bounded summary of the arguments in the result, the
full arguments to ``on_tool_call``), counts the wire bytes of the arguments of calls in
progress against ``SandboxPolicy.max_host_memory_bytes``, cancels an async call the
snippet stopped waiting for, and reports the calls still in flight at the end as
:mod:`ptcbox.runtimes._shared._trace` says.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ptcbox._result import ToolCallRecord
from ptcbox.errors import LimitExceeded
from ptcbox.runtimes._protocol import ToolCallCallback
from ptcbox.runtimes._shared._clock import CallScope, call_in_scope
from ptcbox.runtimes._shared._error_text import describe_exception
from ptcbox.runtimes._shared._host import ToolSpec, jsonable_arguments
from ptcbox.runtimes._shared._output import OutputBuffer
from ptcbox.runtimes._shared._summary import summarize_arguments
from ptcbox.runtimes._shared._trace import CANCELLED, CANCELLED_AT_END, RUNNING_AT_END
from ptcbox.runtimes._wire import field
from ptcbox.sandbox import SandboxPolicy

__all__ = ["UNCOUNTED_BYTES", "CallTrace", "PendingCall", "new_record"]

Outcome = tuple[str, Any]
UNCOUNTED_BYTES = 4096
"""Call frames smaller than this are not counted (bounded by ``max_tool_calls`` x 4 KiB)."""


class PendingCall:
    """One tool call in progress (host side)."""

    __slots__ = (
        "arguments",
        "call_id",
        "held",
        "index",
        "recorded",
        "scope",
        "seconds",
        "spec",
        "started",
        "task",
    )

    def __init__(self, call_id: int, spec: ToolSpec, arguments: dict[str, Any], index: int):
        self.call_id = call_id
        self.spec = spec
        self.arguments = arguments
        self.index = index
        self.seconds = 0.0
        self.started = 0.0  # when it started on the loop
        self.recorded = False
        self.task: asyncio.Future[Any] | None = None
        self.held = 0  # wire bytes of its arguments, counted against the host's budget
        self.scope: CallScope | None = None  # for projections that ask (ToolSpec.scoped)

    def callee(self) -> Callable[..., Any]:
        """What to call with the arguments: :attr:`ToolSpec.call` (the projection, or a
        ``DirectProjection``'s function, as ThreadRuntime calls it), in its scope if it asks."""
        if self.scope is None:
            return self.spec.call
        return functools.partial(call_in_scope, self.scope, self.spec.call)


_new = object.__new__
(
    _set_name,
    _set_arguments,
    _set_ok,
    _set_error,
    _set_duration,
    _set_requested,
) = (getattr(ToolCallRecord, field.name).__set__ for field in dataclasses.fields(ToolCallRecord))


def new_record(  # noqa: PLR0917 (the positional order of ToolCallRecord)
    name: str,
    arguments: dict[str, Any],
    ok: bool | None,
    error: str | None,
    duration_s: float,
    requested_arguments: dict[str, Any] | None,
) -> ToolCallRecord:
    """``ToolCallRecord(name, arguments, ok, error, duration_s, requested_arguments)``,
    built through its slots: a frozen dataclass's ``__init__`` sets each field with
    ``object.__setattr__`` (callgrind: 10.5k instructions a record, 6.2k this way;
    one record a call on the host)."""
    record = _new(ToolCallRecord)
    _set_name(record, name)
    _set_arguments(record, arguments)
    _set_ok(record, ok)
    _set_error(record, error)
    _set_duration(record, duration_s)
    _set_requested(record, requested_arguments)
    return record


class CallTrace:
    """Trace entries and the host-memory budget of one execution's tool calls."""

    policy: SandboxPolicy
    on_tool_call: ToolCallCallback | None
    records: list[ToolCallRecord | None]
    stdout: OutputBuffer
    stderr: OutputBuffer
    _loop: asyncio.AbstractEventLoop
    _stopped: bool
    _queued: deque[PendingCall]
    _outbox_bytes: int
    _live: dict[int, PendingCall]  # started, not yet recorded; by trace index
    _on_loop_calls: dict[int, PendingCall]  # admitted to the loop, by call id
    _trace_lock: threading.Lock
    _held: int  # wire bytes of the arguments of calls in progress
    _frame_bytes: int  # the size of the call frame being handled

    def _post(self, fn: Callable[..., Any], *args: Any) -> None:
        raise NotImplementedError

    def _observe(self, fn: Callable[..., Any], *args: Any) -> None:
        raise NotImplementedError

    def _finish_from(self, outcome: Outcome, on_loop: bool) -> None:
        raise NotImplementedError

    def _record(self, call: PendingCall, ok: bool | None, error: str | None) -> None:
        record = self._make_record(call, ok, error)
        if record is not None and self.on_tool_call is not None and not self._stopped:
            self._post(self._observe, self.on_tool_call, record)

    def _make_record(
        self, call: PendingCall, ok: bool | None, error: str | None
    ) -> ToolCallRecord | None:
        """Complete a call's trace entry once (``None`` if it was already).

        The trace keeps a size-bounded summary of the arguments; the record returned
        (for ``on_tool_call``) has them in full.
        """
        with self._trace_lock:
            if call.recorded:
                return None
            call.recorded = True
            self._live.pop(call.index, None)
            self._held -= call.held
        arguments = jsonable_arguments(call.arguments)
        requested = None
        if call.scope is not None and call.scope.arguments is not None:  # edited
            arguments, requested = jsonable_arguments(call.scope.arguments), arguments
        record = new_record(call.spec.name, arguments, ok, error, call.seconds, requested)
        summary = summarize_arguments(arguments)
        if summary is not arguments or requested is not None:
            self.records[call.index] = ToolCallRecord(
                call.spec.name,
                summary,
                ok,
                error,
                call.seconds,
                None if requested is None else summarize_arguments(requested),
            )
        else:
            self.records[call.index] = record
        call.arguments = {}  # the full data is not kept past the call
        return record

    def _hold(self, call: PendingCall, on_loop: bool) -> bool:
        """Count a call's arguments against ``max_host_memory_bytes``; ``False`` if over.

        Over the budget the execution ends with ``LimitExceeded`` (the call is
        recorded as refused).
        """
        size = self._frame_bytes
        if size < UNCOUNTED_BYTES:  # the usual call: bounded by max_tool_calls instead
            return True
        with self._trace_lock:
            call.held = size
            self._held += size
            held = self._held
        limit = self.policy.max_host_memory_bytes
        output = min(self.stdout.total_bytes, self.stdout.max_bytes)
        output += min(self.stderr.total_bytes, self.stderr.max_bytes)
        total = held + self._outbox_bytes + output
        if total <= limit:
            return True
        exc = LimitExceeded("max_host_memory_bytes", limit, total, "bytes")
        note = (
            " (tool-call arguments in progress, unread tool results and buffered output "
            "the host held for this execution)"
        )
        self._record(call, False, describe_exception(exc))
        self._finish_from(("limit", (exc, note)), on_loop)
        return False

    def _record_unfinished(self) -> None:
        """At the end (on the loop): the calls still in flight, cancelled or not.

        Async calls are cancelled; sync calls cannot be and are reported running (see
        :mod:`ptcbox.runtimes._shared._trace`). Each record reaches ``on_tool_call``.
        """
        with self._trace_lock:
            live = sorted(self._live.values(), key=lambda call: call.index)
        for call in live:
            task = call.task
            if task is not None or call in self._queued:
                record = self._make_record(call, False, CANCELLED_AT_END)
                if task is not None:
                    task.cancel()
            else:
                record = self._make_record(call, None, RUNNING_AT_END)
            if record is not None and self.on_tool_call is not None:
                try:
                    self.on_tool_call(record)
                except Exception as exc:  # the result is settled: report, do not raise
                    self._loop.call_exception_handler(
                        {"message": "ptcbox: on_tool_call raised", "exception": exc}
                    )

    def _on_cancel(self, message: dict[str, Any]) -> None:
        """The snippet stopped waiting for a call (on the loop): cancel an async one."""
        call = self._on_loop_calls.get(field(message, "id", int))
        if call is None or self._stopped or not call.spec.is_async:
            return  # unknown, or a sync tool: it cannot be cancelled and runs on
        if call in self._queued:
            self._queued.remove(call)
        elif call.task is None:
            return
        if call.task is not None:
            call.task.cancel()
            call.seconds = time.perf_counter() - call.started
        self._record(call, False, CANCELLED)

    # -- concurrent calls, on the loop ---------------------------------------------------

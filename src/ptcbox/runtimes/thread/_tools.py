"""What a snippet in a :class:`~ptcbox.runtimes.ThreadRuntime` thread calls: tools,
``print`` sinks and ``sleep``, plus the relay of observer callbacks to the host loop.

What the snippet holds reaches the current execution's :class:`Run` indirectly: sinks and
the sleep hook through a :class:`Route`, tool callables through the thread they are
called in. Names a session keeps from an earlier execution (``p = print``,
``t = search``) therefore report to the execution that runs now, never to an old one,
and tool callables are made once per tool, not per execution.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import math
import threading
import time
from asyncio import events
from collections.abc import Awaitable
from typing import Any

import anyio

from ptcbox._result import ToolCallRecord
from ptcbox.errors import LimitExceeded, ToolCallLimitExceeded
from ptcbox.runtimes._shared._awaitable import AwaitableToolCall, unawaited_notes
from ptcbox.runtimes._shared._clock import CallScope, Deadline, call_in_scope, enter_scope
from ptcbox.runtimes._shared._codec import clone
from ptcbox.runtimes._shared._error_text import describe_exception
from ptcbox.runtimes._shared._fresh_threads import ScopedExecutor
from ptcbox.runtimes._shared._host import ToolSpec, jsonable_arguments
from ptcbox.runtimes._shared._output import OutputBuffer, Relay, output_flood
from ptcbox.runtimes._shared._summary import summarize_arguments
from ptcbox.runtimes._shared._tool_errors import exception_payload, rebuild_tool_error
from ptcbox.runtimes._shared._trace import CANCELLED, CANCELLED_AT_END, RUNNING_AT_END
from ptcbox.runtimes.thread._calls import (
    SyncCall,
    edited_arguments,
    plain_result,
    tool_error_text,
    trace_entry,
    wait_async,
)
from ptcbox.runtimes.thread._control import HOST, SNIPPET, Control, ExecutionInterrupted
from ptcbox.runtimes.thread._pool import tool_threads

__all__ = ["Run"]

_get_running_loop = events._get_running_loop
_perf = time.perf_counter
_PLAIN_RESULTS = frozenset({dict, list, str, int, float, bool, tuple, type(None)})
_SCALARS = frozenset({int, float, bool, type(None)})


class Run:
    """The state of one execution that the snippet's thread and the host share.

    With ``plain_data`` (every restricted policy), tool arguments and tool results cross
    between snippet and host as fresh copies made of builtin values
    (:func:`ptcbox.runtimes._shared._codec.clone`), with the types they have over
    SubprocessRuntime's wire: a tool never receives a snippet-defined
    object (whose ``__eq__``/``__hash__`` would run snippet code on the host, outside the
    time limit), and the snippet never holds a tool's live data (a cached host dict it
    could mutate). The same snippet therefore sees the same values in both runtimes.

    Every tool call runs in a fresh copy of ``host_context`` (the caller's
    ``contextvars`` context when ``execute`` was called): a tool sees the caller's
    context variables (and decimal context), never the snippet's, nor what an earlier
    call set.
    """

    __slots__ = (
        "async_slots",
        "calls",
        "clock",
        "control",
        "flood",
        "host_context",
        "host_loop",
        "max_calls",
        "max_concurrent",
        "plain_data",
        "records",
        "relay",
        "scopes",
        "semaphore",
        "specs",
        "started",
        "stderr",
        "stdout",
        "threads",
        "trace_lock",
    )

    def __init__(
        self,
        *,
        host_loop: asyncio.AbstractEventLoop,
        max_output_bytes: int,
        max_calls: int,
        max_concurrent: int,
        relay: Relay | None,
        plain_data: bool = True,
        host_context: contextvars.Context | None = None,
        specs: dict[str, ToolSpec] | None = None,
    ) -> None:
        self.control = Control()
        self.clock = Deadline(math.inf)
        """The execution's (pausable) deadline."""
        self.scopes: dict[int, CallScope] = {}
        """Calls of projections that asked for a scope (``ToolSpec.scoped``), by slot."""
        self.specs: dict[str, ToolSpec] = {} if specs is None else specs
        """The execution's tools by name: a tool callable calls the one of its name."""
        self.host_context = contextvars.copy_context() if host_context is None else host_context
        self.plain_data = plain_data
        self.host_loop = host_loop
        self.relay = relay
        self.flood: tuple[LimitExceeded, str] | None = None
        self.trace_lock = threading.Lock()
        self.async_slots: set[int] = set()  # calls of async tools (cancellable)
        self.stdout = OutputBuffer(max_output_bytes, relay.stdout if relay else None, self._flooded)
        self.stderr = OutputBuffer(max_output_bytes, relay.stderr if relay else None, self._flooded)
        self.records: list[tuple[Any, ...]] = []
        self.calls = 0
        self.max_calls = max_calls
        self.max_concurrent = max_concurrent
        self.semaphore: asyncio.Semaphore | None = None
        self.started: list[tuple[AwaitableToolCall, concurrent.futures.Future[Any]]] = []
        self.threads: ScopedExecutor | None = None
        """Where sync tools called from the snippet's asyncio code run: threads of this
        execution only, ended by :meth:`end_threads` (issue 12: thread-locals)."""

    def end_threads(self) -> None:
        """Let this execution's tool threads end (a busy one after its call)."""
        if self.threads is not None:
            self.threads.shutdown(wait=False)

    def _flooded(self, written: int) -> None:
        """A stream got far more than the output cap: stop the snippet (its thread)."""
        self.flood = output_flood(self.stdout.max_bytes, written)
        self.control.request_stop("output")

    # --- records -----------------------------------------------------------------
    def _finish(self, slot: int, ok: bool | None, error: str | None, started: float) -> None:
        name, arguments = self.records[slot][:2]
        requested = None
        if self.scopes:
            arguments, requested = edited_arguments(self.scopes, slot, arguments)
        duration = _perf() - started
        self.records[slot] = trace_entry(name, arguments, ok, error, duration, requested)
        if self.relay is not None:
            self.relay.tool_call(ToolCallRecord(name, arguments, ok, error, duration, requested))

    def _scope(self, spec: ToolSpec, slot: int) -> CallScope:
        scope = self.scopes[slot] = CallScope(slot, spec.name, self.clock)
        return scope

    def _cancelled(self, slot: int, started: float) -> None:
        """Record a pending async call as cancelled (a stop: cancelled at the end)."""
        why = CANCELLED_AT_END if self.control.stop else CANCELLED
        self._finish_once(slot, False, why, started)

    def _finish_once(self, slot: int, ok: bool | None, error: str | None, started: float) -> None:
        """:meth:`_finish` unless the call is recorded already (any thread)."""
        with self.trace_lock:
            if len(self.records[slot]) != 2:
                return
            self.records[slot] = (*self.records[slot], ok, error, _perf() - started)
        self._finish(slot, ok, error, started)

    def _refuse(self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Raise ToolCallLimitExceeded (the call count is already past the limit)."""
        exc = ToolCallLimitExceeded(self.max_calls, self.calls)
        if self.calls == self.max_calls + 1:  # record the first refused call only
            self._record_failure(spec, args, kwargs, describe_exception(exc))
        raise exc

    def _record_failure(
        self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any], error: str
    ) -> None:
        arguments = dict(jsonable_arguments(kwargs))
        if args:
            arguments["*args"] = jsonable_arguments({"a": list(args)})["a"]
        self.records.append((spec.name, arguments))
        self._finish(len(self.records) - 1, False, error, _perf())

    def _bind(
        self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        try:
            return spec.binder.bind(args, kwargs)
        except TypeError as exc:
            message = str(exc)
        self._record_failure(spec, args, kwargs, f"TypeError: {message}")
        error = TypeError(message)  # CPython's words; raised afresh: no binder frames
        error.add_note(spec.binder.note)
        raise error

    def build_records(self) -> tuple[ToolCallRecord, ...]:
        """The calls so far as records, at the end of the execution.

        A call still in flight is reported as the module ``_trace`` says: an async
        tool's was cancelled by the stop (``ok=False``), a sync tool's cannot be
        (``ok=None``); both reach the relay's ``on_tool_call`` too.
        """
        now = _perf()
        for slot, entry in enumerate(list(self.records)):
            if len(entry) == 2:
                if slot in self.async_slots:
                    self._finish_once(slot, False, CANCELLED_AT_END, now)
                else:
                    self._finish_once(slot, None, RUNNING_AT_END, now)
        return tuple(ToolCallRecord(*entry) for entry in list(self.records))

    # --- synchronous calls (the snippet's thread) ----------------------------------
    def call(self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call a tool from synchronous snippet code and return its result.

        The hot path: binding, the trace entry and the switch to ``HOST`` state are
        inlined (see :meth:`Control.enter_host` for why the state switch needs no lock).
        """
        self.calls += 1
        if self.calls > self.max_calls:
            self._refuse(spec, args, kwargs)
        try:
            bound: dict[str, Any] | None = spec.binder.bind(args, kwargs)
        except TypeError:
            bound = None
        if bound is None:  # outside the handler: the error gets no context
            bound = self._bind(spec, args, kwargs)  # records the failure and raises
        records = self.records
        slot = len(records)
        arguments = jsonable_arguments(bound, spec.name)
        call_arguments = arguments if arguments is bound or not self.plain_data else clone(bound)
        records.append((spec.name, arguments))
        control = self.control
        control.state = HOST
        if control.stop:
            control.enter_host()  # raises
        started = _perf()
        failure: dict[str, Any] | None = None
        try:
            given = call_arguments if self.plain_data else bound
            if spec.scoped:  # a wrapper (approval, tracing) that wants the call's scope
                scope = self._scope(spec, slot)
                result = self.host_context.copy().run(call_in_scope, scope, spec.call, **given)
            else:
                result = self.host_context.copy().run(spec.call, **given)
            if type(result) not in _PLAIN_RESULTS and inspect.isawaitable(result):
                result = self._wait_on_host(result)
            if self.plain_data:
                result = plain_result(spec, result)
            error = None
        except ExecutionInterrupted:
            result, error = None, CANCELLED_AT_END  # the stop is raised right below
        except BaseException as exc:
            result, error = None, describe_exception(exc)
            failure = exception_payload(exc)  # data only: the host's object stays here
        duration = _perf() - started
        ok = error is None
        requested = None
        if spec.scoped:
            arguments, requested = edited_arguments(self.scopes, slot, arguments)
            records[slot] = trace_entry(spec.name, arguments, ok, error, duration, requested)
        else:
            records[slot] = (spec.name, summarize_arguments(arguments), ok, error, duration)
        if self.relay is not None:
            record = ToolCallRecord(spec.name, arguments, ok, error, duration, requested)
            self.relay.tool_call(record)
        control.state = SNIPPET
        if control.stop:
            raise ExecutionInterrupted(control.reason)
        if error is not None:
            raise rebuild_tool_error(failure, spec.name, error)
        return result

    def _wait_on_host(self, awaitable: Awaitable[Any]) -> Any:
        future = self.host_context.copy().run(
            asyncio.run_coroutine_threadsafe, _await(awaitable), self.host_loop
        )
        control = self.control
        control.track(future)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            if control.stop:
                raise ExecutionInterrupted(control.reason) from None
            raise
        finally:
            control.untrack(future)

    # --- calls from running asyncio code (an awaitable per call) --------------------
    def acall(
        self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> AwaitableToolCall:
        """Start the call on the host's loop now; return an awaitable for its value.

        Eager, like ``asyncio.create_task``: a call that is never awaited still runs;
        :meth:`settle` waits for it before the execution ends.
        """
        self.calls += 1
        if self.calls > self.max_calls:
            self._refuse(spec, args, kwargs)
        bound = self._bind(spec, args, kwargs)
        control = self.control
        if control.stop:
            raise ExecutionInterrupted(control.reason)
        arguments = jsonable_arguments(bound, spec.name)
        slot = len(self.records)
        self.records.append((spec.name, arguments))
        if self.plain_data and arguments is not bound:
            bound = clone(bound)
        future = self.host_context.copy().run(
            asyncio.run_coroutine_threadsafe, self._on_host(spec, bound, slot), self.host_loop
        )
        control.track(future)
        on_cancel = None
        if spec.is_async:
            self.async_slots.add(slot)
            on_cancel = functools.partial(self._cancelled, slot, _perf())
        call = AwaitableToolCall(
            spec.name, functools.partial(wait_async, control, future, on_cancel)
        )
        self.started.append((call, future))
        return call

    def settle(self) -> None:
        """Wait for calls the snippet started but never awaited; note them on stderr.

        Runs in the snippet's thread, inside the time limit (a stop cancels the wait).
        """
        started, self.started = self.started, []
        notes: list[tuple[str, str | None]] = []
        control = self.control
        for call, future in started:
            if call._ptc_awaited:
                continue
            control.enter_host()
            try:
                concurrent.futures.wait([future])
            finally:
                control.untrack(future)
                control.leave_host()
            if not call._ptc_unawaited:  # misused: its TypeError already said why
                continue
            if future.cancelled():
                notes.append((call._ptc_name, "the call was cancelled"))
                continue
            exc = future.exception()
            notes.append((call._ptc_name, None if exc is None else tool_error_text(exc)))
        if notes:
            self.stderr.write(unawaited_notes(notes))

    async def _on_host(self, spec: ToolSpec, bound: dict[str, Any], slot: int) -> Any:
        if self.semaphore is None:
            self.semaphore = asyncio.Semaphore(self.max_concurrent)
        async with self.semaphore:
            started = _perf()
            error = failure = None
            if spec.scoped:  # this task's own context: the tool's too
                enter_scope(self._scope(spec, slot))
            try:
                if spec.is_async:
                    result = spec.call(**bound)
                else:
                    sync = SyncCall(self._finish_once, slot, started)
                    try:
                        result = await self._in_thread(
                            functools.partial(sync.run, spec.call, bound)
                        )
                    except (asyncio.CancelledError, anyio.get_cancelled_exc_class()):
                        sync.abandon()  # it runs on: recorded when it ends (see _trace)
                        raise
                if inspect.isawaitable(result):
                    result = await result
                if self.plain_data:
                    result = plain_result(spec, result)
            except (asyncio.CancelledError, anyio.get_cancelled_exc_class()):
                if spec.is_async or not sync.abandoned:
                    self._cancelled(slot, started)
                raise
            except BaseException as exc:
                error = describe_exception(exc)
                failure = exception_payload(exc)
            self._finish_once(slot, error is None, error, started)
            if error is not None:
                raise rebuild_tool_error(failure, spec.name, error)
            return result

    def _in_thread(self, fn: functools.partial[Any]) -> asyncio.Future[Any]:
        """Run ``fn`` in one of this execution's tool threads, in a copy of the current
        context; cancelling the wait abandons a call already running."""
        if self.threads is None:
            self.threads = ScopedExecutor(tool_threads())
        context = contextvars.copy_context()
        return asyncio.wrap_future(self.threads.submit(context.run, fn))

    # --- sleep ---------------------------------------------------------------------
    def sleep(self, seconds: float) -> None:
        """``time.sleep`` for snippets: returns early (raising) when the execution stops."""
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as a number")
        if math.isnan(seconds) or seconds < 0:
            raise ValueError("sleep length must be non-negative")
        control = self.control
        control.enter_host()
        try:
            control.wake.wait(min(seconds, threading.TIMEOUT_MAX))
        finally:
            control.leave_host()


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable

"""Tool calls of one SubprocessRuntime execution, as the host runs them.

:class:`CallHandler` is the half of :class:`~ptcbox.runtimes.subprocess._execution.HostExecution`
that checks a call message (known tool, call-count limit, arguments bound to the
signature), runs sync tools where the call arrived (the channel thread) or, for calls
from the snippet's asyncio code and for async tools, on the caller's event loop at most
``max_concurrent_tool_calls`` at once, and records every call as a ``ToolCallRecord``.
Arguments and results cross as the tagged JSON of :mod:`ptcbox.runtimes._shared._codec`
(their Python types kept; the host decodes only the types it lists); a tool's exception
crosses as the data of :func:`~ptcbox.runtimes._shared._tool_errors.exception_payload`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from ptcbox._result import ToolCallRecord
from ptcbox.errors import LimitExceeded, ToolCallLimitExceeded, WireProtocolError
from ptcbox.runtimes._protocol import ToolCallCallback
from ptcbox.runtimes._shared._clock import CallScope, Deadline
from ptcbox.runtimes._shared._codec import decode
from ptcbox.runtimes._shared._error_text import describe_exception
from ptcbox.runtimes._shared._host import ToolSpec
from ptcbox.runtimes._shared._output import OutputBuffer, call_observer
from ptcbox.runtimes._shared._tool_errors import exception_payload
from ptcbox.runtimes._shared._value import MAX_TOOL_DATA_BYTES, json_size_over, result_size_error
from ptcbox.runtimes._wire import encode_message, field, reply_frame
from ptcbox.runtimes.subprocess._calltrace import UNCOUNTED_BYTES, CallTrace, PendingCall
from ptcbox.runtimes.subprocess._handle import WorkerHandle
from ptcbox.sandbox import SandboxPolicy

__all__ = ["CallHandler", "PendingCall", "set_done"]

Outcome = tuple[str, Any]
_SCALARS = frozenset({int, float, bool, type(None)})
REFUSED_CALLS_SLACK = 100
"""Calls past ``max_tool_calls`` refused one by one before the execution is ended."""
MAX_UNSENT_REPLY_BYTES = 64 << 20
"""Tool replies waiting for the worker to read them, in bytes, before the execution ends."""


class CallHandler(CallTrace):
    """Tool-call handling shared by the loop and the channel thread of an execution."""

    worker: WorkerHandle
    specs: dict[str, ToolSpec]
    policy: SandboxPolicy
    executor: Executor
    on_tool_call: ToolCallCallback | None
    records: list[ToolCallRecord | None]
    _loop: asyncio.AbstractEventLoop
    _context: contextvars.Context
    """The caller's context at ``execute``: every tool call runs in a fresh copy (a
    reused channel or executor thread keeps nothing a tool set for the next call)."""
    _finished: asyncio.Future[Outcome]
    _send_lock: threading.Lock
    _stopped: bool
    _calls: int
    _active: int
    _queued: deque[PendingCall]
    _tasks: set[asyncio.Future[Any]]
    _outbox: list[bytes]
    _outbox_bytes: int
    _outbox_lock: threading.Lock
    _draining: bool
    _live: dict[int, PendingCall]  # started, not yet recorded; by trace index
    _on_loop_calls: dict[int, PendingCall]  # admitted to the loop, by call id
    _trace_lock: threading.Lock
    _held: int  # wire bytes of the arguments of calls in progress
    _frame_bytes: int  # the size of the call frame being handled
    clock: Deadline  # the execution's deadline
    stdout: OutputBuffer
    stderr: OutputBuffer

    def _finish(self, outcome: Outcome) -> None:
        raise NotImplementedError

    def _finish_from(self, outcome: Outcome, on_loop: bool) -> None:
        if on_loop:
            self._finish(outcome)
        else:
            self._post(self._finish, outcome)

    def _post(self, fn: Callable[..., Any], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed
            self._loop.call_soon_threadsafe(fn, *args)

    def _observe(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._finished.done():
            return
        call_observer(self._loop, fn, *args)

    def _sendall(self, data: bytes) -> None:
        with self._send_lock:
            self.worker.sock.sendall(data)

    def _reply(self, data: bytes) -> None:
        try:
            with self._send_lock:
                self.worker.sock.sendall(data)
        except OSError:  # the worker is gone
            pass

    def _send_later(self, data: bytes) -> None:
        """Queue a frame for the worker (any thread); never blocks.

        One tool thread at a time sends what is queued, so a worker that stops reading
        holds one of the runtime's tool threads, not one per reply; past
        :data:`MAX_UNSENT_REPLY_BYTES` waiting, the execution ends.
        """
        with self._outbox_lock:
            waiting = self._outbox_bytes + len(data)
            over = waiting > MAX_UNSENT_REPLY_BYTES
            if not over:  # past the cap nothing more is kept: the execution is ending
                self._outbox.append(data)
                self._outbox_bytes = waiting
            start = not (self._draining or over)
            if start:
                self._draining = True
        if over:
            limit = LimitExceeded("unread tool results", MAX_UNSENT_REPLY_BYTES, waiting, "bytes")
            note = " (the code started tool calls without reading their results)"
            self._post(self._finish, ("limit", (limit, note)))
        elif start:
            with contextlib.suppress(RuntimeError):  # closing: the worker is being killed
                self.executor.submit(self._drain)

    def _drain(self) -> None:
        while True:
            with self._outbox_lock:
                if not self._outbox or self._stopped:
                    self._outbox.clear()
                    self._outbox_bytes = 0
                    self._draining = False
                    return
                data = b"".join(self._outbox)
                self._outbox.clear()
                self._outbox_bytes = 0
            try:
                self._sendall(data)
            except OSError:  # the worker is gone
                with self._outbox_lock:
                    self._outbox.clear()
                    self._outbox_bytes = 0
                    self._draining = False
                return

    def _on_call(self, message: dict[str, Any], on_loop: bool) -> PendingCall | None:
        """Check a call; return it when a sync tool must run it, else start or refuse it."""
        call_id, name = message.get("id"), message.get("name")
        args, kwargs = message.get("args"), message.get("kwargs")
        if not (  # exact types (no bool id); else field() says what is wrong
            type(call_id) is int
            and type(name) is str
            and type(args) is list
            and type(kwargs) is dict
        ):
            call_id = field(message, "id", int)
            name = field(message, "name", str)
            args = field(message, "args", list)
            kwargs = field(message, "kwargs", dict)
        spec = self.specs.get(name)
        if spec is None:
            raise WireProtocolError(f"the worker called an unknown tool {name[:100]!r}")
        args, kwargs = decode_arguments(args, kwargs)
        self._calls += 1
        limit = self.policy.max_tool_calls
        if self._calls > limit + REFUSED_CALLS_SLACK:  # it ignores the refusals: stop it
            if self._calls == limit + REFUSED_CALLS_SLACK + 1:
                note = (
                    f" (the code kept calling tools after the limit: {REFUSED_CALLS_SLACK} "
                    "more calls were refused, then the execution was stopped)"
                )
                outcome = ("limit", (ToolCallLimitExceeded(limit, self._calls), note))
                self._finish_from(outcome, on_loop)
            return None
        if self._calls > limit:
            if self._calls == limit + 1:  # record the first refused call only
                refused = ToolCallLimitExceeded(limit, self._calls)
                self.records.append(None)
                self._record(
                    PendingCall(call_id, spec, raw_arguments(args, kwargs), len(self.records) - 1),
                    False,
                    describe_exception(refused),
                )
            refusal = {
                "t": "error",
                "id": call_id,
                "kind": "ToolCallLimitExceeded",
                "limit": limit,
                "observed": self._calls,
            }
            self._send_later(encode_message(refusal))  # it may not be read yet
            return None
        index = len(self.records)
        self.records.append(None)
        try:
            arguments = spec.binder.bind(tuple(args), kwargs)
        except TypeError as exc:
            text = str(exc)
            call = PendingCall(call_id, spec, raw_arguments(args, kwargs), index)
            self._record(call, False, f"TypeError: {text}")
            self._send_later(error_frame(call_id, "TypeError", name, text, note=spec.binder.note))
            return None
        call = PendingCall(call_id, spec, arguments, index)
        if spec.scoped:
            call.scope = CallScope(index, name, self.clock)
        self._live[index] = call
        if self._frame_bytes >= UNCOUNTED_BYTES and not self._hold(call, on_loop):
            return None
        if spec.is_async or message.get("async") is True:
            if on_loop:
                self._admit(call)
            else:
                self._post(self._admit, call)
            return None
        return call

    def _run_inline(self, call: PendingCall) -> None:
        """Run a sync tool in the channel thread and reply from there."""
        ok, payload, call.seconds = self._context.copy().run(
            call_sync, call.callee(), call.arguments, call.call_id, call.spec.name
        )
        if ok and type(payload) is not bytes:  # a "sync" projection returned an awaitable
            self._post(self._await_on_loop, call, payload)
            return
        self._finish_call(call, ok, payload, inline=True)

    def _finish_call(
        self, call: PendingCall, ok: bool, payload: Any, *, inline: bool = False
    ) -> None:
        """Send the reply of a finished call and record it (any thread).

        ``inline``: called by the channel thread, which reads ``done`` only after this
        returns, so the reply may go first (the worker resumes sooner). Other threads
        record first, so that the trace is complete when ``done`` arrives, and queue
        the reply (:meth:`_send_later`).
        """
        if ok:
            frame: bytes = payload
            error = None
        else:
            error = describe_exception(payload)
            frame = error_frame(
                call.call_id, "ToolError", call.spec.name, error, exception_payload(payload)
            )
        if inline:
            self._reply(frame)
            self._record(call, ok, error)
        else:
            self._record(call, ok, error)
            self._send_later(frame)

    def _admit(self, call: PendingCall) -> None:
        if self._stopped:
            return
        self._on_loop_calls[call.call_id] = call
        if self._active < self.policy.max_concurrent_tool_calls:
            self._start(call)
        else:
            self._queued.append(call)

    def _start(self, call: PendingCall) -> None:
        self._active += 1
        call.started = time.perf_counter()
        if call.spec.is_async:
            context = self._context.copy()
            awaitable = context.run(call.callee(), **call.arguments)
            task: asyncio.Future[Any] = self._loop.create_task(
                self._await_value(call, awaitable), context=context
            )
            call.task = task
        else:
            task = self._loop.run_in_executor(self.executor, self._run_sync_concurrently, call)
        self._tasks.add(task)
        task.add_done_callback(self._call_ended)

    def _run_sync_concurrently(self, call: PendingCall) -> None:
        ok, payload, call.seconds = self._context.copy().run(
            call_sync, call.callee(), call.arguments, call.call_id, call.spec.name
        )
        if ok and type(payload) is not bytes:  # an awaitable
            self._post(self._await_on_loop, call, payload)
            return
        self._finish_call(call, ok, payload)

    def _await_on_loop(self, call: PendingCall, awaitable: Any) -> None:
        if self._stopped:
            return
        self._active += 1
        task = self._loop.create_task(
            self._await_value(call, awaitable), context=self._context.copy()
        )
        call.task = task
        self._tasks.add(task)
        task.add_done_callback(self._call_ended)

    async def _await_value(self, call: PendingCall, awaitable: Any) -> None:
        started = time.perf_counter()
        try:
            value = await awaitable
        except Exception as exc:
            call.seconds += time.perf_counter() - started
            self._finish_call(call, False, exc)
            return
        call.seconds += time.perf_counter() - started
        ok, frame, _ = encode_result(call.spec.name, call.call_id, value, 0.0)
        if not ok:
            self._finish_call(call, False, frame)
            return
        self._finish_call(call, True, frame)  # queued: never blocks the loop

    def _call_ended(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        self._active -= 1
        while self._queued and self._active < self.policy.max_concurrent_tool_calls:
            self._start(self._queued.popleft())


def raw_arguments(args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Arguments of a call that could not be bound, for its record."""
    return {**kwargs, "*args": args} if args else dict(kwargs)


def set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def error_frame(
    call_id: int,
    kind: str,
    tool: str,
    message: str,
    exc: dict[str, Any] | None = None,
    *,
    note: str | None = None,
) -> bytes:
    """The ``error`` reply of a call; ``exc``: the tool's exception as data; ``note``: a
    PEP 678 note for the snippet's exception (an argument error's tool signature)."""
    reply: dict[str, Any] = {
        "t": "error",
        "id": call_id,
        "kind": kind,
        "tool": tool,
        "message": message,
    }
    if note is not None:
        reply["note"] = note
    if exc is not None:
        reply["exc"] = exc
        try:
            return encode_message(reply)
        except WireProtocolError:  # its args are huge: the message alone
            del reply["exc"]
    return encode_message(reply)


_PLAIN = frozenset({str, int, float, bool, type(None)})


def decode_arguments(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Decode the tagged JSON of a call's arguments; only the codec's types are built.

    Raises:
        WireProtocolError: If a tagged value is malformed.
    """
    plain = _PLAIN
    try:
        for value in args:  # loops, not all(...): no generator per call
            if type(value) not in plain:
                args = [decode(value) for value in args]
                break
        for value in kwargs.values():
            if type(value) not in plain:
                kwargs = {key: decode(value) for key, value in kwargs.items()}
                break
    except ValueError as exc:
        raise WireProtocolError(f"malformed tool arguments: {exc}") from None
    return args, kwargs


def call_sync(
    projection: Callable[..., Any], arguments: dict[str, Any], call_id: int, name: str
) -> tuple[bool, Any, float]:
    """Run a sync tool; encode its reply in the same thread.

    Returns:
        ``(True, result frame bytes, seconds)``, ``(True, awaitable, seconds)`` when the
        tool returned one, or ``(False, exception, seconds)``.
    """
    started = time.perf_counter()
    try:
        value = projection(**arguments)
    except Exception as exc:
        return False, exc, time.perf_counter() - started
    seconds = time.perf_counter() - started
    if type(value) not in _SCALARS and inspect.isawaitable(value):
        return True, value, seconds
    return encode_result(name, call_id, value, seconds)


def encode_result(name: str, call_id: int, value: Any, seconds: float) -> tuple[bool, Any, float]:
    """The ``result`` frame of a tool's value, or the error when it is too large."""
    if type(value) not in _SCALARS:
        over = json_size_over(value, MAX_TOOL_DATA_BYTES)
        if over:  # refused before converting or encoding it
            return False, result_size_error(name, over), seconds
    try:
        return True, reply_frame(call_id, value), seconds
    except WireProtocolError:  # its exact encoding is over the frame limit
        return False, result_size_error(name, MAX_TOOL_DATA_BYTES + 1), seconds

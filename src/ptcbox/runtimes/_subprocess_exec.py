"""Host side of one SubprocessRuntime execution: frames in, tool calls out, a CodeResult.

:class:`HostExecution` serves the worker's socket from one host thread (see
:mod:`ptcbox.runtimes._subprocess_threads`): it sends the ``run`` message, reads frames
with a blocking ``recv``, treats everything as hostile (size-capped frames, every field
checked), writes output into per-execution :class:`~ptcbox.runtimes._output.OutputBuffer`
objects, and runs a sync tool called from synchronous snippet code right there, so a
tool call costs one round trip between two processes and no event-loop scheduling. Calls
made from running asyncio code in the snippet, and async tools, go to the caller's event
loop, which runs them concurrently (sync ones in the runtime's tool threads), at most
``max_concurrent_tool_calls`` at once. Observers and the outcome are handed to the loop
with ``call_soon_threadsafe``; the loop owns the deadline (which includes time in host
tools) and kills the worker's process group when it passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from ptcbox._result import ToolCallRecord
from ptcbox.errors import ToolCallLimitExceeded, WireProtocolError
from ptcbox.runtimes._common import (
    ToolSpec,
    describe_exception,
    jsonable_arguments,
)
from ptcbox.runtimes._output import OutputBuffer
from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback
from ptcbox.runtimes._subprocess_threads import ChannelThreads
from ptcbox.runtimes._wire import (
    KIND_STDERR,
    KIND_STDOUT,
    FrameDecoder,
    encode_message,
    field,
    parse_message,
    reply_frame,
)
from ptcbox.runtimes._worker_handle import WorkerHandle
from ptcbox.sandbox import SandboxPolicy

__all__ = ["HostExecution", "Outcome"]

_RECV_BYTES = 64 * 1024  # below malloc's mmap threshold: no mmap/munmap per recv
_DRAIN_S = 0.25
_EXIT_REPORT_S = 2.0
_ERROR_TYPE_CHARS = 100

Outcome = tuple[str, Any]
"""``("done", message)``, ``("timeout", None)``, ``("eof", None)``,
``("protocol", WireProtocolError)`` or ``("observer", exception)``."""


class _Call:
    __slots__ = ("arguments", "call_id", "index", "seconds", "spec")

    def __init__(self, call_id: int, spec: ToolSpec, arguments: dict[str, Any], index: int):
        self.call_id = call_id
        self.spec = spec
        self.arguments = arguments
        self.index = index
        self.seconds = 0.0


class HostExecution:
    """One ``run`` on one worker, from the first frame to the :class:`CodeResult`.

    Args:
        worker: The worker; its socket is served by a channel thread.
        specs: The tools by name.
        policy: The policy (output caps, tool-call limits).
        threads: Where the channel thread comes from.
        executor: Where sync tools called concurrently (from asyncio code) run.
        on_tool_call: Observer of finished tool calls (run on the loop).
        on_output: Observer of output chunks (run on the loop).
    """

    def __init__(  # noqa: PLR0917
        self,
        worker: WorkerHandle,
        specs: dict[str, ToolSpec],
        policy: SandboxPolicy,
        threads: ChannelThreads,
        executor: Executor,
        on_tool_call: ToolCallCallback | None,
        on_output: OutputCallback | None,
    ) -> None:
        self.worker = worker
        self.specs = specs
        self.policy = policy
        self.threads = threads
        self.executor = executor
        self.on_tool_call = on_tool_call
        self.on_output = on_output
        self.stdout = OutputBuffer(policy.max_output_bytes)
        self.stderr = OutputBuffer(policy.max_output_bytes)
        self.records: list[ToolCallRecord | None] = []
        self._loop = asyncio.get_running_loop()
        self._finished: asyncio.Future[Outcome] = self._loop.create_future()
        self._left: asyncio.Future[None] = self._loop.create_future()
        self._send_lock = threading.Lock()
        self._stopped = False
        self._calls = 0
        self._active = 0
        self._queued: deque[_Call] = deque()
        self._tasks: set[asyncio.Future[Any]] = set()

    # -- the loop's side -----------------------------------------------------------------

    async def run(self, run_frame: bytes, timeout: float) -> Outcome:
        """Send ``run_frame`` and wait for the outcome; kill the worker unless it is done.

        On cancellation the worker's process group is killed before the
        ``CancelledError`` propagates.
        """
        # The loop sends what fits in the socket buffer right away (the worker wakes
        # while the channel thread does); the channel thread sends the rest.
        sock = self.worker.sock
        sock.setblocking(False)
        try:
            sent = sock.send(run_frame)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            sent = len(run_frame)  # the worker is gone: the channel thread sees EOF
        self.worker.enter()
        try:
            self.threads.submit(self._serve, run_frame[sent:])
        except BaseException:
            self.worker.leave()
            raise
        deadline = self._loop.call_later(timeout, self._finish, ("timeout", None))
        try:
            outcome = await self._finished
            if outcome[0] == "eof":
                await self.worker.wait_exit(_EXIT_REPORT_S)
            elif outcome[0] != "done":
                self.worker.kill()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._left), _DRAIN_S)
            return outcome
        except BaseException:
            self.worker.kill()
            raise
        finally:
            deadline.cancel()
            self._stop()

    def _stop(self) -> None:
        self._stopped = True
        self._queued.clear()
        for task in list(self._tasks):
            task.cancel()
        self._tasks.clear()
        self.stdout.close()
        self.stderr.close()

    def _finish(self, outcome: Outcome) -> None:
        if not self._finished.done():
            self._finished.set_result(outcome)

    def _post(self, fn: Callable[..., Any], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed
            self._loop.call_soon_threadsafe(fn, *args)

    def _observe(self, fn: Callable[..., Any], *args: Any) -> None:
        if self._finished.done():
            return
        try:
            fn(*args)
        except Exception as exc:  # an observer raised: the caller's bug, re-raised
            self._finish(("observer", exc))

    # -- the channel thread --------------------------------------------------------------

    def _serve(self, rest_of_run_frame: bytes) -> None:
        outcome: Outcome = ("eof", None)
        sock = self.worker.sock
        try:
            sock.setblocking(True)
            if rest_of_run_frame:
                self._sendall(rest_of_run_frame)
            decoder = FrameDecoder()
            while outcome[0] == "eof":
                data = sock.recv(_RECV_BYTES)
                if not data:
                    break
                for kind, payload in decoder.feed(data):
                    done = self._on_frame(kind, payload)
                    if done is not None:
                        outcome = ("done", done)
                        break
        except WireProtocolError as exc:
            outcome = ("protocol", exc)
            self.worker.kill()
        except OSError:
            pass
        finally:
            self.worker.leave()
            self._post(self._finish, outcome)
            self._post(_set_done, self._left)

    def _sendall(self, data: bytes) -> None:
        with self._send_lock:
            self.worker.sock.sendall(data)

    def _reply(self, data: bytes) -> None:
        with contextlib.suppress(OSError):
            self._sendall(data)

    def _on_frame(self, kind: int, payload: bytes) -> dict[str, Any] | None:
        if kind in (KIND_STDOUT, KIND_STDERR):
            text = payload.decode("utf-8", "replace")
            if kind == KIND_STDOUT:
                self.stdout.write(text)
                stream = "stdout"
            else:
                self.stderr.write(text)
                stream = "stderr"
            if self.on_output is not None and not self._stopped:
                self._post(self._observe, self.on_output, stream, text)
            return None
        message = parse_message(kind, payload)
        what = message["t"]
        if what == "call":
            if not self._stopped:
                self._on_call(message)
            return None
        if what == "done":
            _check_done(message)
            return message
        raise WireProtocolError(f"unexpected message type {what[:50]!r} from the worker")

    def _on_call(self, message: dict[str, Any]) -> None:
        call_id = field(message, "id", int)
        name = field(message, "name", str)
        args = field(message, "args", list)
        kwargs = field(message, "kwargs", dict)
        spec = self.specs.get(name)
        if spec is None:
            raise WireProtocolError(f"the worker called an unknown tool {name[:100]!r}")
        self._calls += 1
        limit = self.policy.max_tool_calls
        if self._calls > limit:
            if self._calls == limit + 1:  # record the first refused call only
                refused = ToolCallLimitExceeded(limit, self._calls)
                self.records.append(None)
                self._record(
                    _Call(call_id, spec, _raw_arguments(args, kwargs), len(self.records) - 1),
                    False,
                    describe_exception(refused),
                )
            self._reply(
                encode_message(
                    {
                        "t": "error",
                        "id": call_id,
                        "kind": "ToolCallLimitExceeded",
                        "limit": limit,
                        "observed": self._calls,
                    }
                )
            )
            return
        index = len(self.records)
        self.records.append(None)
        try:
            arguments = spec.binder.bind(tuple(args), kwargs)
        except TypeError as exc:
            text = str(exc)
            call = _Call(call_id, spec, _raw_arguments(args, kwargs), index)
            self._record(call, False, f"TypeError: {text}")
            self._reply(_error_frame(call_id, "TypeError", name, text))
            return
        call = _Call(call_id, spec, arguments, index)
        if spec.is_async or message.get("async") is True:
            self._post(self._admit, call)
            return
        ok, payload, call.seconds = _call_sync(spec.projection, arguments, call_id)
        if ok and inspect.isawaitable(payload):  # a "sync" projection returned an awaitable
            self._post(self._await_on_loop, call, payload)
            return
        self._finish_call(call, ok, payload, inline=True)

    def _finish_call(self, call: _Call, ok: bool, payload: Any, *, inline: bool = False) -> None:
        """Send the reply of a finished call and record it (any thread).

        ``inline``: called by the channel thread, which reads ``done`` only after this
        returns, so the reply may go first (the worker resumes sooner). Other threads
        record first, so that the trace is complete when ``done`` arrives.
        """
        if ok:
            frame: bytes = payload
            error = None
        else:
            error = describe_exception(payload)
            frame = _error_frame(call.call_id, "ToolError", call.spec.name, error)
        if inline:
            self._reply(frame)
            self._record(call, ok, error)
        else:
            self._record(call, ok, error)
            self._reply(frame)

    def _record(self, call: _Call, ok: bool, error: str | None) -> None:
        record = ToolCallRecord(
            name=call.spec.name,
            arguments=jsonable_arguments(call.arguments),
            ok=ok,
            error=error,
            duration_s=call.seconds,
        )
        self.records[call.index] = record
        if self.on_tool_call is not None and not self._stopped:
            self._post(self._observe, self.on_tool_call, record)

    # -- concurrent calls, on the loop ---------------------------------------------------

    def _admit(self, call: _Call) -> None:
        if self._stopped:
            return
        if self._active < self.policy.max_concurrent_tool_calls:
            self._start(call)
        else:
            self._queued.append(call)

    def _start(self, call: _Call) -> None:
        self._active += 1
        if call.spec.is_async:
            task: asyncio.Future[Any] = self._loop.create_task(
                self._await_value(call, call.spec.projection(**call.arguments))
            )
        else:
            task = self._loop.run_in_executor(self.executor, self._run_sync_concurrently, call)
        self._tasks.add(task)
        task.add_done_callback(self._call_ended)

    def _run_sync_concurrently(self, call: _Call) -> None:
        ok, payload, call.seconds = _call_sync(call.spec.projection, call.arguments, call.call_id)
        if ok and inspect.isawaitable(payload):
            self._post(self._await_on_loop, call, payload)
            return
        self._finish_call(call, ok, payload)

    def _await_on_loop(self, call: _Call, awaitable: Any) -> None:
        if self._stopped:
            return
        self._active += 1
        task = self._loop.create_task(self._await_value(call, awaitable))
        self._tasks.add(task)
        task.add_done_callback(self._call_ended)

    async def _await_value(self, call: _Call, awaitable: Any) -> None:
        started = time.perf_counter()
        try:
            value = await awaitable
        except Exception as exc:
            call.seconds += time.perf_counter() - started
            self._finish_call(call, False, exc)
            return
        call.seconds += time.perf_counter() - started
        try:
            frame = reply_frame(call.call_id, value)
        except WireProtocolError as exc:
            self._finish_call(call, False, exc)
            return
        # a big reply may block until the worker reads it: send from a tool thread
        self.executor.submit(self._finish_call, call, True, frame)

    def _call_ended(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        self._active -= 1
        while self._queued and self._active < self.policy.max_concurrent_tool_calls:
            self._start(self._queued.popleft())


def _raw_arguments(args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Arguments of a call that could not be bound, for its record."""
    return {**kwargs, "*args": args} if args else dict(kwargs)


def _set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _check_done(message: dict[str, Any]) -> None:
    error = message.get("error")
    error_type = message.get("error_type")
    if not isinstance(error, str | None) or not isinstance(error_type, str | None):
        raise WireProtocolError("malformed 'done' message: error fields are not text")
    if not isinstance(message.get("truncated"), bool):
        raise WireProtocolError("malformed 'done' message: 'truncated' is not a bool")


def _error_frame(call_id: int, kind: str, tool: str, message: str) -> bytes:
    return encode_message(
        {"t": "error", "id": call_id, "kind": kind, "tool": tool, "message": message}
    )


def _call_sync(
    projection: Callable[..., Any], arguments: dict[str, Any], call_id: int
) -> tuple[bool, Any, float]:
    """Run a sync tool; encode its reply in the same thread."""
    started = time.perf_counter()
    try:
        value = projection(**arguments)
    except Exception as exc:
        return False, exc, time.perf_counter() - started
    seconds = time.perf_counter() - started
    if inspect.isawaitable(value):
        return True, value, seconds
    try:
        return True, reply_frame(call_id, value), seconds
    except WireProtocolError as exc:
        return False, exc, seconds

"""Host side of one SubprocessRuntime execution: frames in, tool calls out, a CodeResult.

:class:`HostExecution` sends the ``run`` message and reads the worker's socket on the
event loop (``add_reader``) as long as only output and ``done`` arrive, so a snippet that
calls no sync tool costs two wake-ups (host to worker, worker to host). The first call of
a sync tool from synchronous snippet code hands the socket to one host thread (see
:mod:`ptcbox.runtimes.subprocess._threads`), which from then on reads with a blocking
``recv`` and runs each sync tool right where its call arrives: a tool call costs one
round trip between two processes and no event-loop scheduling. Calls made from running
asyncio code in the snippet, and async tools, run on the caller's event loop,
concurrently (sync ones in the runtime's tool threads), at most
``max_concurrent_tool_calls`` at once. Everything the worker sends is treated as
hostile: size-capped frames, every field checked. A frame over 1 MiB is never decoded
on the loop (1-1.4 s stalls for a 16 MiB call): the loop hands the socket to a channel
thread as soon as one starts to arrive. The loop owns the deadline (which includes time
in host tools, not the wait for an approval: see :mod:`ptcbox.runtimes._shared._clock`)
and kills the worker's process group when it passes; the worker has no wall clock of
its own (only ``RLIMIT_CPU``, which a worker blocked waiting for a reply does not use).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import math
import re
import socket
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from ptcbox._result import ToolCallRecord
from ptcbox.errors import WireProtocolError
from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback
from ptcbox.runtimes._shared._clock import Deadline
from ptcbox.runtimes._shared._host import ToolSpec
from ptcbox.runtimes._shared._output import OutputBuffer, output_flood
from ptcbox.runtimes._wire import (
    KIND_STDERR,
    KIND_STDOUT,
    FrameDecoder,
    SpinningReceiver,
    parse_message,
)
from ptcbox.runtimes.subprocess._calls import CallHandler, set_done
from ptcbox.runtimes.subprocess._calltrace import PendingCall
from ptcbox.runtimes.subprocess._checks import check_done, done_bytes_limit
from ptcbox.runtimes.subprocess._handle import WorkerHandle
from ptcbox.runtimes.subprocess._threads import ChannelThreads
from ptcbox.runtimes.subprocess.worker import _timing as timing
from ptcbox.sandbox import SandboxPolicy

__all__ = ["HostExecution", "Outcome"]

_RECV_BYTES = 64 * 1024  # below malloc's mmap threshold: no mmap/munmap per recv
_DRAIN_S = 0.25
_START_SPIN_S = 0.003  # a warm worker's first call comes within ~1 ms of the run frame
_EXIT_REPORT_S = 2.0
_ERROR_TYPE_CHARS = 100
_HAND_OVER_WAIT_S = 0.05  # a channel thread waits this long at most for the loop to take over
_LARGE_FRAME_BYTES = 1 << 20  # frames over this are decoded by a channel thread
_CALL_PREFIX = re.compile(rb'\{"t": ?"call"')

Outcome = tuple[str, Any]
"""``("done", message)``, ``("timeout", None)``, ``("eof", None)``,
``("protocol", WireProtocolError)``, ``("limit", (LimitExceeded, note))``
or ``("refused", PreflightFailure)``."""


class HostExecution(CallHandler):
    """One ``run`` on one worker, from the first frame to the :class:`CodeResult`.

    Args:
        worker: The worker; its socket is served by a channel thread.
        specs: The tools by name.
        policy: The policy (output caps, tool-call limits).
        threads: Where the channel thread comes from.
        executor: Where sync tools called concurrently (from asyncio code) run.
        on_tool_call: Observer of finished tool calls (run on the loop).
        on_output: Observer of output chunks (run on the loop).
        nonce: The execute's nonce (sessions), sent in an ``id`` message before
            ``run``; a ``done`` must carry it, so a session worker cannot queue a
            ``done`` during one execute that would answer the next.
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
        nonce: str | None = None,
    ) -> None:
        self.worker = worker
        self.nonce = nonce
        self.specs = specs
        self.policy = policy
        self.threads = threads
        self.executor = executor
        self.on_tool_call = on_tool_call
        self.on_output = on_output
        self.stdout = OutputBuffer(policy.max_output_bytes, on_flood=self._flooded)
        self.stderr = OutputBuffer(policy.max_output_bytes, on_flood=self._flooded)
        self.records: list[ToolCallRecord | None] = []
        self._loop = asyncio.get_running_loop()
        self._context = contextvars.copy_context()
        self._finished: asyncio.Future[Outcome] = self._loop.create_future()
        self._left: asyncio.Future[None] = self._loop.create_future()
        self._send_lock = threading.Lock()
        self._handed_over = threading.Event()  # the loop has the outcome (see _serve)
        self._stopped = False
        self._calls = 0
        self._active = 0
        self._queued: deque[PendingCall] = deque()
        self._tasks: set[asyncio.Future[Any]] = set()
        self._outbox: list[bytes] = []
        self._outbox_bytes = 0
        self._outbox_lock = threading.Lock()
        self._draining = False
        self._live: dict[int, PendingCall] = {}
        self._on_loop_calls: dict[int, PendingCall] = {}
        self._trace_lock = threading.Lock()
        self._held = 0
        self._frame_bytes = 0
        self._decoder = FrameDecoder()
        self._large = done_bytes_limit(policy.max_output_bytes)
        self._fd = worker.sock.fileno()
        self._reading = False
        self.heard = False  # whether the worker sent anything in this execution
        self.clock = Deadline(math.inf)

    # -- the loop's side -----------------------------------------------------------------

    async def run(
        self,
        run_frame: bytes,
        timeout: float,
        *,
        thread_reads: bool = False,
        check: Callable[[], Any] | None = None,
    ) -> Outcome:
        """Send ``run_frame`` and wait for the outcome; kill the worker unless it is done.

        Args:
            run_frame: The ``run`` message.
            timeout: Seconds until the worker is killed.
            thread_reads: Let a channel thread read the socket from the start, polling
                through the worker's start-up, so that a sync tool's first call runs at
                once (no hand-over from the loop). Worth it when the snippet names a
                sync tool and a CPU is free. Otherwise the loop reads until a sync tool
                is called.
            check: The pre-flight check of a snippet (see ``_shared/_preflight``), run
                here after the frame is sent, while the worker compiles, and before
                anything the worker sends is read (so before any tool call runs). What
                it returns other than ``None`` ends the execution as
                ``("refused", failure)`` and the worker is killed.

        On cancellation the worker's process group is killed before the
        ``CancelledError`` propagates.
        """
        sock = self.worker.sock  # blocking: threads block; the loop passes MSG_DONTWAIT
        if timing.ON:
            timing.note(self.worker.pid, "handout")
        if check is None:
            self._start_reading(thread_reads)
        self.clock = Deadline(timeout)  # paused while an approval is awaited (_shared/_clock)
        self.clock.arm(self._loop, functools.partial(self._finish, ("timeout", None)))
        try:
            sent = sock.send(run_frame, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            sent = len(run_frame)  # the worker is gone: the reader sees the end of file
        if sent < len(run_frame):
            self._send_later(run_frame[sent:])
        if timing.ON:
            timing.note(self.worker.pid, "sent")
        try:
            if check is not None:
                failure = check()
                if timing.ON:
                    timing.note(self.worker.pid, "checked")
                if failure is not None:
                    self.worker.kill()
                    return ("refused", failure)
                self._start_reading(thread_reads)
            outcome = await self._finished
            if timing.ON:
                timing.note(self.worker.pid, "outcome")
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
            self.clock.disarm()
            self._stop()

    def _start_reading(self, thread_reads: bool) -> None:
        if not (thread_reads and self._serve_from_thread(None, [], None)):
            self._loop.add_reader(self._fd, self._on_readable)
            self._reading = True

    def _stop(self) -> None:
        self._stopped = True
        self._handed_over.set()
        self._stop_reading()
        self._record_unfinished()
        self._queued.clear()
        for task in list(self._tasks):
            task.cancel()
        self._tasks.clear()
        self.stdout.close()
        self.stderr.close()

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._fd)

    def _finish(self, outcome: Outcome) -> None:
        if not self._finished.done():
            self._finished.set_result(outcome)

    def _flooded(self, written: int) -> None:
        """A stream got far more than the output cap: stop (any thread)."""
        self._post(self._finish, ("limit", output_flood(self.policy.max_output_bytes, written)))

    # -- reading: the loop first, the channel thread once a sync tool is called ----------

    def _on_readable(self) -> None:
        """The loop reads while no sync tool has been called (output, ``done``)."""
        while self._reading:
            try:
                data = self.worker.sock.recv(_RECV_BYTES, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if not data:
                self._stop_reading()
                set_done(self._left)
                self._finish(("eof", None))
                return
            frames, error = self._split(data)
            if self._decoder.pending_bytes > _LARGE_FRAME_BYTES or any(
                len(payload) > _LARGE_FRAME_BYTES for _, payload in frames
            ):  # decoding it would stall the loop: a channel thread reads from now on
                self._stop_reading()
                if not self._serve_from_thread(None, frames, error):
                    self._finish(("eof", None))
                return
            for index, (kind, payload) in enumerate(frames):
                try:
                    step = self._on_frame(kind, payload, on_loop=True)
                except WireProtocolError as exc:
                    error = exc
                    break
                if isinstance(step, PendingCall):  # a sync tool: hand the socket to a thread
                    self._stop_reading()
                    if not self._serve_from_thread(step, frames[index + 1 :], error):
                        self._finish(("eof", None))  # the runtime is closing
                    return
                if step is not None:
                    self._stop_reading()
                    self._finish(("done", step))
                    return
            if error is not None:
                self._stop_reading()
                self.worker.kill()
                self._finish(("protocol", error))
                return
            if len(data) < _RECV_BYTES:
                return

    def _split(self, data: bytes) -> tuple[list[tuple[int, bytes]], WireProtocolError | None]:
        """Complete frames in ``data`` (and what came before), and the first framing error."""
        self.heard = True
        whole = self._decoder.whole(data)
        if whole is not None:
            return [whole], None
        frames: list[tuple[int, bytes]] = []
        try:
            for frame in self._decoder.feed(data):
                frames.append(frame)
        except WireProtocolError as exc:
            return frames, exc
        return frames, None

    def _serve_from_thread(
        self,
        first: PendingCall | None,
        frames: list[tuple[int, bytes]],
        error: WireProtocolError | None,
    ) -> bool:
        """Hand the socket to a channel thread; ``False`` when the runtime is closing."""
        self.worker.enter()
        try:
            self.threads.submit(self._serve, first, frames, error)
        except RuntimeError:
            self.worker.leave()
            return False
        return True

    def _serve(
        self,
        first: PendingCall | None,
        frames: list[tuple[int, bytes]],
        error: WireProtocolError | None,
    ) -> None:
        """The channel thread: run sync tools where the calls arrive, until ``done``.

        ``first`` is ``None`` when the thread reads from the start: its first wait
        polls through the worker's start-up (:data:`_START_SPIN_S`).
        """
        outcome: Outcome = ("eof", None)
        calls_in = SpinningReceiver(self.worker.sock, _RECV_BYTES)
        window = _START_SPIN_S if first is None else None
        try:
            if first is not None:
                self._run_inline(first)
            while True:
                for kind, payload in frames:
                    step = self._on_frame(kind, payload, on_loop=False)
                    if isinstance(step, PendingCall):
                        self._run_inline(step)
                    elif step is not None:
                        outcome = ("done", step)
                        return
                if error is not None:
                    raise error
                data = calls_in.recv(poll=not self._decoder.pending_bytes, spin_seconds=window)
                window = None
                if not data:
                    return
                frames, error = self._split(data)
        except WireProtocolError as exc:
            outcome = ("protocol", exc)
            self.worker.kill()
        except OSError:
            pass
        finally:
            self.worker.leave()
            self._post(self._finish, outcome)
            self._post(set_done, self._left)
            # This thread ends next and its pool starts a spare thread in its place
            # (see _shared/_fresh_threads): not before the loop has taken the outcome,
            # which it would otherwise wait for (the start holds the GIL; measured:
            # done received -> outcome on the loop 216-254 us, 71-125 us after this).
            self._handed_over.wait(_HAND_OVER_WAIT_S)

    def _on_frame(self, kind: int, payload: bytes, *, on_loop: bool) -> Any:
        """Handle a frame; return ``done``'s message, a sync :class:`PendingCall`, or None."""
        if kind in (KIND_STDOUT, KIND_STDERR):
            text = payload.decode("utf-8", "replace")
            if kind == KIND_STDOUT:
                self.stdout.write(text)
                stream = "stdout"
            else:
                self.stderr.write(text)
                stream = "stderr"
            if self.on_output is not None and not self._stopped:
                if on_loop:
                    self._observe(self.on_output, stream, text)
                else:
                    self._post(self._observe, self.on_output, stream, text)
            return None
        if len(payload) > self._large and not _CALL_PREFIX.match(payload):
            raise WireProtocolError(  # only a call may be large: refused before decoding
                f"a {len(payload):,}-byte message that is not a tool call from the worker"
            )
        message = parse_message(kind, payload)
        self._frame_bytes = len(payload)
        what = message["t"]
        if what == "call":
            return None if self._stopped else self._on_call(message, on_loop)
        if what == "done":
            check_done(message, self.nonce, self.policy.max_output_bytes)
            if timing.ON:
                for step, ns in timing.clean(message.pop("tm", None), "w."):
                    timing.note(self.worker.pid, step, ns)
                timing.note(self.worker.pid, "done_recv")
            return message
        if what == "cancel":
            if on_loop:
                self._on_cancel(message)
            else:
                self._post(self._on_cancel, message)
            return None
        raise WireProtocolError(f"unexpected message type {what[:50]!r} from the worker")

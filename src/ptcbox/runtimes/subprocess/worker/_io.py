"""The worker side of the SubprocessRuntime channel: output streaming and tool stubs.

Runs inside the worker process. :class:`WorkerChannel` owns the worker's end of the
socket: it streams the snippet's output to the host in batches (a ``SIGALRM`` timer
sends a pending batch within a few milliseconds, a full batch goes at once), and turns a
tool call into a ``call`` message and the host's reply into a value, a ``TypeError`` or a
``ToolError``. In synchronous code a tool call blocks until the reply; inside running
asyncio code it sends the call at once and returns an
:class:`~ptcbox.runtimes._shared._awaitable.AwaitableToolCall`, so ``asyncio.gather`` runs
several calls at once (the socket is then read by the running loop). Messages are
encoded and decoded with the standard ``json`` module: orjson crashes the process when
an allocation fails under ``RLIMIT_AS`` (see :mod:`ptcbox.runtimes._wire`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import signal
import socket
import threading
from collections.abc import Callable, Coroutine, Generator
from typing import Any

from ptcbox._jsonable import scrub_text
from ptcbox.errors import ToolCallLimitExceeded, WireProtocolError
from ptcbox.runtimes._shared._awaitable import AwaitableToolCall, check_argument, unawaited_notes
from ptcbox.runtimes._shared._codec import decode, encode
from ptcbox.runtimes._shared._tool_errors import rebuild_tool_error
from ptcbox.runtimes._shared._value import MAX_TOOL_DATA_BYTES, argument_size_error, json_size_over
from ptcbox.runtimes._wire import (
    KIND_STDERR,
    KIND_STDOUT,
    MAX_FRAME_BYTES,
    FrameDecoder,
    SpinningReceiver,
    encode_message,
    encode_output,
    encode_plain_call,
    parse_message,
    plain_scalar,
)

__all__ = ["OutputSink", "WorkerChannel"]

_BATCH_CHARS = 32 * 1024
_FLUSH_DELAY_S = 0.002
_CHUNK_CHARS = 1 << 20  # at most 4 MiB of UTF-8 per output frame
_RECV_BYTES = 64 * 1024  # below malloc's mmap threshold: no mmap/munmap per recv
_ORJSON_FIRST_BYTES = 64 * 1024
_EXIT_HOST_GONE = 3


class OutputSink:
    """A text sink (``.write(str)``) whose text is streamed to the host.

    Args:
        channel: The worker's channel.
        kind: ``KIND_STDOUT`` or ``KIND_STDERR``.
    """

    __slots__ = ("_channel", "_kind", "_parts", "_size")

    def __init__(self, channel: WorkerChannel, kind: int) -> None:
        self._channel = channel
        self._kind = kind
        self._parts: list[str] = []
        self._size = 0

    def write(self, text: str) -> int:
        """Queue ``text`` for the host; returns ``len(text)``."""
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError(f"write() argument must be str, not {type(text).__name__}")
            text = str.__str__(text)
        with self._channel.send_lock:
            self._parts.append(text)
            self._size += len(text)
            full = self._size >= _BATCH_CHARS
        if full:
            self.flush()
        elif not self._channel.timer_armed:
            self._channel.arm_timer()
        return len(text)

    def flush(self) -> None:
        """Send what is queued now."""
        with self._channel.send_lock:
            frames = self.take_frames()
            if frames:
                self._channel.sock.sendall(frames)

    def take_frames(self) -> bytes:
        """Return the queued text as output frames and clear the queue (lock held)."""
        if not self._parts:
            return b""
        text = "".join(self._parts)
        self._parts = []
        self._size = 0
        frames = []
        for start in range(0, len(text), _CHUNK_CHARS):
            chunk = text[start : start + _CHUNK_CHARS]
            try:
                data = chunk.encode("utf-8")
            except UnicodeEncodeError:
                data = scrub_text(chunk).encode("utf-8")
            frames.append(encode_output(self._kind, data))
        return b"".join(frames)

    def isatty(self) -> bool:
        """``False``: not a terminal."""
        return False


class WorkerChannel:
    """The worker's end of the socket to the host.

    Args:
        sock: The connected (blocking) Unix stream socket.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.send_lock = threading.Lock()
        self.timer_armed = False
        self.stdout = OutputSink(self, KIND_STDOUT)
        self.stderr = OutputSink(self, KIND_STDERR)
        self._decoder = FrameDecoder(MAX_FRAME_BYTES)
        self._replies_in = SpinningReceiver(sock, _RECV_BYTES)  # sync tool calls' replies
        self._messages: list[dict[str, Any]] = []
        self._fresh = True  # nothing received yet
        self._replies: dict[int, dict[str, Any]] = {}
        self._waiters: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader_loop: asyncio.AbstractEventLoop | None = None
        self._next_id = 0
        self._started: list[tuple[int, AwaitableToolCall]] = []
        self.tool_names: frozenset[str] = frozenset()  # the running execution's tools

    # -- output ------------------------------------------------------------------------

    def start_flusher(self) -> None:
        """Send pending output within a few milliseconds, from a ``SIGALRM`` handler.

        A timer instead of a thread: arming it costs one system call and wakes nobody.
        The handler runs in the main thread between bytecodes, and interrupts blocking
        calls (``sleep``, a tool call's ``recv``), which resume afterwards (PEP 475). It
        never blocks on the send lock: if the snippet's thread holds it, it re-arms.
        """
        signal.signal(signal.SIGALRM, self._on_alarm)

    def arm_timer(self, delay: float = _FLUSH_DELAY_S) -> None:
        """Flush within ``delay`` seconds unless something flushes first (0: disarm)."""
        self.timer_armed = delay > 0
        signal.setitimer(signal.ITIMER_REAL, delay)

    def _on_alarm(self, signum: int, frame: object) -> None:
        self.timer_armed = False
        if not self.send_lock.acquire(blocking=False):
            self.arm_timer()
            return
        try:
            pending = self.stdout.take_frames() + self.stderr.take_frames()
            if pending:
                self.sock.sendall(pending)
        except OSError:
            pass  # the host is gone; the worker is about to be killed
        finally:
            self.send_lock.release()

    def flush(self) -> None:
        """Send all pending output."""
        self.stdout.flush()
        self.stderr.flush()

    def send(self, message: dict[str, Any], *, orjson_safe: bool = False) -> None:
        """Send one message, after the output written before it, in one system call.

        ``orjson_safe``: its ints fit in 64 bits and its text has no lone surrogates
        (see :func:`~ptcbox.runtimes._wire.encode_message`).
        """
        self.send_frame(encode_message(message, stdlib=True, orjson_safe=orjson_safe))

    def send_frame(self, frame: bytes) -> None:
        """Send one encoded message frame, after the output written before it."""
        with self.send_lock:
            if self.stdout._parts or self.stderr._parts:
                frame = self.stdout.take_frames() + self.stderr.take_frames() + frame
            self.sock.sendall(frame)

    # -- receiving -----------------------------------------------------------------------

    def _dispatch(self, data: bytes) -> None:
        if not data:
            raise EOFError("the host closed the connection")
        whole = self._decoder.whole(data)  # the usual read: one whole frame
        for kind, payload in (whole,) if whole is not None else self._decoder.feed(data):
            # the first message (the run message) with orjson: ~30 us sooner on a cold
            # worker. Only then: orjson does not check its allocations (a failed one
            # under RLIMIT_AS is SIGSEGV), and a snippet that ran may be near the limit.
            fresh, self._fresh = self._fresh, False
            message = parse_message(
                kind, payload, stdlib=not (fresh and len(payload) <= _ORJSON_FIRST_BYTES)
            )
            call_id = message.get("id")
            if message["t"] in ("result", "error") and isinstance(call_id, int):
                waiter = self._waiters.pop(call_id, None)
                if waiter is None:
                    self._replies[call_id] = message
                elif not waiter.done():
                    waiter.set_result(message)
            else:
                self._messages.append(message)

    def receive(self) -> dict[str, Any]:
        """Block until the next message that is not a tool reply; return it.

        Raises:
            EOFError: When the host closed the socket.
            WireProtocolError: On a malformed frame.
        """
        while not self._messages:
            self._dispatch(self.sock.recv(_RECV_BYTES))
        return self._messages.pop(0)

    def _on_readable(self) -> None:
        try:
            data = self.sock.recv(_RECV_BYTES, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return
        try:
            self._dispatch(data)
        except (EOFError, OSError, WireProtocolError):
            os._exit(_EXIT_HOST_GONE)

    # -- tool calls ----------------------------------------------------------------------

    def make_stub(self, name: str, doc: str | None) -> Callable[..., Any]:
        """Return the callable a snippet sees for tool ``name``.

        It calls only while ``name`` is a tool of the execution running now
        (:attr:`tool_names`): a session variable kept from an earlier execution
        (``t = search``) whose tool was since removed raises the RuntimeError
        ``ThreadRuntime`` raises, instead of a call the host must take for a forged one.
        """

        def stub(*args: Any, **kwargs: Any) -> Any:
            if name not in self.tool_names:
                raise RuntimeError(
                    f"{name}() is not a tool of this execution (it is not in the namespace "
                    "the execution was given); call only the tools listed for this run"
                )
            return self.call_tool(name, args, kwargs)

        stub.__name__ = stub.__qualname__ = name
        stub.__doc__ = doc
        return stub

    def call_tool(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call tool ``name`` on the host.

        Arguments are encoded with :func:`ptcbox.runtimes._shared._codec.encode` first
        (tagged JSON that keeps tuples, sets, bytes, datetimes ... ; unknown objects
        become ``"<TypeName object>"``), because only JSON crosses the process boundary.

        Returns:
            The tool's value, or (inside running asyncio code) an
            :class:`~ptcbox.runtimes._shared._awaitable.AwaitableToolCall`: the call is sent at
            once; :meth:`settle` waits for it if it is never awaited.

        Raises:
            TypeError: The arguments do not fit the tool's signature, or one is an
                un-awaited tool call.
            ValueError: The arguments are over the size limit of one tool call.
            ToolError: The tool failed.
            ToolCallLimitExceeded: ``max_tool_calls`` was reached.
        """
        size = _plain_text_size(args, kwargs)
        if size is None:
            for value in (*args, *kwargs.values()):
                check_argument(name, value)
            over = json_size_over([args, kwargs], MAX_TOOL_DATA_BYTES)
            if over:
                raise argument_size_error(name, over)
        elif size > MAX_TOOL_DATA_BYTES:  # scalars and ASCII text: the text is the size
            raise argument_size_error(name, size)
        self._next_id += 1
        call_id = self._next_id
        loop = asyncio._get_running_loop()
        try:
            if size is not None and loop is None:  # the usual case
                self.send_frame(encode_plain_call(call_id, name, args, kwargs))
            else:
                plain_args = _plain(args)
                plain_kwargs = _plain_keywords(kwargs)
                message = {
                    "t": "call",
                    "id": call_id,
                    "name": name,
                    "args": plain_args if plain_args is not None else [encode(a) for a in args],
                    "kwargs": kwargs
                    if plain_kwargs
                    else {scrub_text(key): encode(value) for key, value in kwargs.items()},
                }
                if loop is not None:
                    message["async"] = True
                # plain scalars and ASCII text: the host may decode it with orjson
                self.send(message, orjson_safe=plain_args is not None and plain_kwargs)
        except WireProtocolError:  # the encoding is over the frame limit
            size = json_size_over([args, kwargs], MAX_TOOL_DATA_BYTES)
            raise argument_size_error(name, size or MAX_TOOL_DATA_BYTES + 1) from None
        if loop is None:
            while call_id not in self._replies:
                self._dispatch(self._replies_in.recv(poll=not self._decoder.pending_bytes))
            return _unpack(self._replies.pop(call_id), name)
        self._watch(loop)
        call = AwaitableToolCall(name, functools.partial(self._wait_reply, call_id, name))
        self._started.append((call_id, call))
        return call

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._reader_loop is not loop:
            loop.add_reader(self.sock.fileno(), self._on_readable)
            self._reader_loop = loop

    def _wait_reply(self, call_id: int, name: str) -> Generator[Any, None, Any]:
        """What awaiting an :class:`AwaitableToolCall` of this runtime runs."""
        reply = self._replies.pop(call_id, None)
        if reply is None:
            loop = asyncio.get_running_loop()
            self._watch(loop)
            future: asyncio.Future[dict[str, Any]] = loop.create_future()
            self._waiters[call_id] = future
            try:
                reply = yield from future
            except asyncio.CancelledError:  # the host cancels an async tool (see _trace)
                with contextlib.suppress(OSError, WireProtocolError):
                    self.send({"t": "cancel", "id": call_id})
                raise
            finally:
                self._waiters.pop(call_id, None)
        return _unpack(reply, name)

    def settle(self, stderr: OutputSink) -> None:
        """Wait for the replies of calls sent but never awaited; note them on ``stderr``."""
        started, self._started = self._started, []
        notes: list[tuple[str, str | None]] = []
        for call_id, call in started:
            if call._ptc_awaited:
                continue
            while call_id not in self._replies:
                self._dispatch(self.sock.recv(_RECV_BYTES))
            reply = self._replies.pop(call_id)
            if not call._ptc_unawaited:  # misused: its TypeError already said why
                continue
            error = None if reply["t"] == "result" else str(reply.get("message", ""))
            notes.append((call._ptc_name, error))
        self._replies.clear()
        if notes:
            stderr.write(unawaited_notes(notes))

    def forget_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Stop reading on ``loop`` (before it is closed)."""
        if self._reader_loop is loop:
            loop.remove_reader(self.sock.fileno())
            self._reader_loop = None


_PLAIN = (str, int, float, bool, type(None))


def _plain(values: Any) -> list[Any] | None:
    """``list(values)`` when every value is a plain str/int/float/bool/None, else None:
    values that cross as JSON unchanged (lone surrogates, huge ints and NaN do not)."""
    out = list(values)
    for value in out:
        if not plain_scalar(value, -(2**62) + 1, 2**62):  # -(2**62) < value < 2**62
            return None
    return out


def _plain_text_size(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The characters of text in the arguments when :func:`_plain` and :func:`_plain_keywords`
    accept them, else ``None``: the usual call's check, in one pass and building no list."""
    size = 0
    for values in (args, kwargs.values()):
        for value in values:
            kind = type(value)
            if kind is str:
                if not value.isascii():
                    return None
                size += len(value)
            elif kind is int:
                if not -(2**62) < value < 2**62:
                    return None
            elif kind is float:
                if not math.isfinite(value):
                    return None
            elif kind is not bool and value is not None:
                return None
    return size if all(map(str.isascii, kwargs)) else None


def _plain_keywords(kwargs: dict[str, Any]) -> bool:
    return _plain(kwargs.values()) is not None and all(key.isascii() for key in kwargs)


def _unpack(reply: dict[str, Any], name: str) -> Any:
    if reply["t"] == "result":
        value = reply.get("value")
        if type(value) in _PLAIN:
            return value
        try:
            return decode(value)
        except ValueError as exc:
            raise WireProtocolError(f"malformed tool result: {exc}") from None
    kind = reply.get("kind")
    message = str(reply.get("message", ""))
    if kind == "TypeError":
        error = TypeError(message)
        note = reply.get("note")
        if isinstance(note, str):
            error.add_note(note)
        raise error
    if kind == "ToolCallLimitExceeded":
        raise ToolCallLimitExceeded(int(reply.get("limit", 0)), int(reply.get("observed", 0)))
    if kind == "WireProtocolError":
        raise WireProtocolError(message)
    raise rebuild_tool_error(reply.get("exc"), name, message)


def run_coroutine(channel: WorkerChannel, coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a top-level-``await`` snippet's coroutine on a fresh event loop."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        try:
            tasks = asyncio.all_tasks(loop)  # left behind: cancelled, like asyncio.run
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            channel.forget_loop(loop)
            loop.close()

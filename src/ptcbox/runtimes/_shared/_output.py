"""Per-execution capture of a snippet's output (:class:`OutputBuffer`) and the relay of
live output and tool calls to observers on the host's loop (:class:`Relay`).

Each execution writes to its own buffers (never a process-global ``redirect_stdout``), so
concurrent executions cannot mix their output. A buffer keeps the head and the tail of
what was written within a byte cap and notes how much it dropped in between, the way CI
logs and notebook front-ends cut a flood of output.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ptcbox._jsonable import scrub_text
from ptcbox.errors import OutputLimitExceeded

if TYPE_CHECKING:
    from ptcbox._result import ToolCallRecord
    from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback

__all__ = [
    "OutputBuffer",
    "Relay",
    "call_observer",
    "cap_text",
    "output_flood",
    "output_stop_bytes",
    "truncation_marker",
    "utf8_size",
]

_LOCK_WAIT_S = 1.0
_FLOOD_FACTOR = 4
_FLOOD_SLACK_BYTES = 1 << 20


def output_stop_bytes(max_bytes: int) -> int:
    """Bytes one stream may receive before the execution is stopped as a flood.

    ``max(4 * max_bytes, max_bytes + 1 MiB)``: far past the cap, so output that merely
    overflows it is truncated as always, while a runaway print loop ends at once
    instead of running to the timeout.
    """
    return max(_FLOOD_FACTOR * max_bytes, max_bytes + _FLOOD_SLACK_BYTES)


def output_flood(max_bytes: int, written: int) -> tuple[OutputLimitExceeded, str]:
    """The error of an execution stopped for writing ``written`` bytes to one stream.

    Returns:
        ``(OutputLimitExceeded, note)``; both runtimes report it as
        ``f"OutputLimitExceeded: {exc}{note}"``.
    """
    note = (
        f" (the code kept writing past {output_stop_bytes(max_bytes):,} bytes, far over the "
        "output cap, so it was stopped; the head and the tail of its output are kept)"
    )
    return OutputLimitExceeded(max_bytes, written), note


def utf8_size(text: str) -> int:
    """Return the size of ``text`` in UTF-8, in bytes; a lone surrogate counts 3 bytes."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def truncation_marker(dropped_bytes: int) -> str:
    """Return the line that replaces ``dropped_bytes`` bytes cut from the middle of text."""
    return f"\n[truncated {dropped_bytes} bytes]\n"


def cap_text(text: str, max_bytes: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes, keeping its head and tail.

    Args:
        text: Any text (lone surrogates are replaced with U+FFFD).
        max_bytes: Byte budget for the kept head and tail (the marker line is extra).

    Returns:
        ``(text, truncated)``; a cut text holds the head, a ``[truncated N bytes]`` line
        and the tail.
    """
    size = utf8_size(text)
    if size <= max_bytes:
        return scrub_text(text), False
    buffer = OutputBuffer(max_bytes)
    buffer.write(text)
    return buffer.getvalue(), True


def _prefix_within(text: str, budget: int) -> str:
    """The longest prefix of ``text`` that fits in ``budget`` UTF-8 bytes."""
    if text.isascii():
        return text[:budget]
    return scrub_text(text).encode("utf-8")[:budget].decode("utf-8", "ignore")


def _suffix_within(text: str, budget: int) -> str:
    """The longest suffix of ``text`` that fits in ``budget`` UTF-8 bytes."""
    if budget <= 0:
        return ""
    if text.isascii():
        return text[-budget:]
    raw = scrub_text(text).encode("utf-8")
    return raw[len(raw) - budget :].decode("utf-8", "ignore")


class OutputBuffer:
    """A thread-safe text sink that keeps the head and the tail within a byte cap.

    The first ``max_bytes // 2`` bytes written are kept as the head; after that, the
    most recent ``max_bytes - max_bytes // 2`` bytes are kept as the tail. Whatever falls
    in between is counted and replaced by a ``[truncated N bytes]`` line in
    :meth:`getvalue`. Memory stays bounded by ``max_bytes`` plus one chunk, however much
    is written. After :meth:`close`, writes are dropped silently (the late output of an
    abandoned execution never reaches a result).

    Args:
        max_bytes: Byte budget for the kept text (UTF-8), e.g. the policy's
            ``max_output_bytes``.
        on_write: Called as ``on_write(text)`` with each accepted chunk, before any
            truncation, in the writing thread (e.g. to relay it to an observer).
        on_flood: Called once, as ``on_flood(total_bytes)`` in the writing thread, when
            more than :func:`output_stop_bytes` of ``max_bytes`` have been written (the
            runtime stops the execution).

    Raises:
        ValueError: If ``max_bytes`` is below 1.
    """

    __slots__ = (
        "_closed",
        "_head",
        "_head_bytes",
        "_head_max",
        "_lock",
        "_on_flood",
        "_on_write",
        "_stop_bytes",
        "_tail",
        "_tail_bytes",
        "_tail_max",
        "_total",
    )

    def __init__(
        self,
        max_bytes: int,
        on_write: Callable[[str], object] | None = None,
        on_flood: Callable[[int], object] | None = None,
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes}")
        self._lock = threading.Lock()
        self._head: list[str] = []
        self._head_bytes = 0
        self._head_max = max_bytes // 2
        self._tail: deque[tuple[str, int]] = deque()
        self._tail_bytes = 0
        self._tail_max = max_bytes - self._head_max
        self._total = 0
        self._closed = False
        self._on_write = on_write
        self._on_flood = on_flood
        self._stop_bytes = output_stop_bytes(max_bytes)

    def write(self, text: str) -> int:
        """Append ``text``.

        Args:
            text: The chunk to write.

        Returns:
            ``len(text)``, like :meth:`io.TextIOBase.write`, also when the chunk was
            dropped because the buffer is closed.

        Raises:
            TypeError: If ``text`` is not a ``str``.
        """
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError(f"write() argument must be str, not {type(text).__name__}")
            text = str.__str__(text)
        if not text:
            return 0
        size = len(text) if text.isascii() else utf8_size(text)
        with self._lock:
            if self._closed:
                return len(text)
            self._total += size
            room = self._head_max - self._head_bytes
            if room >= size:
                self._head.append(text)
                self._head_bytes += size
            else:
                self._spill(text, size, room)
            flood = self._on_flood if self._total > self._stop_bytes else None
            if flood is not None:
                self._on_flood = None  # once
        if flood is not None:
            flood(self._total)
        on_write = self._on_write
        if on_write is not None:
            on_write(text)
        return len(text)

    def _spill(self, text: str, size: int, room: int) -> None:
        # Called with the lock held: fill what is left of the head, rest to the tail.
        if room > 0:
            part = _prefix_within(text, room)
            if part:
                self._head.append(part)
                self._head_bytes += utf8_size(part)
            text = text[len(part) :]
            size = utf8_size(text)
        if size > self._tail_max:
            text = _suffix_within(text, self._tail_max)
            size = utf8_size(text)
            self._tail.clear()
            self._tail_bytes = 0
        self._tail.append((text, size))
        self._tail_bytes += size
        tail = self._tail
        while self._tail_bytes > self._tail_max:
            first, first_size = tail[0]
            excess = self._tail_bytes - self._tail_max
            if first_size <= excess:
                tail.popleft()
                self._tail_bytes -= first_size
            else:
                kept = _suffix_within(first, first_size - excess)
                kept_size = utf8_size(kept)
                tail[0] = (kept, kept_size)
                self._tail_bytes -= first_size - kept_size
                break

    def flush(self) -> None:
        """Do nothing (present so the buffer can stand in for a text stream)."""

    def close(self) -> None:
        """Stop accepting writes; later writes are dropped. Idempotent.

        Also drops the flood callback, which no later write can call: it is often a
        method of the buffer's owner, and the reference cycle it closes would leave the
        owner (and all it holds) to the cyclic garbage collector.
        """
        if self._lock.acquire(timeout=_LOCK_WAIT_S):
            try:
                self._closed = True
                self._on_flood = None
            finally:
                self._lock.release()
        else:  # pragma: no cover - a writer never holds the lock this long
            self._closed = True

    @property
    def closed(self) -> bool:
        """``True`` once :meth:`close` was called."""
        return self._closed

    @property
    def max_bytes(self) -> int:
        """The byte cap the buffer was made with."""
        return self._head_max + self._tail_max

    @property
    def total_bytes(self) -> int:
        """Bytes written before :meth:`close` (kept or not)."""
        return self._total

    @property
    def truncated(self) -> bool:
        """``True`` when some written bytes were dropped from the middle."""
        return self._total > self._head_bytes + self._tail_bytes

    def getvalue(self) -> str:
        """Return the kept text: head, a ``[truncated N bytes]`` line if needed, tail.

        Lone surrogates are replaced with U+FFFD, so the text always encodes as UTF-8.
        """
        locked = self._lock.acquire(timeout=_LOCK_WAIT_S)
        try:
            head = "".join(self._head)
            tail = "".join([chunk for chunk, _ in self._tail])
            dropped = self._total - self._head_bytes - self._tail_bytes
        finally:
            if locked:
                self._lock.release()
        if dropped > 0:
            return scrub_text(head + truncation_marker(dropped) + tail)
        return scrub_text(head + tail)


class Relay:
    """Carries observer callbacks from a snippet thread to the host's event loop.

    Calls are queued and run in order by one drain scheduled on the loop, so a flood
    of output costs one loop wake-up per batch, not per chunk. Consecutive output of one
    stream is passed as one chunk. After :meth:`close`, nothing more is delivered.
    """

    __slots__ = ("_closed", "_lock", "_loop", "_on_output", "_on_tool_call", "_queue", "_scheduled")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_output: OutputCallback | None,
        on_tool_call: ToolCallCallback | None,
    ) -> None:
        self._loop = loop
        self._on_output = on_output
        self._on_tool_call = on_tool_call
        self._lock = threading.Lock()
        self._queue: deque[tuple[str, Any]] = deque()
        self._scheduled = False
        self._closed = False

    def stdout(self, text: str) -> None:
        """Queue a chunk of stdout."""
        self._push("stdout", text)

    def stderr(self, text: str) -> None:
        """Queue a chunk of stderr."""
        self._push("stderr", text)

    def tool_call(self, record: ToolCallRecord) -> None:
        """Queue a finished tool call."""
        self._push("tool", record)

    def _push(self, kind: str, item: Any) -> None:
        with self._lock:
            if self._closed:
                return
            self._queue.append((kind, item))
            if self._scheduled:
                return
            self._scheduled = True
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody listens any more
            self._loop.call_soon_threadsafe(self.drain)

    def drain(self) -> None:
        """Deliver everything queued (on the loop)."""
        with self._lock:
            items = list(self._queue)
            self._queue.clear()
            self._scheduled = False
        index = 0
        while index < len(items):
            kind, item = items[index]
            index += 1
            if kind == "tool":
                self._call(self._on_tool_call, item)
                continue
            parts = [item]
            while index < len(items) and items[index][0] == kind:
                parts.append(items[index][1])
                index += 1
            self._call(self._on_output, kind, "".join(parts))

    def _call(self, callback: Callable[..., object] | None, *args: Any) -> None:
        if callback is not None:
            call_observer(self._loop, callback, *args)

    def close(self) -> None:
        """Deliver what is queued, then drop everything later (on the loop)."""
        self.drain()
        with self._lock:
            self._closed = True
            self._queue.clear()


def call_observer(
    loop: asyncio.AbstractEventLoop, callback: Callable[..., object], *args: Any
) -> None:
    """Call an execution's observer (``on_tool_call``, ``on_output``) on ``loop``.

    The same in every runtime: an exception the observer raises is the caller's bug, not
    the snippet's, and it must not cost the snippet its run (tool calls half done, output
    lost). It goes to ``loop.call_exception_handler`` (logged by default, as asyncio
    reports a failing callback) and the execution goes on; the result and its trace are
    unchanged.
    """
    try:
        callback(*args)
    except Exception as exc:
        loop.call_exception_handler(
            {"message": "ptcbox: an execution observer raised", "exception": exc}
        )

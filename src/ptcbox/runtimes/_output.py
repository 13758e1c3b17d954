"""Per-execution capture of a snippet's output: :class:`OutputBuffer`.

Each execution writes to its own buffers (never a process-global ``redirect_stdout``), so
concurrent executions cannot mix their output. A buffer keeps the head and the tail of
what was written within a byte cap and notes how much it dropped in between, the way CI
logs and notebook front-ends cut a flood of output.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from ptcbox._jsonable import scrub_text

__all__ = ["OutputBuffer", "cap_text", "truncation_marker", "utf8_size"]

_LOCK_WAIT_S = 1.0


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

    Raises:
        ValueError: If ``max_bytes`` is below 1.
    """

    __slots__ = (
        "_closed",
        "_head",
        "_head_bytes",
        "_head_max",
        "_lock",
        "_on_write",
        "_tail",
        "_tail_bytes",
        "_tail_max",
        "_total",
    )

    def __init__(self, max_bytes: int, on_write: Callable[[str], object] | None = None) -> None:
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
        """Stop accepting writes; later writes are dropped. Idempotent."""
        if self._lock.acquire(timeout=_LOCK_WAIT_S):
            try:
                self._closed = True
            finally:
                self._lock.release()
        else:  # pragma: no cover - a writer never holds the lock this long
            self._closed = True

    @property
    def closed(self) -> bool:
        """``True`` once :meth:`close` was called."""
        return self._closed

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

"""Tracebacks of the snippet's own frames, as ``traceback.format_exception`` words them.

A frame is the snippet's when its globals carry the sandbox mark (only the globals the
sandbox builds do; see ``_owner.py``). Frames of ptcbox, of tools and of the host are left
out entirely: their filenames and line numbers never reach the text, and no frame object
ever reaches the snippet (:class:`traceback.StackSummary` holds plain strings and ints).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from types import FrameType, TracebackType
from typing import Any

from ptcbox.sandbox._owner import SANDBOX_MARK, SANDBOX_MARK_NAME

__all__ = [
    "FrameSummary",
    "StackSummary",
    "format_exception",
    "format_list",
    "is_snippet_frame",
    "snippet_frames",
    "snippet_stack",
    "snippet_tb",
    "stack_text",
]


class FrameSummary(traceback.FrameSummary):
    """traceback.FrameSummary -- sandboxed: never reads a source file for its ``line``
    (the stdlib's reads any file named by ``filename`` through linecache)."""

    __slots__ = ()

    @property
    def line(self) -> str | None:
        """The source line given at construction (stripped), else ``None``."""
        return None if self._line is None else self._line.strip()  # type: ignore[attr-defined]


FrameSummary.__module__ = "traceback"


class StackSummary(list):  # type: ignore[type-arg]
    """traceback.StackSummary -- sandboxed: a list of :class:`FrameSummary`, built by the
    sandbox from the snippet's own frames; ``format()`` as the stdlib's."""

    __slots__ = ()

    def format(self) -> list[str]:
        """The lines ``traceback.StackSummary.format`` gives for these frames."""
        lines: list[str] = traceback.StackSummary.format(self)  # type: ignore[arg-type]
        return lines

    def format_frame_summary(self, frame_summary: Any) -> str:
        """One frame's lines, as ``traceback.StackSummary.format_frame_summary``."""
        text: str = traceback.StackSummary.format_frame_summary(self, frame_summary)  # type: ignore[arg-type]
        return text


StackSummary.__module__ = "traceback"


def _summary(pairs: Iterator[tuple[FrameType, int]], limit: int | None = None) -> StackSummary:
    real = traceback.StackSummary.extract(pairs, limit=limit, lookup_lines=False)
    return StackSummary(
        FrameSummary(f.filename, f.lineno, f.name, lookup_line=False, line="") for f in real
    )


def format_list(extracted: Any) -> list[str]:
    """traceback.format_list -- sandboxed: source lines only as given (no file reads)."""
    items = StackSummary()
    for item in extracted:
        if isinstance(item, traceback.FrameSummary):
            filename, lineno, name, line = item.filename, item.lineno, item.name, item._line  # type: ignore[attr-defined]
        else:
            filename, lineno, name, line = item
        items.append(FrameSummary(filename, lineno, name, lookup_line=False, line=line))
    lines: list[str] = items.format()
    return lines


_MAX_CHAIN = 100


def is_snippet_frame(frame: FrameType) -> bool:
    """True for frames of code the sandbox compiled (their globals carry its mark)."""
    return frame.f_globals.get(SANDBOX_MARK_NAME) is SANDBOX_MARK


_is_snippet = is_snippet_frame


def snippet_frames() -> list[FrameType]:
    """The snippet's frames of the current call stack, innermost first."""
    frames = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if is_snippet_frame(frame):
            frames.append(frame)
        frame = frame.f_back
    return frames


def stack_text(frames: list[FrameType]) -> str:
    """``"Stack (most recent call last):"`` and ``frames`` (innermost first), as logging's
    ``stack_info`` words it."""
    pairs = [(f, f.f_lineno or 0) for f in reversed(frames)]
    summary = _summary(iter(pairs))
    return ("Stack (most recent call last):\n" + "".join(summary.format())).rstrip("\n")


def _tb_frames(tb: TracebackType | None) -> Iterator[tuple[FrameType, int]]:
    for frame, lineno in traceback.walk_tb(tb):
        if _is_snippet(frame):
            yield frame, lineno


def snippet_tb(tb: Any, limit: int | None = None) -> StackSummary:
    """The snippet's frames of traceback ``tb`` (others left out), oldest first."""
    if tb is not None and not isinstance(tb, TracebackType):
        raise TypeError(f"expected a traceback object, not {type(tb).__name__!r}")
    return _summary(_tb_frames(tb), limit)


def snippet_stack(limit: int | None = None) -> StackSummary:
    """The snippet's frames of the current call stack, oldest first."""
    frame: FrameType | None = sys._getframe(1)
    frames: list[tuple[FrameType, int]] = []
    while frame is not None:
        if _is_snippet(frame):
            frames.append((frame, frame.f_lineno or 0))
        frame = frame.f_back
    frames.reverse()
    if limit is not None and limit >= 0:
        frames = frames[-limit:] if limit else []
    elif limit is not None:
        frames = frames[:-limit]
    return _summary(iter(frames))


def format_exception(
    value: BaseException | None, limit: int | None = None, chain: bool = True
) -> list[str]:
    """Lines as ``traceback.format_exception(value)`` gives them, snippet frames only."""
    if value is None:
        return traceback.format_exception_only(None, None)
    if not isinstance(value, BaseException):
        raise TypeError(f"expected an exception, not {type(value).__name__!r}")
    parts: list[tuple[BaseException, str | None]] = []
    seen: set[int] = set()
    current: BaseException | None = value
    link: str | None = None
    while current is not None and id(current) not in seen and len(parts) < _MAX_CHAIN:
        seen.add(id(current))
        parts.append((current, link))
        if not chain:
            break
        cause, context = current.__cause__, current.__context__
        if cause is not None:
            current = cause
            link = "\nThe above exception was the direct cause of the following exception:\n\n"
        elif context is not None and not current.__suppress_context__:
            current = context
            link = "\nDuring handling of the above exception, another exception occurred:\n\n"
        else:
            current = None
    out: list[str] = []
    for exc, follow in reversed(parts):
        if exc.__traceback__ is not None:
            out.append("Traceback (most recent call last):\n")
            out.extend(snippet_tb(exc.__traceback__, limit).format())
        out.extend(traceback.format_exception_only(type(exc), exc))
        if follow is not None:
            out.append(follow)
    return out

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

__all__ = ["format_exception", "is_snippet_frame", "snippet_stack", "snippet_tb", "stack_text"]

_MAX_CHAIN = 100


def is_snippet_frame(frame: FrameType) -> bool:
    """True for frames of code the sandbox compiled (their globals carry its mark)."""
    return frame.f_globals.get(SANDBOX_MARK_NAME) is SANDBOX_MARK


_is_snippet = is_snippet_frame


def stack_text(frames: list[FrameType]) -> str:
    """``"Stack (most recent call last):"`` and ``frames`` (innermost first), as logging's
    ``stack_info`` words it."""
    pairs = [(f, f.f_lineno or 0) for f in reversed(frames)]
    summary = traceback.StackSummary.extract(iter(pairs), lookup_lines=False)
    return ("Stack (most recent call last):\n" + "".join(summary.format())).rstrip("\n")


def _tb_frames(tb: TracebackType | None) -> Iterator[tuple[FrameType, int]]:
    for frame, lineno in traceback.walk_tb(tb):
        if _is_snippet(frame):
            yield frame, lineno


def snippet_tb(tb: Any, limit: int | None = None) -> traceback.StackSummary:
    """The snippet's frames of traceback ``tb`` (others left out), oldest first."""
    if tb is not None and not isinstance(tb, TracebackType):
        raise TypeError(f"expected a traceback object, not {type(tb).__name__!r}")
    return traceback.StackSummary.extract(_tb_frames(tb), limit=limit, lookup_lines=False)


def snippet_stack(limit: int | None = None) -> traceback.StackSummary:
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
    return traceback.StackSummary.extract(iter(frames), lookup_lines=False)


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

"""Another thread's current frame, without CPython 3.11's ``sys._current_frames`` deadlock.

``sys._current_frames()`` holds the runtime's thread-list lock while it builds frame
objects; an allocation there can start a garbage collection, and freeing a
``threading.local`` takes that same lock again: the process hangs for good, every
thread waiting on the GIL (CPython gh-106883, fixed in 3.13 by pausing the collector
there). It happened in the test suite: a timed-out snippet's stop
(:func:`~ptcbox.runtimes.thread._reaper.wake_inner_loops`) hung the host. The collector
is paused here the same way; while this thread holds the GIL no other thread can
collect or turn it back on.
"""

from __future__ import annotations

import gc
import sys
from types import FrameType

__all__ = ["current_frames", "thread_frame"]


def current_frames() -> dict[int, FrameType]:
    """``sys._current_frames()``: every thread's innermost frame, by thread id, with the
    collector paused (see the module docstring)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        if enabled:
            gc.enable()


def thread_frame(thread_id: int) -> FrameType | None:
    """The innermost frame of the thread ``thread_id`` (``threading.get_ident()``), or
    ``None`` when it has none (ended, or not a Python thread)."""
    return current_frames().get(thread_id)

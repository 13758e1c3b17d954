"""The reaper: one daemon thread that keeps stopping snippet threads that have not left.

It knows a stopped execution only as something it can :meth:`~_Stoppable.poke` (the
:class:`~ptcbox.runtimes.thread._control.Control` of that thread) and ask whether it
has finished, so it imports nothing of the control it serves.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Protocol

from ptcbox.runtimes._shared._frames import thread_frame

__all__ = ["Reaper", "wake_inner_loops"]

_REARM_SECONDS = 0.02
_MAX_REARM_SECONDS = 0.5


class _Stoppable(Protocol):
    @property
    def finished(self) -> bool: ...

    def poke(self) -> None: ...


def wake_inner_loops(thread_id: int) -> None:
    """Wake event loops the snippet started itself (``asyncio.run``) in that thread.

    A loop blocked in ``select`` runs no bytecode, so the pending exception would wait
    for the select timeout; a no-op callback makes it return at once.
    """
    frame = thread_frame(thread_id)
    while frame is not None:
        if frame.f_code.co_name == "run_forever" and "asyncio" in frame.f_code.co_filename:
            loop = frame.f_locals.get("self")
            call = getattr(loop, "call_soon_threadsafe", None)
            if call is not None:
                with contextlib.suppress(RuntimeError):
                    call(_noop)
        frame = frame.f_back


def _noop() -> None:
    return None


class Reaper:
    """One daemon thread that re-injects the stop into threads that have not left yet.

    The line tracer does most of the work; the reaper covers an exception that C code
    swallowed before the tracer was armed, and wakes event loops the snippet runs. It
    pokes every 20 ms, backing off to 0.5 s while nothing new is watched (a thread
    blocked in a tool can take long), and exists only while some stopped thread is
    still inside a snippet.
    """

    _cond = threading.Condition()
    _watched: set[_Stoppable] = set()  # noqa: RUF012 - guarded by _cond
    _thread: threading.Thread | None = None
    _fresh = False

    @classmethod
    def watch(cls, control: _Stoppable) -> None:
        with cls._cond:
            if control.finished:
                return
            cls._watched.add(control)
            cls._fresh = True
            cls._cond.notify()
            if cls._thread is None:
                cls._thread = threading.Thread(target=cls._run, name="ptcbox-reaper", daemon=True)
                cls._thread.start()

    @classmethod
    def _run(cls) -> None:
        delay = _REARM_SECONDS
        while True:
            with cls._cond:
                live = [c for c in cls._watched if not c.finished]
                cls._watched = set(live)
                if not live:
                    cls._thread = None
                    return
            for control in live:
                control.poke()
            with cls._cond:
                if not cls._fresh:
                    cls._cond.wait(delay)
                if cls._fresh:
                    cls._fresh = False
                    delay = _REARM_SECONDS
                else:
                    delay = min(delay * 1.5, _MAX_REARM_SECONDS)

    @classmethod
    def reset_after_fork(cls) -> None:
        cls._cond = threading.Condition()
        cls._watched = set()
        cls._thread = None
        cls._fresh = False


os.register_at_fork(after_in_child=Reaper.reset_after_fork)

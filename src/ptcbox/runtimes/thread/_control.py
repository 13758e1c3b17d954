"""How a :class:`~ptcbox.runtimes.ThreadRuntime` snippet thread is stopped.

A snippet runs in a thread of its own (one per execution). To stop it at a timeout, the
host raises :class:`ExecutionInterrupted` in that thread with
``PyThreadState_SetAsyncExc`` (it lands at the next bytecode boundary), and keeps doing
so until the thread leaves the snippet. The first time the exception is created in the
thread it also installs a trace function that re-arms it on every line of the snippet,
so ``except BaseException: pass`` loops and ``finally:`` loops cannot keep the thread
alive. A lock and a state (``SNIPPET``/``HOST``/``DONE``) make sure the exception lands
only while the snippet's own code runs: never inside a tool, never in the pool's code,
never in the next execution. A stopped thread is never reused; it ends (the threads are
in :mod:`ptcbox.runtimes.thread._pool`; the stops C code swallowed are re-injected by
:mod:`ptcbox.runtimes.thread._reaper`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import functools
import sys
import threading
from types import FrameType
from typing import Any

from ptcbox.runtimes._shared._error_text import SNIPPET_FILENAME
from ptcbox.runtimes.thread._reaper import Reaper, wake_inner_loops
from ptcbox.sandbox._alive import ALIVE_ATTR

__all__ = [
    "DONE",
    "HOST",
    "IDLE",
    "SNIPPET",
    "Control",
    "ExecutionInterrupted",
    "current_control",
]

IDLE, SNIPPET, HOST, DONE = 0, 1, 2, 3
"""Execution states: queued, running snippet code, running host code (a tool, a sleep),
left the snippet for good."""

_SetAsyncExc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_SetAsyncExc.argtypes = [ctypes.c_ulong, ctypes.c_void_p]
_SetAsyncExc.restype = ctypes.c_int

# The line tracer is this C function itself, bound to a thread id with
# functools.partial: the interpreter calls it as tracer(frame, event, arg) and it makes
# the exception pending without running any Python code, so the tracer never raises
# (a tracer that raises is removed by the interpreter) and stays installed. The three
# extra arguments are ignored by the callee (cdecl: the caller cleans up); restype None
# makes it return None, which keeps the frame's tracer as it is.
_SetAsyncExcTracer = ctypes.PyDLL(None).PyThreadState_SetAsyncExc
_SetAsyncExcTracer.argtypes = [
    ctypes.c_ulong,
    ctypes.c_void_p,
    ctypes.py_object,
    ctypes.py_object,
    ctypes.py_object,
]
_SetAsyncExcTracer.restype = None

_local = threading.local()


def _inject(thread_id: int) -> None:
    """Make :class:`ExecutionInterrupted` pending in a thread (needs the GIL: held)."""
    _SetAsyncExc(thread_id, id(ExecutionInterrupted))


def _clear_pending(thread_id: int) -> None:
    """Drop a pending asynchronous exception of a thread, if any."""
    _SetAsyncExc(thread_id, None)


class ExecutionInterrupted(BaseException):
    """Raised inside a snippet's thread to stop it (timeout, cancellation, close).

    A ``BaseException`` so that ``except Exception`` in the snippet does not catch it.
    Creating it in a stopping thread arms the line tracer that re-raises it.
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*(args or ("the execution was stopped",)))
        control = current_control()
        if control is not None and control.stop:
            control.arm_tracer()


def current_control() -> Control | None:
    """The :class:`Control` of the execution running in this thread, if any."""
    control: Control | None = getattr(_local, "control", None)
    return control


def _global_trace(frame: FrameType, event: str, arg: Any) -> Any:
    # The "call" tracer: hands the line tracer to new frames of the snippet. Written
    # without calls so that a pending exception cannot fire inside it.
    if frame.f_code.co_filename == SNIPPET_FILENAME:
        return _local.tracer
    return None


class _Latch:
    """A one-way flag threads can wait for with a timeout: :meth:`set` once, never
    cleared. A ``threading.Event`` without its ``Condition`` (whose construction was a
    fifth of a short execution's set-up): a lock held from the start, released by
    :meth:`set`; a waiter that gets it hands it on at once.
    """

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()

    def set(self) -> None:
        """Wake every waiter, now and later. Call it at most once."""
        self._lock.release()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for :meth:`set`; ``True`` once it was called."""
        if self._lock.acquire(timeout=timeout):
            self._lock.release()
            return True
        return False


class Control:
    """Coordinates one execution's thread with the host that may stop it.

    All state changes happen under ``lock``; the host injects the exception only while
    ``state == SNIPPET``. Tools and the ``sleep`` hook run in ``HOST`` state.
    """

    __slots__ = (
        "alive",
        "alive_flags",
        "futures",
        "lock",
        "loop",
        "main_task",
        "reason",
        "saved_trace",
        "state",
        "stderr",
        "stop",
        "thread_id",
        "tracing",
        "wake",
    )

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.state = IDLE
        self.stop = False
        self.reason = ""
        self.thread_id = 0
        self.wake = _Latch()
        self.loop: Any = None
        self.main_task: Any = None
        self.futures: set[concurrent.futures.Future[Any]] = set()
        self.tracing = False
        self.saved_trace: Any = None
        self.stderr: Any = None
        self.alive = threading.local()
        """The snippet's ``_alive_`` global (``ptcbox.sandbox._alive.ALIVE_ATTR``):
        ``running`` is set only in this execution's thread, in ``SNIPPET`` state."""
        self.alive_flags: dict[str, Any] = {}
        """``alive``'s attributes in the snippet's thread (set by :meth:`enter`)."""

    @property
    def finished(self) -> bool:
        """``True`` once the thread has left the snippet for good (:meth:`finish`)."""
        return self.state == DONE

    # --- worker side -------------------------------------------------------------
    def enter(self) -> None:
        """Start the snippet in this thread; raises if a stop was already requested."""
        with self.lock:
            self.thread_id = threading.get_ident()
            _local.control = self
            if self.stop:
                raise ExecutionInterrupted(self.reason)
            self.state = SNIPPET
            self.alive_flags = self.alive.__dict__
            self.alive_flags[ALIVE_ATTR] = True

    def enter_host(self) -> None:
        """Switch to ``HOST`` state before calling host code (a tool, a sleep).

        Lock-free on purpose (hot path): the state is written before ``stop`` is read,
        and the host writes ``stop`` before it reads the state (under the lock), so
        under the GIL either the host sees ``HOST`` and injects nothing, or this thread
        sees ``stop`` and raises without entering host code.
        """
        self.state = HOST
        self.alive_flags.pop(ALIVE_ATTR, None)
        if self.stop:
            self.state = SNIPPET
            self.alive_flags[ALIVE_ATTR] = True
            with self.lock:
                _clear_pending(self.thread_id)
            raise ExecutionInterrupted(self.reason)

    def shelter(self) -> None:
        """Switch to ``HOST`` state even after a stop, for clean-up that must not be cut
        half-way (closing the snippet's event loop).

        Nothing is injected until :meth:`leave_host`: a pending stop is dropped and the
        line tracer removed (:meth:`leave_host` raises again if stopped, which re-arms
        it). Snippet code that starts meanwhile fails at its first ``_alive_.running``
        check. Call it in a retry loop: a stop may land before the lock is taken.
        """
        with self.lock:
            self.state = HOST
            self._quiet_locked()

    def wind_down(self) -> None:
        """After a stop, before the snippet's globals are cleared: its checked code
        fails at its first line (``running`` unset) and the line tracer is off, so code
        that ends at its check leaves no stop pending behind it; the state stays
        ``SNIPPET``, so the reaper still interrupts unchecked code (a generator
        expression that a builtin drives). Call it in a retry loop, like
        :meth:`shelter`.
        """
        with self.lock:
            self._quiet_locked()

    def _quiet_locked(self) -> None:
        """Under ``lock``: ``running`` unset, no stop pending, the line tracer off."""
        self.alive_flags.pop(ALIVE_ATTR, None)
        if self.thread_id:
            _clear_pending(self.thread_id)
        if self.tracing:
            sys.settrace(self.saved_trace)
            self.tracing = False

    def leave_host(self) -> None:
        """Back to the snippet; raises :class:`ExecutionInterrupted` if stopped meanwhile."""
        self.state = SNIPPET
        self.alive_flags[ALIVE_ATTR] = True
        if self.stop:
            raise ExecutionInterrupted(self.reason)

    def finish(self) -> bool:
        """Leave the snippet for good: no exception is pending afterwards.

        Returns:
            ``True`` when a stop was requested (the thread must not be reused).
        """
        with self.lock:
            self.state = DONE
            self._quiet_locked()
            _local.control = None
            return self.stop

    def arm_tracer(self) -> None:
        """Install the re-arming line tracer in this (the snippet's) thread.

        Called each time the exception is created in the thread, so that it is
        re-installed after the interpreter removed it.
        """
        if threading.get_ident() != self.thread_id or self.state != SNIPPET:
            return
        tracer = getattr(_local, "tracer", None)
        if tracer is None or tracer.args[0] != self.thread_id:
            tracer = functools.partial(_SetAsyncExcTracer, self.thread_id, id(ExecutionInterrupted))
            _local.tracer = tracer
        current = sys.gettrace()
        if current is not _global_trace:
            if not self.tracing:
                self.saved_trace = current
                self.tracing = True
            sys.settrace(_global_trace)
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == SNIPPET_FILENAME:
                frame.f_trace = tracer
            frame = frame.f_back

    # --- host side ---------------------------------------------------------------
    def request_stop(self, reason: str) -> bool:
        """Ask the execution to stop. Thread-safe; never blocks for long.

        Args:
            reason: Why (``"timeout"``, ``"cancelled"``, ``"closed"``).

        Returns:
            ``False`` when the thread had already left the snippet (its result stands).
        """
        with self.lock:
            if self.state == DONE:
                return False
            first = not self.stop
            if first:
                self.stop = True
                self.reason = reason
            self._poke_locked()
            futures = list(self.futures)
        if first:
            self.wake.set()
        for future in futures:
            future.cancel()
        Reaper.watch(self)
        return True

    def poke(self) -> None:
        """Re-inject the exception and wake event loops the snippet blocks in."""
        with self.lock:
            if self.state != DONE:
                self._poke_locked()

    def _poke_locked(self) -> None:
        if self.state == SNIPPET:
            _inject(self.thread_id)
        if self.loop is not None and self.main_task is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed
                self.loop.call_soon_threadsafe(self.main_task.cancel)
        if self.state == SNIPPET and self.thread_id:
            wake_inner_loops(self.thread_id)

    def attach_loop(self, loop: Any, task: Any) -> None:
        """Register the event loop and main task of a top-level-await snippet."""
        with self.lock:
            self.loop, self.main_task = loop, task
            if self.stop:
                task.cancel()

    def detach_loop(self) -> None:
        """Forget the snippet's event loop before it is closed."""
        with self.lock:
            self.loop = self.main_task = None

    def track(self, future: concurrent.futures.Future[Any]) -> None:
        """Remember a host-side tool call, cancelled if the execution stops."""
        with self.lock:
            self.futures.add(future)
            stopped = self.stop
        if stopped:
            future.cancel()

    def untrack(self, future: concurrent.futures.Future[Any]) -> None:
        """Forget a finished host-side tool call."""
        with self.lock:
            self.futures.discard(future)

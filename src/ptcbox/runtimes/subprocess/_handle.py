"""The host's handle on one SubprocessRuntime worker process.

Owned by :class:`~ptcbox.runtimes.subprocess._pool.WorkerPool`: it learns the worker's exit status
from the template process, kills the worker through a pidfd (which always names this
process, never a later one that reuses its pid), checks that an idle worker is still
runnable before it is handed out, and closes the host's end of its socket only once the
thread serving that socket has left it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import socket
import threading

from ptcbox.errors import CPUTimeLimitExceeded, LimitExceeded, MemoryLimitExceeded
from ptcbox.sandbox import SandboxPolicy

__all__ = ["WorkerHandle", "limit_error"]

_RUNNABLE_STATES = frozenset("RSDI")  # running, sleeping, disk wait, idle (not T t Z X)
_STOP_SIGNALS = sum(  # stop signals, and SIGKILL: pending, the process is as good as gone
    1 << (sig - 1)
    for sig in (signal.SIGSTOP, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU, signal.SIGKILL)
)
_PF_EXITING = 0x4  # task flag (/proc/<pid>/stat field 9): the process is exiting


def _status(pid: int) -> tuple[bytes, bool]:
    """The state letter in ``/proc/<pid>/status`` and whether a stop signal is pending."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            text = status.read()
    except OSError:
        return b"X", False
    return _parse_status(text)


def _parse_status(text: bytes) -> tuple[bytes, bool]:
    """:func:`_status` of the text of a ``status`` file (garbled: a signal pending)."""
    state = b"?"
    # at a line's start: the Name line before it is the process's own (comm), which it
    # can set to "State:R" while it is stopped
    at = 0 if text.startswith(b"State:") else text.find(b"\nState:") + 1
    if at > 0 or text.startswith(b"State:"):
        state = text[at + 6 : at + 16].strip()[:1]
    pending = False
    for key in (b"\nSigPnd:", b"\nShdPnd:"):
        at = text.find(key)
        end = text.find(b"\n", at + 1)
        try:
            if at < 0 or end < 0 or int(text[at + 8 : end], 16) & _STOP_SIGNALS:
                pending = True
        except ValueError:
            pending = True
    return state, pending


def _asleep(stat_fd: int) -> bool | None:
    """From ``/proc/<pid>/stat`` (kept open): ``True`` when the process is asleep.

    An idle worker sleeps in ``recv`` (``S``, interruptible). Such a process has no
    stop or kill signal pending: sending one wakes it (the state is ``R`` by the time
    ``kill`` returns) until it stops (``T``) or exits. An uninterruptible sleep
    (``D``, e.g. a worker still setting up) is not woken by a signal, which may then be
    pending: like every other state it goes to :func:`_process_runnable`, which reads
    the pending signals. ``False``: gone; ``None``: ask :func:`_process_runnable`. One
    ``pread`` of an open descriptor, which keeps naming this process even after its pid
    is reused (reads then fail with ``ESRCH``).
    """
    try:
        data = os.pread(stat_fd, 1024, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return None
    parsed = _state_and_flags(data)
    if parsed is not None and parsed[0] == b"S" and not parsed[1] & _PF_EXITING:
        return True
    return None


def _state_and_flags(stat: bytes) -> tuple[bytes, int] | None:
    """The state letter and task flags in ``/proc/<pid>/stat`` text (``None``: garbled)."""
    fields = stat.rpartition(b")")[2].split()  # after the command name, which may hold ")"
    try:
        return fields[0], int(fields[6])
    except (IndexError, ValueError):
        return None


def _process_runnable(pid: int) -> bool:
    """Whether the process is alive, not stopped and has no stop signal pending."""
    state, pending = _status(pid)
    if state == b"R" and not pending:
        # The state is read before the pending signals: a running process may have
        # taken a SIGSTOP in between. Taking it and stopping happen under one lock, so
        # a second read shows "T" then. One that took a SIGKILL is exiting.
        state, pending = _status(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                parsed = _state_and_flags(stat.read())
        except OSError:
            return False
        if parsed is None or parsed[1] & _PF_EXITING:
            return False
    return not pending and state.decode() in _RUNNABLE_STATES


def _runnable_from(status_fd: int, stat_fd: int) -> bool | None:
    """:func:`_process_runnable` from descriptors kept open (``pread``s: no ``open``, no
    path lookup; they always name this process). ``None``: ask it instead."""
    try:
        state, pending = _parse_status(os.pread(status_fd, 4096, 0))
        if state == b"R" and not pending:  # see _process_runnable
            state, pending = _parse_status(os.pread(status_fd, 4096, 0))
            parsed = _state_and_flags(os.pread(stat_fd, 1024, 0))
            if parsed is None or parsed[1] & _PF_EXITING:
                return False
    except ProcessLookupError:
        return False
    except OSError:
        return None
    return not pending and state.decode() in _RUNNABLE_STATES


def _open_stat(pid: int, pidfd: int | None, name: str = "stat") -> int | None:
    """Open ``/proc/<pid>/<name>``; ``None`` unless it surely is this worker's."""
    if pidfd is None:
        return None  # nothing tells whether the pid still names the worker
    try:
        stat_fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    if select.select([pidfd], [], [], 0)[0]:  # it had exited: the pid may be another's
        os.close(stat_fd)
        return None
    return stat_fd


class WorkerHandle:
    """One forked worker as the host sees it.

    Attributes:
        pid: Its process id (also its process-group id).
        sock: The host's end of its socket.
        signal_number: The signal that ended it, once known.
        exit_code: Its exit status, once known.
        exited: ``True`` once the template reported its exit.
        cpu_seconds: CPU time (user + system) it used, once it exited.
        max_rss_bytes: Its peak resident memory, once it exited.
        oom_killed: Whether the kernel's out-of-memory killer (probably) killed it.

    Args:
        pid: Its process id.
        sock: The host's end of its socket.
        pidfd: A pidfd of it (``None`` where the kernel has none: signals go by pid).
    """

    __slots__ = (
        "_close_requested",
        "_in_use",
        "_lock",
        "_pidfd",
        "_stat_fd",
        "_status_fd",
        "_waiters",
        "cpu_seconds",
        "exit_code",
        "exited",
        "killed",
        "max_rss_bytes",
        "oom_killed",
        "pid",
        "signal_number",
        "sock",
    )

    def __init__(self, pid: int, sock: socket.socket, pidfd: int | None = None) -> None:
        self.pid = pid
        self.sock = sock
        self._pidfd = pidfd
        self._stat_fd = _open_stat(pid, pidfd)
        self._status_fd = None if self._stat_fd is None else _open_stat(pid, pidfd, "status")
        self.cpu_seconds = 0.0
        self.max_rss_bytes = 0
        self.oom_killed = False
        self._lock = threading.Lock()
        self._in_use = False
        self._close_requested = False
        self.signal_number: int | None = None
        self.exit_code: int | None = None
        self.exited = False
        self.killed = False
        self._waiters: list[asyncio.Future[None]] = []

    def kill(self) -> None:
        """SIGKILL it (no-op once it exited).

        Through its pidfd where there is one (a worker cannot create processes, so it
        is its process group's only member); else its process group, by pid.
        """
        if self.exited:
            return
        self.killed = True
        with self._lock:
            pidfd = self._pidfd
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if pidfd is not None:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                else:
                    os.killpg(self.pid, signal.SIGKILL)

    def runnable(self) -> bool:
        """Whether it is alive and not stopped (``SIGSTOP``, traced): fit to hand out."""
        if self.exited:
            return False
        with self._lock:
            stat_fd = self._stat_fd
            if stat_fd is not None:
                asleep = _asleep(stat_fd)
                if asleep is not None:
                    return asleep
                if self._status_fd is not None:  # awake (a reused worker just done)
                    found = _runnable_from(self._status_fd, stat_fd)
                    if found is not None:
                        return found
        alive = _process_runnable(self.pid)  # a stop signal just sent is still pending
        with self._lock:  # a pidfd is readable once the process exited: then the stat
            pidfd = self._pidfd  # just read may be of another process with its pid
            if pidfd is not None and select.select([pidfd], [], [], 0)[0]:
                return False
        return alive

    def close(self) -> None:
        """Close the host's end of the socket (once the thread serving it has left it)."""
        with self._lock:
            if self._in_use:
                self._close_requested = True
                return
        self.sock.close()
        self._close_stat()

    def _close_stat(self) -> None:
        with self._lock:
            stat_fd, self._stat_fd = self._stat_fd, None
            status_fd, self._status_fd = self._status_fd, None
        for fd in (stat_fd, status_fd):
            if fd is not None:
                os.close(fd)

    def enter(self) -> None:
        """Mark the socket as served by the calling thread (which then owns closing it)."""
        with self._lock:
            self._in_use = True

    def leave(self) -> None:
        """The serving thread is done with the socket; close it if that was requested."""
        with self._lock:
            self._in_use = False
            close = self._close_requested
        if close:
            self.sock.close()
            self._close_stat()

    def set_exit(self, sig: int | None, code: int | None) -> None:
        """Record the exit status the template reported (``None``s: unknown)."""
        self.signal_number, self.exit_code, self.exited = sig, code, True
        with self._lock:
            pidfd, self._pidfd = self._pidfd, None
        if pidfd is not None:
            os.close(pidfd)
        self._close_stat()
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    async def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the exit report; return whether it came."""
        if not self.exited:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter, timeout)
        return self.exited


def limit_error(worker: WorkerHandle, policy: SandboxPolicy) -> LimitExceeded | None:
    """The policy limit that ended a crashed worker, when its end tells one.

    ``SIGXCPU`` is ``RLIMIT_CPU`` (``max_cpu_seconds``); a ``SIGKILL`` the host did not
    send, while the kernel's out-of-memory kill count went up, is the OOM killer
    (``max_memory_bytes``, with the peak resident memory observed).

    Args:
        worker: The worker, after its exit was reported.
        policy: The policy it ran under.

    Returns:
        The exception to report, or ``None`` for a plain crash.
    """
    if worker.signal_number == signal.SIGXCPU and policy.max_cpu_seconds is not None:
        return CPUTimeLimitExceeded(policy.max_cpu_seconds, round(worker.cpu_seconds, 2))
    if (
        worker.signal_number == signal.SIGKILL
        and worker.oom_killed
        and not worker.killed
        and policy.max_memory_bytes is not None
    ):
        return MemoryLimitExceeded(policy.max_memory_bytes, worker.max_rss_bytes)
    return None

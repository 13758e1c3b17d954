"""The host's handle on one SubprocessRuntime worker process.

Owned by :class:`~ptcbox.runtimes._pool.WorkerPool`: it learns the worker's exit status
from the template process, kills the worker's process group, and closes the host's end
of its socket only once the thread serving that socket has left it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import threading

__all__ = ["WorkerHandle"]


class WorkerHandle:
    """One forked worker as the host sees it.

    Attributes:
        pid: Its process id (also its process-group id).
        sock: The host's end of its socket.
        signal_number: The signal that ended it, once known.
        exit_code: Its exit status, once known.
        exited: ``True`` once the template reported its exit.
    """

    __slots__ = (
        "_close_requested",
        "_in_use",
        "_lock",
        "_waiters",
        "exit_code",
        "exited",
        "killed",
        "pid",
        "signal_number",
        "sock",
    )

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self.sock = sock
        self._lock = threading.Lock()
        self._in_use = False
        self._close_requested = False
        self.signal_number: int | None = None
        self.exit_code: int | None = None
        self.exited = False
        self.killed = False
        self._waiters: list[asyncio.Future[None]] = []

    def kill(self) -> None:
        """SIGKILL its whole process group (no-op once it exited)."""
        if self.exited:
            return
        self.killed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def close(self) -> None:
        """Close the host's end of the socket (once the thread serving it has left it)."""
        with self._lock:
            if self._in_use:
                self._close_requested = True
                return
        self.sock.close()

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

    def set_exit(self, sig: int | None, code: int | None) -> None:
        """Record the exit status the template reported (``None``s: unknown)."""
        self.signal_number, self.exit_code, self.exited = sig, code, True
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

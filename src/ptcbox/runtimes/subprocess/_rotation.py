"""Template rotation: a fresh template (hash seed, memory layout) every N forks.

Workers forked from one template share what the fork copies: the hash seed
(``hash('abc')``), the addresses of every object the template made (``id(len)``), the
heap layout and the ASLR offsets of the interpreter and its libraries. A compromised
worker learns them for every sibling (issue 13, item 10). :class:`TemplateRotation`
bounds that: after ``every`` forks it starts a new template (a fresh ``exec`` of the
interpreter: a new random hash seed, new ASLR offsets) in the background, and only once
it is ready swaps it in. The old template's idle workers are killed at once; the ones
still running an execution finish it, and the old template is told to quit when the
last of them has exited (:class:`_Retiring`), so no execution waits for a template to
start and no process is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
from typing import TYPE_CHECKING, Any

import orjson

from ptcbox.runtimes.subprocess._handle import WorkerHandle
from ptcbox.runtimes.subprocess._launch import launch_template

if TYPE_CHECKING:
    from ptcbox.runtimes.subprocess._pool import WorkerPool

__all__ = ["TemplateRotation", "note_exit"]

_START_TIMEOUT_S = 60.0


def note_exit(worker: WorkerHandle, message: dict[str, Any]) -> None:
    """Record a worker's ``exit`` message from its template on its handle."""
    worker.cpu_seconds = float(message.get("cpu") or 0.0)
    worker.max_rss_bytes = int(message.get("maxrss") or 0)
    worker.oom_killed = bool(message.get("oom"))
    worker.set_exit(message.get("signal"), message.get("code"))


class TemplateRotation:
    """Counts a pool's forks and replaces its template every ``every`` forks.

    Args:
        pool: The pool.
        every: Forks per template; ``None`` never rotates.
    """

    def __init__(self, pool: WorkerPool, every: int | None) -> None:
        self._pool = pool
        self.every = every
        self.forks = 0  # workers the current template forked
        self.generation = 0  # templates swapped in so far
        self._next: asyncio.Task[None] | None = None
        self._retiring: set[_Retiring] = set()

    def forked(self) -> None:
        """One more worker of the current template: start the next one when due."""
        self.forks += 1
        pool = self._pool
        if (
            self.every is not None
            and self.forks >= self.every
            and self._next is None
            and not pool.closed
            and pool._loop is not None
        ):
            self._next = pool._loop.create_task(self._start_next())

    async def _start_next(self) -> None:
        pool = self._pool
        loop = asyncio.get_running_loop()
        proc, ctl, errors = launch_template(pool._config_json, pool._env)
        errors.close()
        ready: asyncio.Future[dict[str, Any]] = loop.create_future()

        def on_ready() -> None:
            with contextlib.suppress(BlockingIOError, InterruptedError):
                data = ctl.recv(1 << 16)
                if not ready.done():
                    if data and orjson.loads(data).get("t") == "ready":
                        ready.set_result(orjson.loads(data))
                    else:
                        ready.set_exception(EOFError("the new template exited"))

        loop.add_reader(ctl.fileno(), on_ready)
        try:
            message = await asyncio.wait_for(ready, _START_TIMEOUT_S)
        except BaseException:  # keep the old one; try again after as many forks
            _kill(proc)
            loop.remove_reader(ctl.fileno())
            ctl.close()
            self.forks = 0
            self._next = None
            return
        loop.remove_reader(ctl.fileno())
        self._next = None
        if pool.closed or pool._ctl is None:
            _kill(proc)
            ctl.close()
            return
        base = message.get("base")
        self._swap(proc, ctl, base if isinstance(base, str) else None)

    def _swap(self, proc: subprocess.Popen[bytes], ctl: socket.socket, base: str | None) -> None:
        pool = self._pool
        loop = pool._loop
        assert loop is not None and pool._ctl is not None
        loop.remove_reader(pool._ctl.fileno())
        retiring = _Retiring(self, pool._proc, pool._ctl, pool._base, dict(pool._workers))
        self._retiring.add(retiring)
        while pool._idle:  # forked from the old template: never handed out now
            worker = pool._idle.popleft()
            worker.kill()
            worker.close()
        pool._proc, pool._ctl, pool._base = proc, ctl, pool._base if base is None else base
        pool._workers = {}
        pool._requested = 0
        self.forks = 0
        self.generation += 1
        loop.add_reader(ctl.fileno(), pool._on_control)
        pool._refill()
        retiring.listen(loop)

    def rebind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The pool moved to ``loop``: read the retiring templates there."""
        for retiring in list(self._retiring):
            retiring.listen(loop)

    def kill_all(self) -> None:
        """Kill the retiring templates and their workers (synchronous; also at exit)."""
        if self._next is not None:
            self._next.cancel()
        for retiring in list(self._retiring):
            retiring.kill()

    async def aclose(self) -> None:
        """Stop the template being started and the retiring ones; wait for them."""
        self.kill_all()
        if self._next is not None:
            with contextlib.suppress(BaseException):
                await self._next
            self._next = None
        for retiring in list(self._retiring):
            await retiring.wait()


class _Retiring:
    """An old template and its last workers: it quits when they have all exited."""

    def __init__(
        self,
        rotation: TemplateRotation,
        proc: subprocess.Popen[bytes] | None,
        ctl: socket.socket,
        base: str | None,
        workers: dict[int, WorkerHandle],
    ) -> None:
        self._rotation = rotation
        self._proc = proc
        self._ctl: socket.socket | None = ctl
        self._base = base
        self._workers = workers
        self._loop: asyncio.AbstractEventLoop | None = None

    def listen(self, loop: asyncio.AbstractEventLoop) -> None:
        ctl = self._ctl
        if ctl is None:
            return
        old = self._loop
        if old is not None and not old.is_closed():
            old.remove_reader(ctl.fileno())
        self._loop = loop
        loop.add_reader(ctl.fileno(), self._on_control)
        self._quit_when_idle()

    def _on_control(self) -> None:
        while self._ctl is not None:
            try:
                data, fds, _, _ = socket.recv_fds(self._ctl, 1 << 16, 4)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data, fds = b"", []
            if not data:
                for fd in fds:
                    os.close(fd)
                self._gone()
                return
            message = orjson.loads(data)
            if message.get("t") == "worker" and len(fds) in (1, 2):
                # forked for the pool before the swap: not wanted any more
                sock = socket.socket(fileno=fds[0])
                worker = WorkerHandle(int(message["pid"]), sock, fds[1] if len(fds) == 2 else None)
                worker.kill()
                worker.close()
                self._workers[worker.pid] = worker
                continue
            for fd in fds:
                os.close(fd)
            if message.get("t") == "exit":
                exited = self._workers.pop(int(message["pid"]), None)
                if exited is not None:
                    note_exit(exited, message)
            self._quit_when_idle()

    def _quit_when_idle(self) -> None:
        if not self._workers and self._ctl is not None:
            with contextlib.suppress(OSError):
                self._ctl.send(orjson.dumps({"t": "quit"}))  # it exits; EOF follows

    def _gone(self) -> None:
        ctl, self._ctl = self._ctl, None
        if ctl is not None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(ctl.fileno())
            ctl.close()
        for worker in self._workers.values():
            worker.kill()
            worker.set_exit(None, None)
        self._workers.clear()
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(0.5)  # it has closed its end: exiting
            if proc.poll() is None:
                _kill(proc)
        if self._base is not None and (proc is None or proc.poll() is not None):
            shutil.rmtree(self._base, ignore_errors=True)  # gone if it removed it itself
        self._rotation._retiring.discard(self)

    def kill(self) -> None:
        for worker in self._workers.values():
            worker.kill()
        if self._proc is not None:
            _kill(self._proc)
        self._gone()

    async def wait(self) -> None:
        while self._ctl is not None:
            await asyncio.sleep(0.005)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5.0)

"""Host side of the SubprocessRuntime worker pool: the template process and its workers.

:class:`WorkerPool` starts the template (:mod:`~ptcbox.runtimes.subprocess.worker._template`,
launched by :mod:`~ptcbox.runtimes.subprocess._launch`), keeps ``min_idle`` workers (more
when busy: ``_demand``) forked and waiting, hands one out per execution (checked alive
and not stopped; else forked on demand, the template restarted if it died), bounds
executions with ``max_workers`` (``_slots``) and learns every worker's exit status from
the template. All is killed by :meth:`aclose`, an ``atexit`` handler, the template when
the host dies (its control socket closes) and the kernel (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import weakref
from collections import deque
from collections.abc import Hashable
from typing import Any

import orjson

from ptcbox.errors import RuntimeClosedError
from ptcbox.runtimes.subprocess._demand import Demand
from ptcbox.runtimes.subprocess._handle import WorkerHandle
from ptcbox.runtimes.subprocess._launch import adopt_base, launch_template, start_errors
from ptcbox.runtimes.subprocess._rotation import TemplateRotation, note_exit
from ptcbox.runtimes.subprocess._slots import ExecutionSlots
from ptcbox.runtimes.subprocess.worker import _timing as timing

__all__ = ["WorkerPool", "WorkerStartError"]

_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 5.0
_LIVE_POOLS: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


class WorkerStartError(RuntimeError):
    """The template process could not be started (its stderr is in the message)."""


class WorkerPool:
    """The template process and its pre-forked workers, bound to one event loop at a time.

    Args:
        config_json: The :class:`~ptcbox.runtimes.subprocess.worker._config.WorkerConfig` as JSON.
        env: The template's environment.
        min_idle: Workers to keep forked and waiting.
        max_workers: Executions that may run at once (others wait for a slot).
        need_network_namespace: Fail to start without empty network namespaces.
        rotate_after: Forks per template before a fresh one replaces it (see
            :mod:`~ptcbox.runtimes.subprocess._rotation`); ``None`` never.
    """

    def __init__(
        self,
        *,
        config_json: str,
        env: dict[str, str],
        min_idle: int,
        max_workers: int,
        need_network_namespace: bool,
        rotate_after: int | None = None,
    ) -> None:
        self._config_json = config_json
        self._env = {**env, timing.ENV_VAR: "1"} if timing.ON else env  # a benchmark's marks
        self.min_idle = min_idle
        self._need_netns = need_network_namespace
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._base: str | None = None  # the template's directory, removed when it is gone
        self._ctl: socket.socket | None = None
        self._ready: asyncio.Future[dict[str, Any]] | None = None
        self._starting: asyncio.Future[None] | None = None
        self._idle: deque[WorkerHandle] = deque()
        self._waiters: deque[asyncio.Future[WorkerHandle]] = deque()
        self._requested = 0
        self._workers: dict[int, WorkerHandle] = {}
        self._releasing: set[WorkerHandle] = set()  # released, awaiting the next iteration
        self._slots = ExecutionSlots(max_workers)
        self._demand = Demand(min_idle)  # workers forked ahead: min_idle or recent demand
        self._rotation = TemplateRotation(self, rotate_after)
        self.closed = False
        _LIVE_POOLS.add(self)

    # -- loop binding and template life --------------------------------------------------
    def _bind(self) -> asyncio.AbstractEventLoop:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "SubprocessRuntime needs a running asyncio event loop (anyio on its "
                "asyncio backend is fine; trio is not supported)"
            ) from None
        old = self._loop
        if old is loop:
            return loop
        if old is not None and old.is_running():
            raise RuntimeError("this SubprocessRuntime is in use by another event loop")
        for worker in list(self._releasing):  # the old loop stopped before releasing them
            self._release_now(worker)
        if old is not None and self._ctl is not None and not old.is_closed():
            old.remove_reader(self._ctl.fileno())
        self._loop = loop
        self._waiters.clear()
        self._slots.forget_waiters()
        self._requested = 0
        if self._ctl is not None:
            loop.add_reader(self._ctl.fileno(), self._on_control)
            self._refill()
        self._rotation.rebind(loop)
        return loop

    async def start(self) -> None:
        """Start the template if it is not running; wait until it is ready.

        Raises:
            RuntimeClosedError: If the pool is closed.
            WorkerStartError: If the template failed to start.
        """
        if self.closed:
            raise RuntimeClosedError("SubprocessRuntime")
        loop = self._bind()
        if self._ctl is not None:
            return
        if self._starting is not None and not self._starting.done():
            await asyncio.shield(self._starting)
            return
        self._starting = loop.create_future()
        try:
            await self._start_template(loop)
            self._starting.set_result(None)
        except BaseException as exc:
            self._starting.set_exception(exc)
            self._starting.exception()  # mark retrieved
            raise

    async def _start_template(self, loop: asyncio.AbstractEventLoop) -> None:
        proc, host_end, errors = launch_template(self._config_json, self._env)
        self._proc, self._ctl = proc, host_end
        self._ready = loop.create_future()
        loop.add_reader(host_end.fileno(), self._on_control)
        try:
            ready = await asyncio.wait_for(asyncio.shield(self._ready), _START_TIMEOUT_S)
        except BaseException as exc:
            detail = start_errors(errors)
            self._stop_template_now()
            errors.close()
            if isinstance(exc, Exception):
                raise WorkerStartError(
                    f"the SubprocessRuntime worker template did not start: {exc}\n{detail}"
                ) from exc
            raise
        errors.close()
        self._base = adopt_base(ready)
        if self._need_netns and not ready.get("netns"):
            self._stop_template_now()
            raise WorkerStartError(
                "network=False needs empty network namespaces (unshare(CLONE_NEWNET), "
                "as root or with unprivileged user namespaces), which this system refuses"
            )
        self._refill()

    def _on_control(self) -> None:
        ctl = self._ctl
        while ctl is not None:
            try:
                data, fds, _, _ = socket.recv_fds(ctl, 1 << 16, 4)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data, fds = b"", []
            if not data:
                for fd in fds:
                    os.close(fd)
                self._template_gone()
                return
            message = orjson.loads(data)
            kind = message.get("t")
            if timing.ON:
                timing.note_report(message)
            if kind == "worker" and len(fds) in (1, 2):
                pidfd = fds[1] if len(fds) == 2 else None
                sock = socket.socket(fileno=fds[0])
                sock.setblocking(True)  # threads block on it; the loop passes MSG_DONTWAIT
                self._rotation.forked()  # a fork (a reused worker's return is none)
                self._on_worker(WorkerHandle(int(message["pid"]), sock, pidfd))
                continue
            for fd in fds:
                os.close(fd)
            if kind == "exit":
                worker = self._workers.pop(int(message["pid"]), None)
                if worker is not None:
                    note_exit(worker, message)
                    if worker in self._idle:
                        self._idle.remove(worker)
                        worker.close()
                        self._refill()
            elif kind == "ready" and self._ready is not None and not self._ready.done():
                self._ready.set_result(message)
            elif kind == "error":  # a fork failed (e.g. the system's process limit)
                self._requested = max(0, self._requested - 1)
                while self._waiters:
                    waiter = self._waiters.popleft()
                    if not waiter.done():
                        waiter.set_exception(WorkerStartError(str(message.get("message"))))
                        break

    def _template_gone(self) -> None:
        loop, ctl = self._loop, self._ctl
        if ctl is not None:
            if loop is not None and not loop.is_closed():
                loop.remove_reader(ctl.fileno())
            ctl.close()
        self._ctl = None
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(EOFError("the template process exited"))
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(0.5)
        base, self._base = self._base, None
        if base is not None and (proc is None or proc.poll() is not None):
            shutil.rmtree(base, ignore_errors=True)  # the template was SIGKILLed
        for worker in list(self._workers.values()):
            worker.kill()
            worker.set_exit(None, None)
        self._workers.clear()
        while self._idle:
            self._idle.popleft().close()
        self._requested = 0
        waiters, self._waiters = self._waiters, deque()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_exception(WorkerStartError("the worker template process exited"))

    def _stop_template_now(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
        self._template_gone()

    # -- workers -------------------------------------------------------------------------
    def _on_worker(self, worker: WorkerHandle, requested: bool = True) -> None:
        self._requested = max(0, self._requested - requested)
        self._workers[worker.pid] = worker
        if self.closed:
            worker.kill()
            worker.close()
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                if not worker.runnable():  # stopped (SIGSTOP) or gone while it set up
                    self._waiters.appendleft(waiter)
                    worker.kill()
                    worker.close()
                    return self._refill()
                waiter.set_result(worker)
                return
        (self._idle.append if requested else self._idle.appendleft)(worker)

    def _refill(self) -> None:
        want = self._demand.ahead() + len(self._waiters) - len(self._idle) - self._requested
        if want > 0 and self._ctl is not None and not self.closed:
            try:
                message = {"t": "spawn", "n": want, "rehearse": self._demand.rehearse()}
                self._ctl.send(orjson.dumps(message))
            except OSError:
                return
            self._requested += want

    async def take_worker(self) -> WorkerHandle:
        """Return a fresh worker (idle, else forked now), starting the template if needed.

        Raises:
            RuntimeClosedError: If the pool is closed.
            WorkerStartError: If the template cannot be started.
        """
        error = WorkerStartError("no worker could be started")
        for _ in range(3):
            await self.start()
            self._demand.taken()
            while self._idle:
                worker = self._idle.popleft()
                if worker.runnable():
                    if not self._idle or self._demand.deeper():  # else at the release
                        self._refill()
                    return worker
                worker.kill()  # dead or stopped (SIGSTOP): never hand it out
                worker.close()
            waiter: asyncio.Future[WorkerHandle] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            self._refill()
            try:
                return await waiter
            except WorkerStartError as exc:
                error = exc
                continue
            except BaseException:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
                if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                    self._idle.appendleft(waiter.result())
                raise
        raise error

    def take_idle_now(self) -> WorkerHandle | None:
        """The fast path of :meth:`slot` plus :meth:`take_worker`, without awaiting.

        Takes an execution slot and a runnable idle worker at once when both are there
        (and nobody waits for either); give them back with :meth:`release` and
        :meth:`free_slot`. ``None`` when either must be waited for: use the slow path.
        """
        if (
            not self._slots.available()
            or self._ctl is None
            or self.closed
            or self._loop is not asyncio.get_running_loop()
        ):
            return None
        while self._idle:
            worker = self._idle.popleft()
            if worker.runnable():
                self._demand.taken()
                if not self._idle or self._demand.deeper():  # else at the release
                    self._refill()
                self._slots.take()
                return worker
            worker.kill()  # dead or stopped (SIGSTOP): never hand it out
            worker.close()
        return None

    def free_slot(self) -> None:
        """Give back a slot taken by :meth:`take_idle_now`."""
        self._slots.free()

    def release(self, worker: WorkerHandle) -> None:
        """Kill a worker that is done with and close its socket; refill the pool.

        Done on the loop's next iteration when the loop runs, so that the result of
        the execution reaches its caller first (the worker exits after its ``done``
        anyway; the kill makes sure of it).
        """
        loop = self._loop
        if loop is not None and loop.is_running():
            self._releasing.add(worker)  # done at once if the loop stops first
            loop.call_soon(self._release_now, worker)
        else:
            self._release_now(worker)

    def _release_now(self, worker: WorkerHandle) -> None:
        self._releasing.discard(worker)
        if timing.ON:
            timing.note(worker.pid, "kill")
        worker.kill()
        worker.close()
        if not self.closed:
            self._refill()

    def recycle(self, worker: WorkerHandle) -> bool:
        """Hand a worker that may serve again out next (reuse mode); ``False``: gone."""
        if self.closed or self._ctl is None or worker.exited or worker.pid not in self._workers:
            return False
        self._demand.returned()
        self._on_worker(worker, requested=False)
        return True

    @property
    def max_workers(self) -> int:
        """Executions that may run at once."""
        return self._slots.limit

    @property
    def busy(self) -> int:
        """Execution slots in use."""
        return self._slots.busy

    def slot(
        self, wait: float | None = None, caller: Hashable = None
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold one of ``max_workers`` execution slots for the ``async with`` block.

        Waiters are served per ``caller``, callers in turn (see
        :mod:`~ptcbox.runtimes.subprocess._slots`).

        Raises:
            TimeoutError: No slot was free within ``wait`` seconds (``None``: no bound).
        """
        return self._slots.hold(self._bind(), wait, caller)

    # -- shutdown ------------------------------------------------------------------------
    def kill_all(self) -> None:
        """Kill every worker and the template at once (synchronous; also at exit)."""
        self._rotation.kill_all()
        for worker in list(self._workers.values()):
            worker.kill()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(_STOP_TIMEOUT_S)
        if self._base is not None and (proc is None or proc.poll() is not None):
            shutil.rmtree(self._base, ignore_errors=True)

    async def aclose(self) -> None:
        """Kill every worker, stop the template and wait for it to exit. Idempotent."""
        if self.closed:
            return
        self.closed = True
        await self._rotation.aclose()
        for worker in list(self._releasing):
            self._release_now(worker)
        for worker in list(self._workers.values()):
            worker.kill()
        while self._idle:
            self._idle.popleft().close()
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(RuntimeClosedError("SubprocessRuntime"))
        self._waiters.clear()
        self._slots.fail_waiters(lambda: RuntimeClosedError("SubprocessRuntime"))
        proc, ctl = self._proc, self._ctl
        if ctl is not None:
            with contextlib.suppress(OSError):
                ctl.send(orjson.dumps({"t": "quit"}))
        if proc is not None:
            deadline = asyncio.get_running_loop().time() + _STOP_TIMEOUT_S
            while proc.poll() is None and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.005)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if self._ctl is not None:
            self._template_gone()
        _LIVE_POOLS.discard(self)


@atexit.register
def _kill_everything_at_exit() -> None:  # pragma: no cover - runs at interpreter exit
    for pool in list(_LIVE_POOLS):
        with contextlib.suppress(Exception):
            pool.closed = True
            pool.kill_all()

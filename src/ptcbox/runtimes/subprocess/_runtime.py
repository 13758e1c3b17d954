"""SubprocessRuntime: each snippet runs in its own fresh, locked-down OS process.

Tools stay in the host and are called over a Unix socket (JSON only); the worker is
forked from a warm template process and never runs a second snippet (sessions aside),
so nothing leaks from one execution to the next. The OS enforces the hard limits: the
wall-clock deadline kills the worker's whole process group, ``RLIMIT_AS``/``RLIMIT_CPU``
cap memory and CPU, and an audit hook refuses process creation, networking, ``ctypes``
and writes outside the worker's private directory. See :class:`SubprocessRuntime`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Hashable, Mapping
from types import TracebackType
from typing import Any, Final

from ptcbox._result import CodeResult
from ptcbox.errors import RuntimeClosedError
from ptcbox.projections import ToolProjection
from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback
from ptcbox.runtimes._shared._fresh_threads import FreshThreads, ScopedExecutor
from ptcbox.runtimes._shared._host import ToolTable, resolve_timeout
from ptcbox.runtimes._shared._preflight import refused
from ptcbox.runtimes._wire import encode_message
from ptcbox.runtimes.subprocess._execution import HostExecution, Outcome
from ptcbox.runtimes.subprocess._handle import WorkerHandle, limit_error
from ptcbox.runtimes.subprocess._options import check_options
from ptcbox.runtimes.subprocess._pool import WorkerPool
from ptcbox.runtimes.subprocess._prepared import Prepared, Preparer
from ptcbox.runtimes.subprocess._recycle import RETRY, Recycler
from ptcbox.runtimes.subprocess._result import build_result, queue_timeout_result
from ptcbox.runtimes.subprocess._session import SubprocessSession
from ptcbox.runtimes.subprocess._threads import ChannelThreads
from ptcbox.runtimes.subprocess.worker._config import WorkerConfig, policy_to_wire
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._ablation import ENV_VAR as ABLATION_ENV
from ptcbox.sandbox._ablation import OFF as ABLATION_OFF
from ptcbox.sandbox._policy import check_policy_argument

__all__ = ["DEFAULT_ENV_ALLOWLIST", "SubprocessRuntime"]

DEFAULT_ENV_ALLOWLIST: Final = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "OPENBLAS_CORETYPE")
"""Host environment variables a worker inherits by default (nothing secret)."""

_JOIN_S = 2.0
_CPUS = len(os.sched_getaffinity(0))
_BASE_ENV: Final = {
    "PATH": "/usr/bin:/bin",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONIOENCODING": "utf-8",
    "MALLOC_ARENA_MAX": "2",
    # numpy's BLAS and numexpr start thread pools at import; workers run with
    # RLIMIT_NPROC and one CPU's worth of work each (the data preset imports them in the
    # template, before the fork): one thread each. OPENBLAS_CORETYPE is left alone.
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "NUMEXPR_MAX_THREADS": "1",
}


class SubprocessRuntime:
    """Run snippets in separate, single-use OS processes with OS-enforced limits.

    Each execution gets a worker process forked from a warm template (so nothing of an
    earlier snippet survives, and the start-up cost is off the critical path): its own
    process group, a private empty working directory (removed afterwards), an
    environment built from an allowlist (no secrets of the host), ``RLIMIT_AS`` from
    ``policy.max_memory_bytes``, ``RLIMIT_CPU`` from ``policy.max_cpu_seconds``, limits
    on open files, file size and processes, no core dumps, and an audit hook that
    refuses process creation, network access, ``ctypes`` and writes outside its
    directory. The sandbox policy (RestrictedPython guards, import allowlist) applies
    inside the worker as well. The deadline covers the whole execution, time in host
    tools included; when it passes, the worker's process group is killed with
    ``SIGKILL`` and the output received so far is kept.

    Tools stay in the host: the snippet calls stubs that send the call over a Unix
    socket. A sync tool called from synchronous snippet code runs in a host thread that
    serves that execution (never on the event loop); async tools run on the caller's
    event loop; ``await asyncio.gather(...)`` in the snippet runs calls concurrently
    (sync ones in ``tool_threads``; at most ``policy.max_concurrent_tool_calls``).
    Only JSON-compatible data crosses the process boundary, converted deterministically
    with ``ptcbox._jsonable.to_jsonable`` (tool arguments, tool results, the
    trailing-expression value); the host never unpickles anything the worker sends.
    ``extra_globals`` must be JSON-compatible.

    Requires Linux and the asyncio event loop. The pre-forking template follows the
    zygote/forkserver pattern; the limits are ``setrlimit(2)``, ``prctl(2)`` and PEP 578
    audit hooks.

    Args:
        policy: The sandbox policy; ``None`` for ``SandboxPolicy()``.
        max_workers: Executions that run at once; more wait for a free slot (their
            timeout starts when they get one).
        min_idle: Workers kept forked and waiting (0 forks each one on demand).
        network: ``None`` (the default) runs workers in an empty network namespace
            where the kernel allows it (root, or unprivileged user namespaces), else
            without one; ``False`` requires it (the runtime fails to start where it is
            not possible); ``True`` keeps the host's network and lets seccomp allow
            ``AF_INET``/``AF_INET6`` sockets. In every case the audit hook still refuses
            network access to snippet code; seccomp refuses other socket families.
        env: Extra environment variables for workers (nothing else of the host's
            environment is passed, except :data:`DEFAULT_ENV_ALLOWLIST`).
        max_open_files: ``RLIMIT_NOFILE`` of a worker.
        max_file_bytes: ``RLIMIT_FSIZE`` of a worker, in bytes.
        tool_threads: Threads for sync tools called concurrently from asyncio code in
            snippets, shared by all executions.
        queue_timeout: Longest wait for a free worker slot, in seconds (callers are
            served in turn, see ``caller`` of :meth:`execute`); ``None`` waits at
            most the execution's own timeout, so a call returns within about twice
            its timeout however many executions are queued. Past it, the result is a
            ``TimeoutError`` (the code did not run).
        rotate_template_after: Workers forked from one template before a fresh
            template (new hash seed, new memory layout) replaces it; it starts in the
            background and is swapped in when ready, the old one quits when its last
            running worker exits. ``None`` keeps one template for the runtime's life.
        max_executions_per_worker: 1 (the default): a fresh process per execution. N > 1
            (reuse mode): a worker serves up to N executions, reset in between (fresh
            globals and context variables, working directory emptied, ``decimal``
            defaults and environment restored, CPU limit re-armed) and retired at once
            after any execution that failed, timed out, crashed, hit a limit or was
            refused by the policy. Faster, weaker isolation: see the README.

    Example:
        >>> async def main():  # doctest: +SKIP
        ...     async with SubprocessRuntime() as runtime:
        ...         result = await runtime.execute("print(add(a=1, b=2))", tools)

    Raises:
        ValueError: If a numeric argument is out of range.
        TypeError: If ``policy`` is not a :class:`~ptcbox.sandbox.SandboxPolicy`.
        OSError: If the system is not Linux.
        ImportError: The policy allows numpy or pandas (``SandboxPolicy.data()``) and
            it is not installed.
    """

    def __init__(
        self,
        policy: SandboxPolicy | None = None,
        *,
        max_workers: int = 16,
        min_idle: int = 2,
        network: bool | None = None,
        env: Mapping[str, str] | None = None,
        max_open_files: int = 256,
        max_file_bytes: int = 64 << 20,
        tool_threads: int = 32,
        queue_timeout: float | None = None,
        rotate_template_after: int | None = 1000,
        max_executions_per_worker: int = 1,
    ) -> None:
        if not sys.platform.startswith("linux"):
            raise OSError("SubprocessRuntime needs Linux (prctl, seccomp, rlimits)")
        check_policy_argument(policy)
        self.policy = policy if policy is not None else SandboxPolicy()
        check_options(
            self.policy,
            max_workers=max_workers,
            min_idle=min_idle,
            rotate_template_after=rotate_template_after,
            max_executions_per_worker=max_executions_per_worker,
            max_open_files=max_open_files,
        )
        self._queue_timeout = None if queue_timeout is None else resolve_timeout(queue_timeout, 1.0)
        worker_env = {k: os.environ[k] for k in DEFAULT_ENV_ALLOWLIST if k in os.environ}
        worker_env.update(env or {})
        if ABLATION_OFF:  # test-only guard ablation reaches the workers (sandbox/_ablation.py)
            worker_env[ABLATION_ENV] = ",".join(sorted(ABLATION_OFF))
        config = WorkerConfig(
            env={**_BASE_ENV, **worker_env},
            max_open_files=max_open_files,
            max_file_bytes=max_file_bytes,
            network=network is True,
            policy=policy_to_wire(self.policy),
            network_optional=network is None,
            max_executions=max_executions_per_worker,
        )
        self._pool = WorkerPool(
            config_json=config.to_json(),
            env={**_BASE_ENV, **worker_env},
            min_idle=min_idle,
            max_workers=max_workers,
            need_network_namespace=network is False,
            rotate_after=rotate_template_after,
        )
        self._recycler = Recycler(self._pool, max_executions_per_worker)
        self._tools = ToolTable()
        # each execution's sync tools run in threads of its own (issue 12: thread-locals)
        self._tool_threads = FreshThreads("ptcbox-tool", spares=2)
        self._tool_capacity = threading.BoundedSemaphore(tool_threads)
        self._threads = ChannelThreads("ptcbox-channel")
        self._sessions: set[SubprocessSession] = set()
        self._closed = False
        self._preparer = Preparer(self.policy)  # run frames (see _prepared)

    @property
    def closed(self) -> bool:
        """``True`` after :meth:`aclose`."""
        return self._closed

    async def start(self) -> None:
        """Start the template process and the idle workers now (else on first use).

        Raises:
            RuntimeClosedError: If the runtime is closed.
            WorkerStartError: If the template process cannot start.
        """
        await self._pool.start()

    async def execute(
        self,
        code: str,
        namespace: Mapping[str, ToolProjection],
        *,
        timeout: float | None = None,
        extra_globals: Mapping[str, Any] | None = None,
        on_tool_call: ToolCallCallback | None = None,
        on_output: OutputCallback | None = None,
        caller: Hashable = None,
    ) -> CodeResult:
        """Run ``code`` in a fresh worker process with the tools of ``namespace``.

        Args:
            code: Python source written by a model.
            namespace: Tool name to projection (checked with ``validate_namespace``).
            timeout: Wall-clock limit in seconds, tool time included; ``None`` uses the
                policy's. It starts when a worker slot is free (see ``max_workers``).
            extra_globals: More names for the snippet; JSON-compatible values only
                (they are sent to the worker as JSON). Tools win on name clashes.
            on_tool_call: Called on this event loop with each finished tool call.
            on_output: Called on this event loop as ``on_output(stream, text)`` with
                output chunks (batched by the worker every few milliseconds).
            caller: Who is asking (any hashable key: a user, a conversation), for
                fairness when all ``max_workers`` slots are busy: waiting executions are
                served first come, first served per caller, and the callers in turn,
                so one caller's queue cannot hold another's execution back by more
                than a slot per waiting caller. Executions without one share the
                caller ``None``; a session is its own caller.

        Returns:
            The frozen result. Failures of the code, timeouts, limits, crashes of the
            worker (``error_type="WorkerCrashed"``) and malformed messages from it
            (``"WireProtocolError"``) are results, not exceptions.

        Raises:
            ValueError: Malformed namespace or non-positive timeout.
            TypeError: ``code`` is not a ``str``, or ``extra_globals`` is not
                JSON-compatible.
            RuntimeClosedError: The runtime is closed.
            WorkerStartError: The template process cannot start.
        """
        prepared = self._prepare(code, namespace, timeout, extra_globals, False)
        if prepared.refusal is not None:
            return prepared.refusal
        pool = self._pool
        worker = pool.take_idle_now()
        outcome = result = None
        if worker is not None:  # the usual case, without the slot and start-up machinery
            try:
                outcome, result = await self._run(worker, prepared, on_tool_call, on_output)
            finally:
                self._recycler.give_back(worker, outcome, result)
                pool.free_slot()
            if outcome[0] != RETRY:
                return result
        wait = prepared.seconds if self._queue_timeout is None else self._queue_timeout
        slot = contextlib.AsyncExitStack()
        try:
            await slot.enter_async_context(pool.slot(wait, caller))
        except TimeoutError:
            return queue_timeout_result(wait, pool.max_workers)
        async with slot:
            worker = await self._pool.take_worker()
            try:
                outcome, result = await self._run(worker, prepared, on_tool_call, on_output)
            finally:
                self._recycler.give_back(worker, outcome, result)
            return result

    def session(self) -> SubprocessSession:
        """Return a session: one dedicated worker whose globals persist across executes.

        Use as ``async with runtime.session() as session: await session.execute(...)``.
        A timeout or crash ends the session (later executes raise
        :class:`~ptcbox.errors.SessionEndedError`).
        """
        self._check_open()
        session = SubprocessSession(self)
        self._sessions.add(session)
        return session

    async def aclose(self) -> None:
        """Kill every worker, stop the template process and the tool threads. Idempotent.

        Executions still running end with a ``WorkerCrashed`` result.
        """
        if self._closed:
            return
        self._closed = True
        for session in list(self._sessions):
            await session.aclose()
        await self._pool.aclose()
        self._tool_threads.close()
        self._threads.shutdown(0)
        # idle threads end at once; one still inside a slow tool is left to finish it
        threads = [*self._threads.threads(), *self._tool_threads.threads()]
        deadline = time.monotonic() + _JOIN_S
        while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
            await asyncio.sleep(0.002)

    async def __aenter__(self) -> SubprocessRuntime:
        self._check_open()
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"SubprocessRuntime(max_workers={self._pool.max_workers}, {state})"

    # -- internals -----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeClosedError("SubprocessRuntime")

    def _prepare(
        self,
        code: str,
        namespace: Mapping[str, ToolProjection],
        timeout: float | None,
        extra_globals: Mapping[str, Any] | None,
        session: bool,
    ) -> Prepared:
        self._check_open()
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        specs = self._tools.resolve(namespace)
        seconds = resolve_timeout(timeout, self.policy.timeout)
        return self._preparer.prepare(code, specs, seconds, extra_globals, session)

    async def _run(
        self,
        worker: WorkerHandle,
        prepared: Prepared,
        on_tool_call: ToolCallCallback | None,
        on_output: OutputCallback | None,
    ) -> tuple[Outcome, CodeResult]:
        started = time.perf_counter()
        seconds = prepared.seconds
        frame, nonce = prepared.frame, None
        if prepared.session or self._recycler.limit > 1:  # replies must answer this execute
            nonce = secrets.token_hex(8)
            frame = encode_message({"t": "id", "n": nonce}) + frame
        executor = ScopedExecutor(self._tool_threads, self._tool_capacity)
        execution = HostExecution(
            worker,
            prepared.specs,
            self.policy,
            self._threads,
            executor,
            on_tool_call,
            on_output,
            nonce,
        )
        # a channel thread polling from the start needs a CPU the worker does not use
        thread_reads = prepared.names_sync_tool and self._pool.busy < _CPUS
        try:
            outcome = await execution.run(
                frame, seconds, thread_reads=thread_reads, check=prepared.check
            )
        finally:
            executor.shutdown(wait=False, cancel_futures=True)
        if outcome[0] == "refused":  # a call that cannot work: failed before any tool ran
            return outcome, refused(outcome[1], started)
        if outcome[0] == "eof" and self._closed:
            raise RuntimeClosedError("SubprocessRuntime")
        result = build_result(execution, outcome, seconds, time.perf_counter() - started)
        quiet = outcome[0] == "eof" and not (execution.heard or prepared.session)
        if quiet and self._recycler.failed_reset(worker):  # nothing of it ran: run it again
            return (RETRY, None), result
        if outcome[0] == "eof" and worker.exited:
            limit = limit_error(worker, self.policy)
            if limit is not None:  # a limit the kernel enforced by a signal, not a crash
                signame = signal.Signals(worker.signal_number or 0).name
                result = dataclasses.replace(
                    result,
                    error=f"{type(limit).__name__}: {limit} (the worker was killed by {signame})",
                    error_type=type(limit).__name__,
                )
        return outcome, result

"""``ThreadRuntime``: run snippets in a worker thread of the host process.

The fastest runtime; isolation is the sandbox policy (RestrictedPython guards) only.
Worker threads, how a stuck snippet is stopped and why a stopped thread is never
reused are described in :mod:`ptcbox.runtimes.thread._control`; what the thread runs in
:mod:`ptcbox.runtimes.thread._job`; tools, ``print`` and ``sleep`` in
:mod:`ptcbox.runtimes.thread._tools`; sessions in :mod:`ptcbox.runtimes.thread._session`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from ptcbox._result import CodeResult
from ptcbox.errors import LimitExceeded, RuntimeClosedError
from ptcbox.projections import ToolProjection
from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback
from ptcbox.runtimes._shared._clock import Deadline
from ptcbox.runtimes._shared._error_text import snippet_location, timeout_error_text
from ptcbox.runtimes._shared._host import ToolTable, resolve_timeout
from ptcbox.runtimes._shared._output import Relay
from ptcbox.runtimes._shared._preflight import oversized, preflight_parsed, refused
from ptcbox.runtimes.thread._callables import tool_callables
from ptcbox.runtimes.thread._job import Job, Outcome, install_hooks
from ptcbox.runtimes.thread._pool import submit
from ptcbox.runtimes.thread._route import Route
from ptcbox.runtimes.thread._session import ThreadSession
from ptcbox.runtimes.thread._tools import Run
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._dataspecs import DATA_RUNTIME_REASON, uses_data_libs
from ptcbox.sandbox._policy import check_policy_argument

__all__ = ["ThreadRuntime", "ThreadSession"]

_CLOSED = object()
_UNSET = object()
_EXPIRED = object()


def _resolve(future: asyncio.Future[Any], outcome: Any) -> None:
    if not future.done():
        future.set_result(outcome)


class _Handover:
    """Where a job's outcome reaches the caller's loop (used on that loop only).

    ``future`` gets the first of: the job's outcome, ``_EXPIRED`` from the deadline's
    timer, ``_CLOSED`` from :meth:`ThreadRuntime.aclose`. The job's outcome is also
    kept, for a job that ended right at the deadline (:meth:`late`).
    """

    __slots__ = ("future", "outcome")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.future: asyncio.Future[Any] = loop.create_future()
        self.outcome: Any = _UNSET

    def deliver(self, outcome: Outcome | None) -> None:
        """The job's outcome (``None``: it was stopped)."""
        self.outcome = outcome
        _resolve(self.future, outcome)

    async def late(self) -> Any:
        """The job's outcome after ``future`` got another value: once it is delivered."""
        if self.outcome is _UNSET:
            self.future = asyncio.get_running_loop().create_future()
            await self.future
        return self.outcome


def _host_loop() -> asyncio.AbstractEventLoop:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "ThreadRuntime.execute() must be awaited in an asyncio event loop "
            "(anyio's asyncio backend); use ptcbox.execute() from synchronous code"
        ) from None


class ThreadRuntime:
    """Runs snippets in worker threads of this process (in-process, fastest).

    Each execution gets its own globals, its own stdout/stderr buffers (so concurrent
    executions never mix output) and its own tool-call trace. Sync tools run in the
    snippet's thread; async tools run on the caller's event loop. Inside running
    asyncio code (a coroutine, or a snippet with top-level ``await``) a tool call
    starts at once and returns an awaitable that must be awaited (see
    :mod:`ptcbox.runtimes._shared._awaitable`), so ``await asyncio.gather(...)`` runs calls
    concurrently on the host, at most ``policy.max_concurrent_tool_calls`` at a time.

    Timeouts: while the snippet runs Python code, or waits in a tool or a sleep, the
    result comes back at the deadline. The thread is then stopped by raising an
    internal exception in it at the next bytecode boundary
    (``PyThreadState_SetAsyncExc``), re-armed on every line until it leaves the
    snippet, so ``except BaseException`` or ``finally`` loops cannot keep it alive;
    ``time.sleep`` and event loops the snippet runs are woken at once. The stopped
    thread ends and is never reused; its later output is dropped.

    Every execution runs in a thread no tool (or other host code) ran in before, and
    a thread a tool ran in ends with its execution; sync tools called from asyncio code
    run in threads of that execution only: a ``threading.local`` a tool sets never
    reaches another execution's tools (nor does a context variable: each call runs in
    a fresh copy of the caller's context).

    What this runtime cannot guarantee (use ``SubprocessRuntime`` for these):

    - A C call that holds the GIL (``sum(range(10**9))``; regular expressions do not:
      the sandbox's ``re`` matches under the deadline with the GIL released) blocks the
      whole host process, its event loop and so the deadline included, until it
      returns; the result then comes back as a timeout (``timed_out=True``) if the
      deadline passed meanwhile. A C call that releases the GIL only delays the
      thread's end.
    - Memory is not capped per execution (``max_memory_bytes`` and ``max_cpu_seconds``
      are not enforced); a snippet can exhaust the host's memory.
    - Host code is never interrupted, so neither is snippet code a tool calls back (a
      function passed to a tool as an argument): the thread ends when the tool returns.
    - Under the trusted policy the snippet gets the real ``time.sleep``, threads and
      C extensions: a blocking call there ends only when it returns.
    - Under the trusted policy, tools and ``extra_globals`` exchange live objects (no
      copy) with the snippet. Snippet objects that outlive the execution (in reference
      cycles) are finalized in whatever thread collects them.

    Sessions (:meth:`session`) keep the snippet's globals between executions.

    Args:
        policy: The sandbox policy; ``SandboxPolicy()`` when ``None``.

    Raises:
        TypeError: If ``policy`` is not a :class:`~ptcbox.sandbox.SandboxPolicy`.
        ValueError: A restricted ``policy`` allows ``numpy`` or ``pandas``
            (:meth:`SandboxPolicy.data`): they run only in ``SubprocessRuntime``.

    Example:
        >>> async with ThreadRuntime() as runtime:  # doctest: +SKIP
        ...     result = await runtime.execute("print(add(a=1, b=2))", namespace)
    """

    def __init__(self, policy: SandboxPolicy | None = None) -> None:
        check_policy_argument(policy)
        self.policy: SandboxPolicy = policy if policy is not None else SandboxPolicy()
        if self.policy.restricted and uses_data_libs(self.policy.allowed_imports):
            raise ValueError(f"ThreadRuntime cannot run this policy: {DATA_RUNTIME_REASON}")
        self._table = ToolTable()
        self._closed = False
        self._active: dict[Run, asyncio.Future[Any]] = {}
        self._sessions: set[ThreadSession] = set()
        install_hooks()

    @property
    def closed(self) -> bool:
        """``True`` after :meth:`aclose`."""
        return self._closed

    async def __aenter__(self) -> ThreadRuntime:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the runtime: stop running executions and close its sessions.

        Executions still running raise :class:`~ptcbox.errors.RuntimeClosedError`.
        Idempotent.
        """
        if self._closed:
            return
        self._closed = True
        for run, future in list(self._active.items()):
            run.control.request_stop("closed")
            _resolve(future, _CLOSED)
        for session in list(self._sessions):
            await session.aclose()

    def session(self) -> ThreadSession:
        """Start a session whose executions share the snippet's globals.

        Returns:
            A :class:`ThreadSession`; use it as ``async with runtime.session() as s``.

        Raises:
            RuntimeClosedError: If the runtime is closed.
        """
        if self._closed:
            raise RuntimeClosedError("ThreadRuntime")
        session = ThreadSession(self)
        self._sessions.add(session)
        return session

    async def execute(
        self,
        code: str,
        namespace: Mapping[str, ToolProjection],
        *,
        timeout: float | None = None,
        extra_globals: Mapping[str, Any] | None = None,
        on_tool_call: ToolCallCallback | None = None,
        on_output: OutputCallback | None = None,
    ) -> CodeResult:
        """Run ``code`` in a worker thread with the tools of ``namespace``.

        Args:
            code: Python source written by a model.
            namespace: Tool name to projection.
            timeout: Wall-clock limit in seconds; ``None`` uses ``policy.timeout``.
            extra_globals: More names for the snippet; tools win on name clashes. Under
                a restricted policy the snippet gets deep copies (``copy.deepcopy``:
                functions and classes as they are), so it cannot change host data.
            on_tool_call: Called on this event loop with each finished
                :class:`~ptcbox.ToolCallRecord`.
            on_output: Called on this event loop as ``on_output(stream, text)`` with
                output as it is written (consecutive chunks of a stream may be joined).

        Returns:
            The frozen result; failures of the code are in it, never raised.

        Raises:
            ValueError: If the namespace is malformed or ``timeout`` is not positive.
            TypeError: If ``code`` is not a str or a namespace value not a projection.
            RuntimeClosedError: If the runtime is closed (also while running).
        """
        if self._closed:
            raise RuntimeClosedError("ThreadRuntime")
        return await self._execute(
            code,
            namespace,
            timeout=timeout,
            extra_globals=extra_globals,
            on_tool_call=on_tool_call,
            on_output=on_output,
            session=None,
        )

    async def _execute(
        self,
        code: str,
        namespace: Mapping[str, ToolProjection],
        *,
        timeout: float | None,
        extra_globals: Mapping[str, Any] | None,
        on_tool_call: ToolCallCallback | None,
        on_output: OutputCallback | None,
        session: ThreadSession | None,
    ) -> CodeResult:
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        install_hooks()
        policy = self.policy
        limit = resolve_timeout(timeout, policy.timeout)
        specs = self._table.resolve(namespace)
        if extra_globals is not None and not isinstance(extra_globals, Mapping):
            raise TypeError(f"extra_globals must be a mapping, got {type(extra_globals).__name__}")
        if extra_globals and policy.restricted:
            extra_globals = copied_globals(extra_globals)
        started = time.perf_counter()
        too_long = oversized(code, policy.max_code_chars, started)
        if too_long is not None:  # compiled here, it would hold the GIL unstoppably
            return too_long
        known = {*(extra_globals or ()), *(session._namespace if session is not None else ())}
        failure, tree = preflight_parsed(code, specs, known)  # the job compiles this tree
        if failure is not None:  # a call that cannot work: fail before any tool runs
            return refused(failure, started)
        loop = _host_loop()
        relay = None
        if on_output is not None or on_tool_call is not None:
            relay = Relay(loop, on_output, on_tool_call)
        run = Run(
            host_loop=loop,
            max_output_bytes=policy.max_output_bytes,
            max_calls=policy.max_tool_calls,
            max_concurrent=policy.max_concurrent_tool_calls,
            relay=relay,
            plain_data=policy.restricted,
            specs=specs,
        )
        run.clock = Deadline(limit, started)
        route = session._route if session is not None else Route()
        route.run = run
        handover = _Handover(loop)

        def deliver(outcome: Outcome | None) -> None:
            with contextlib.suppress(RuntimeError):  # the caller's loop may be gone
                loop.call_soon_threadsafe(handover.deliver, outcome)

        job = Job(
            code=code,
            tree=tree,
            policy=policy,
            run=run,
            route=route,
            tools=tool_callables(specs),
            extra_globals=extra_globals,
            session=session,
            deliver=deliver,
        )
        if session is not None:
            session._last = run
        self._active[run] = handover.future
        try:
            if self._closed:  # closed while this call was being set up
                raise RuntimeClosedError("ThreadRuntime")
            submit(job)
            # asyncio's own timer: anyio.move_on_after imports its backend on first use,
            # and an import while a snippet thread holds the GIL waits up to 5 ms (the
            # switch interval) per file system call: seconds (G4). The clock pauses while
            # an approval is awaited (see _shared/_clock). It resolves the same future as
            # the job, with _EXPIRED: one future, no asyncio.wait (each execution paid
            # for its extra future, callbacks and loop iteration).
            run.clock.arm(loop, functools.partial(_resolve, handover.future, _EXPIRED))
            try:
                outcome: Any = await handover.future
            finally:
                run.clock.disarm()
            if outcome is _EXPIRED:
                location = snippet_location(run.control.thread_id, code)
                if run.control.request_stop("timeout"):
                    return self._result(run, relay, started, timeout=limit, location=location)
                outcome = await handover.late()  # it finished right at the deadline
        except BaseException:
            run.control.request_stop("cancelled")  # synchronous: nothing to shield
            _close_run(run, relay)
            raise
        finally:
            self._active.pop(run, None)
        if outcome is None and run.flood is not None:  # stopped for flooding its output
            return self._result(run, relay, started, flood=run.flood)
        if outcome is _CLOSED or outcome is None:  # stopped by aclose() of runtime or session
            _close_run(run, relay)
            closed_session = session is not None and session.closed
            raise RuntimeClosedError("session" if closed_session else "ThreadRuntime")
        if outcome.host_error is not None:
            _close_run(run, relay)
            raise outcome.host_error
        if run.clock.used(outcome.finished_at) > limit:  # a call held the GIL past it
            overrun = run.clock.used(outcome.finished_at)
            return self._result(run, relay, started, timeout=limit, location=_held_gil(overrun))
        return self._result(run, relay, started, outcome=outcome)

    def _result(
        self,
        run: Run,
        relay: Relay | None,
        started: float,
        *,
        outcome: Outcome | None = None,
        timeout: float | None = None,
        location: str = "",
        flood: tuple[LimitExceeded, str] | None = None,
    ) -> CodeResult:
        records = run.build_records()  # still-running calls reach the relay too
        _close_run(run, relay)
        stdout, stderr = run.stdout.getvalue(), run.stderr.getvalue()
        truncated = run.stdout.truncated or run.stderr.truncated
        duration = time.perf_counter() - started
        if flood is not None:
            limit, note = flood
            return CodeResult(
                stdout=stdout,
                stderr=stderr,
                return_code=1,
                error=f"{type(limit).__name__}: {limit}{note}",
                error_type=type(limit).__name__,
                tool_calls=records,
                duration_s=duration,
                truncated=truncated,
            )
        if outcome is None:
            assert timeout is not None
            return CodeResult(
                stdout=stdout,
                stderr=stderr,
                return_code=1,
                error=timeout_error_text(timeout, location, run.clock.paused_seconds()),
                error_type="TimeoutError",
                timed_out=True,
                tool_calls=records,
                duration_s=duration,
                truncated=truncated,
            )
        return CodeResult(
            stdout=stdout,
            stderr=stderr,
            return_code=0 if outcome.error is None else 1,
            error=outcome.error,
            error_type=outcome.error_type,
            value=outcome.value,
            tool_calls=records,
            duration_s=duration,
            truncated=truncated or outcome.error_truncated or outcome.value_dropped,
        )


def copied_globals(extra_globals: Mapping[str, Any]) -> dict[str, Any]:
    """Deep copies of ``extra_globals`` values: a snippet mutating its data changes its
    own copy, never the host's objects (functions, classes and modules are atoms to
    :func:`copy.deepcopy`: passed as they are).

    Raises:
        TypeError: If a value cannot be copied (it holds a lock, a generator ...).
    """
    out: dict[str, Any] = {}
    memo: dict[int, Any] = {}
    for key, value in extra_globals.items():
        try:
            out[key] = copy.deepcopy(value, memo)
        except Exception as exc:
            raise TypeError(
                f"extra_globals[{key!r}] cannot be copied ({exc}); under a restricted "
                "policy ThreadRuntime hands the snippet deep copies of extra_globals"
            ) from None
    return out


def _held_gil(seconds: float) -> str:
    return (
        f"a call that held the GIL, which blocks the whole process, so it could not be "
        f"stopped at the deadline; it ended after {seconds:.1f} seconds"
    )


def _close_run(run: Run, relay: Relay | None) -> None:
    run.stdout.close()
    run.stderr.close()
    if relay is not None:
        relay.close()

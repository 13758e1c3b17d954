"""RayRuntime: SubprocessRuntime pools on the nodes of a Ray cluster, tools in the caller.

See :class:`RayRuntime`. Ray is imported when a runtime is created, never by
``import ptcbox``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any

import orjson

from ptcbox._result import CodeResult
from ptcbox.errors import RuntimeClosedError, SessionEndedError, WorkerCrashed
from ptcbox.projections import ToolProjection
from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback
from ptcbox.runtimes._shared._host import ToolSpec, ToolTable, resolve_timeout
from ptcbox.runtimes._shared._output import cap_text
from ptcbox.runtimes._shared._preflight import oversized
from ptcbox.runtimes.ray._actor import RayHost
from ptcbox.runtimes.ray._caller import CallerExecution
from ptcbox.runtimes.ray._messages import json_globals, result_from_data, tool_descriptor
from ptcbox.runtimes.ray._pool import ActorPool, ActorSlot
from ptcbox.runtimes.ray._session import RaySession
from ptcbox.runtimes.subprocess._result import queue_timeout_result
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._policy import check_policy_argument

__all__ = ["RayRuntime"]

_GRACE_S = 10.0  # past the timeout, the caller stops waiting for an actor that is silent
_CANCEL_S = 5.0
_INIT_LOCK = threading.Lock()
_OWNED_BY: set[int] = set()  # runtimes that rely on a ray.init they made


def import_ray() -> Any:
    """The ``ray`` module, or an ``ImportError`` that says how to install it."""
    try:
        import ray  # noqa: PLC0415 - Ray is optional and heavy: imported on use
    except ImportError as exc:
        raise ImportError(
            "RayRuntime needs Ray: install it with pip install 'ptcbox[ray]'"
        ) from exc
    return ray


class RayRuntime:
    """Run snippets in SubprocessRuntime pools hosted by Ray actors across a cluster.

    For hosts that outgrow one machine (evaluation harnesses, RL rollouts, servers of
    many agents). Each actor runs a :class:`~ptcbox.runtimes.SubprocessRuntime` on its
    node, so every snippet gets what SubprocessRuntime gives it (a fresh, locked-down
    process, OS limits, the sandbox policy) on whichever node Ray placed the actor. The
    tools stay in the caller's process, as with every runtime: an execution is an
    actor call (then long polls) whose tool calls come back to the caller as JSON events; the
    caller runs the tool (async tools on its event loop, sync ones in its tool threads)
    and sends the reply with another actor call. Only JSON text crosses from the actor
    to the caller, and values keep their types through the same codec as
    SubprocessRuntime's; a tool's exception keeps its type. The result, the trace, the
    observers, timeouts and limits are those of SubprocessRuntime.

    ``RayRuntime()`` with no arguments uses the Ray connection the process has, else
    calls ``ray.init(address=address, **init_options)``, which joins the cluster at
    ``RAY_ADDRESS`` or starts a local one, as Ray does; :meth:`aclose` shuts down only a
    connection it made (a cluster it joined keeps running).

    Args:
        policy: The sandbox policy; ``None`` for ``SandboxPolicy()``.
        actors: Actors started (each a SubprocessRuntime on some node).
        executions_per_actor: Executions one actor runs at once (its
            SubprocessRuntime's ``max_workers``). More wait, first come first served,
            for at most ``queue_timeout``.
        num_cpus: CPUs Ray reserves for each actor (placement: Ray puts an actor where
            they are free; an autoscaling cluster adds nodes for actors that do not fit).
        address: Passed to ``ray.init`` when the process is not connected yet.
        init_options: More keyword arguments of that ``ray.init``.
        actor_options: More options of each actor (``resources``, ``memory``,
            ``scheduling_strategy`` (default ``"SPREAD"``), ``runtime_env``, ...).
        worker_options: Keyword arguments of each actor's SubprocessRuntime
            (``min_idle``, ``network``, ``env``, ``max_open_files``, ...).
        tool_threads: Caller threads for sync tools.
        queue_timeout: Longest wait for a free execution slot, in seconds; ``None``
            waits at most the execution's own timeout. Past it the result is a
            ``TimeoutError`` (the code did not run).

    Raises:
        ImportError: If Ray is not installed.
        ValueError: If a count is below 1.
        TypeError: If ``policy`` is not a :class:`~ptcbox.sandbox.SandboxPolicy`.
    """

    def __init__(
        self,
        policy: SandboxPolicy | None = None,
        *,
        actors: int = 1,
        executions_per_actor: int = 4,
        num_cpus: float = 1.0,
        address: str | None = None,
        init_options: Mapping[str, Any] | None = None,
        actor_options: Mapping[str, Any] | None = None,
        worker_options: Mapping[str, Any] | None = None,
        tool_threads: int = 32,
        queue_timeout: float | None = None,
    ) -> None:
        check_policy_argument(policy)
        self._ray = import_ray()
        if actors < 1 or executions_per_actor < 1:
            raise ValueError("actors and executions_per_actor must be at least 1")
        self.policy = policy if policy is not None else SandboxPolicy()
        self._queue_timeout = None if queue_timeout is None else resolve_timeout(queue_timeout, 1.0)
        self._address = address
        self._init_options = dict(init_options or {})
        options: dict[str, Any] = {"scheduling_strategy": "SPREAD", "num_cpus": num_cpus}
        options.update(actor_options or {})
        subprocess_options = dict(worker_options or {})
        subprocess_options["max_workers"] = executions_per_actor
        actor_class = self._ray.remote(RayHost)

        def make_actor() -> Any:
            return actor_class.options(**options).remote(self.policy, subprocess_options)

        self._pool = ActorPool(self._ray, make_actor, actors, executions_per_actor)
        self._tools = ToolTable()
        self._descriptors: dict[int, tuple[ToolSpec, dict[str, Any]]] = {}
        self._executor = ThreadPoolExecutor(tool_threads, thread_name_prefix="ptcbox-ray-tool")
        self._sessions: set[RaySession] = set()
        self._start_lock = asyncio.Lock()
        self._started = False
        self._closed = False

    @property
    def closed(self) -> bool:
        """``True`` after :meth:`aclose`."""
        return self._closed

    async def start(self) -> None:
        """Connect to Ray and start the actors now (else on first use).

        Raises:
            RuntimeClosedError: If the runtime is closed.
        """
        self._check_open()
        async with self._start_lock:
            if self._started:
                return
            await asyncio.to_thread(self._connect)
            try:
                await self._pool.start()
            except self._ray.exceptions.RayActorError:
                self._check_open()  # closed while starting
                raise
            self._check_open()
            self._started = True

    def _connect(self) -> None:
        with _INIT_LOCK:
            if not self._ray.is_initialized():
                self._ray.init(address=self._address, **self._init_options)
                _OWNED_BY.add(id(self))
            elif _OWNED_BY:
                _OWNED_BY.add(id(self))

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
        """Run ``code`` on one of the actors; see :meth:`SubprocessRuntime.execute`.

        Returns:
            The frozen result. An actor that dies during the execution gives a
            ``WorkerCrashed`` result (with the output and tool calls seen so far) and
            is replaced.

        Raises:
            ValueError: Malformed namespace or non-positive timeout.
            TypeError: ``code`` is not a ``str``, or ``extra_globals`` is not
                JSON-compatible.
            RuntimeClosedError: The runtime is closed.
        """
        prepared = self._prepare(code, namespace, timeout, extra_globals)
        too_long = oversized(code, self.policy.max_code_chars, time.perf_counter())
        if too_long is not None:  # refused here: it never travels to an actor
            return too_long
        await self.start()
        wait = prepared[1] if self._queue_timeout is None else self._queue_timeout
        slot = await self._pool.acquire(wait)
        if slot is None:
            self._check_open()
            return queue_timeout_result(wait, self._pool.slots)
        try:
            return await self._run(slot, prepared, None, on_tool_call, on_output)
        finally:
            self._pool.release(slot)

    def session(self) -> RaySession:
        """Return a session: one worker on one actor whose globals persist across executes.

        Use as ``async with runtime.session() as session: await session.execute(...)``.
        A timeout, a crash or the death of its actor ends the session (later executes
        raise :class:`~ptcbox.errors.SessionEndedError`).
        """
        self._check_open()
        session = RaySession(self)
        self._sessions.add(session)
        return session

    async def aclose(self) -> None:
        """Close every actor's workers, kill the actors, disconnect Ray if this runtime
        connected it (and no other runtime still uses it). Idempotent.

        Executions still running raise :class:`~ptcbox.errors.RuntimeClosedError`.
        """
        if self._closed:
            return
        self._closed = True
        for session in list(self._sessions):
            await session.aclose()
        await self._pool.aclose()
        self._executor.shutdown(wait=False, cancel_futures=True)
        with _INIT_LOCK:
            owned = id(self) in _OWNED_BY
            _OWNED_BY.discard(id(self))
            last = owned and not _OWNED_BY
        if last and self._ray.is_initialized():
            await asyncio.to_thread(self._ray.shutdown)

    async def __aenter__(self) -> RayRuntime:
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
        return f"RayRuntime(actors={len(self._pool.actors)}, {state})"

    # -- internals -----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeClosedError("RayRuntime")

    def _prepare(
        self,
        code: str,
        namespace: Mapping[str, ToolProjection],
        timeout: float | None,
        extra_globals: Mapping[str, Any] | None,
    ) -> tuple[dict[str, ToolSpec], float, dict[str, Any], list[dict[str, Any]], str]:
        self._check_open()
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        specs = self._tools.resolve(namespace)
        seconds = resolve_timeout(timeout, self.policy.timeout)
        globals_ = json_globals(extra_globals)
        tools = []
        for spec in specs.values():
            cached = self._descriptors.get(id(spec))
            if cached is None or cached[0] is not spec:
                if len(self._descriptors) > 1024:
                    self._descriptors.clear()
                cached = self._descriptors[id(spec)] = (spec, tool_descriptor(spec))
            tools.append(cached[1])
        return specs, seconds, globals_, tools, code

    async def _run(
        self,
        slot: ActorSlot,
        prepared: tuple[dict[str, ToolSpec], float, dict[str, Any], list[dict[str, Any]], str],
        session_id: str | None,
        on_tool_call: ToolCallCallback | None,
        on_output: OutputCallback | None,
    ) -> CodeResult:
        specs, seconds, globals_, tools, code = prepared
        execution_id = uuid.uuid4().hex
        request = {
            "code": code,
            "tools": tools,
            "calls": on_tool_call is not None,
            "output": on_output is not None,
            "session": session_id,
        }
        caller = CallerExecution(
            slot.handle,
            execution_id,
            specs,
            self._executor,
            on_tool_call,
            on_output,
            self.policy.max_output_bytes,
        )
        started = time.perf_counter()
        stream = _batches(
            slot.handle, execution_id, orjson.dumps(request).decode(), seconds, globals_ or None
        )
        limit = None if math.isinf(seconds) else seconds + _GRACE_S
        try:
            async with asyncio.timeout(limit):
                final = await caller.serve(stream)
        except self._ray.exceptions.RayActorError as exc:
            if self._closed:
                raise RuntimeClosedError("RayRuntime") from None
            self._pool.replace(slot)
            return self._crashed(caller, f"the Ray actor running it died ({type(exc).__name__})")
        except TimeoutError:
            await self._cancel(slot, execution_id)
            return self._crashed(caller, f"the Ray actor did not answer within {limit:g} s")
        except BaseException:
            await self._cancel(slot, execution_id)
            raise
        kind = final["t"]
        if kind == "result":
            return result_from_data(final.get("r") or {}, time.perf_counter() - started)
        if kind == "raise":
            raise _rebuild_raised(final.get("kind"), str(final.get("message")))
        if self._closed:
            raise RuntimeClosedError("RayRuntime")
        return self._crashed(caller, "the Ray actor cancelled it")

    async def _cancel(self, slot: ActorSlot, execution_id: str) -> None:
        """Cancel the execution on its actor (its worker is killed), bounded in time."""
        with contextlib.suppress(Exception):
            await asyncio.shield(
                asyncio.wait_for(slot.handle.cancel.remote(execution_id), _CANCEL_S)
            )

    def _crashed(self, caller: CallerExecution, detail: str) -> CodeResult:
        limit = self.policy.max_output_bytes
        error = WorkerCrashed(detail=detail)
        return CodeResult(
            stdout=cap_text("".join(caller.stdout), limit)[0],
            stderr=cap_text("".join(caller.stderr), limit)[0],
            return_code=1,
            error=f"WorkerCrashed: {error}",
            error_type="WorkerCrashed",
            tool_calls=tuple(caller.calls),
        )


async def _batches(
    handle: Any, execution_id: str, request: str, seconds: float, globals_: Any
) -> AsyncIterator[Any]:
    """The execution's batches of events: the first from ``execute``, then long polls."""
    yield await handle.execute.remote(execution_id, request, seconds, globals_)
    while True:
        yield await handle.poll.remote(execution_id)


def _rebuild_raised(kind: Any, message: str) -> Exception:
    if kind == "RuntimeClosedError":
        return RuntimeClosedError("RayRuntime")
    if kind == "SessionEndedError":
        return SessionEndedError(message)
    if kind == "ValueError":
        return ValueError(message)
    return TypeError(message)

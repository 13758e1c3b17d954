"""The one-call facade: :func:`execute` (sync) and :func:`aexecute` (async).

``execute`` works in a plain script, inside Jupyter or any thread that already runs an
event loop, and from many threads at once: it hands the work to a private event loop
that runs in one daemon thread (``ptcbox-execute-loop``), started on first use and
stopped at interpreter exit, and blocks the calling thread until the result is ready.
The caller's own loop (if any) is never used, so ``asyncio.run() cannot be called from a
running event loop`` cannot happen; async tools and ``on_tool_call`` run on the private
loop.

Runtime lifetime: ``runtime=None`` or a runtime name uses a *shared* runtime per kind and
policy, which lives on the private loop (so a SubprocessRuntime's warm workers are reused
across calls, from ``execute`` and ``aexecute`` alike): the default-policy one until
interpreter exit, one per ``policy`` (a ``SandboxPolicy`` is immutable and hashable; equal
policies share) among the few most recently used (``ptcbox._loop.POLICY_RUNTIMES``; an
older one is closed once no call uses it, the rest at interpreter exit). ``aexecute``
reaches them from the caller's loop and hands async tools and the observers back to the
caller's loop. Only ``execute`` called from inside the private loop (an async tool that
calls ``execute``) makes a runtime for the call and closes it before returning. A runtime
instance you pass is never closed by ptcbox.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import inspect
import os
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, Final, Literal, TypeVar

import anyio

from ptcbox._loop import BackgroundLoop, run_in_new_thread
from ptcbox._result import CodeResult
from ptcbox._toolset import resolve_tools
from ptcbox._tracing import ExecutionSpan
from ptcbox._tracing_calls import traced_namespace
from ptcbox.projections import ToolProjection, binder_for
from ptcbox.runtimes import (
    CodeRuntime,
    OutputCallback,
    SubprocessRuntime,
    ThreadRuntime,
    ToolCallCallback,
)
from ptcbox.runtimes._shared._host import runs_on_loop
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._policy import check_policy_argument

__all__ = ["aexecute", "execute"]

RUNTIME_NAMES: Final[tuple[str, ...]] = ("thread", "subprocess")
"""The runtime names ``runtime=`` and ``ptcbox run --runtime`` accept."""

DEFAULT_RUNTIME: Final[str] = "subprocess"
"""The runtime used when none is given: process isolation with OS-enforced limits, the
safe choice for model-written code. ``"thread"`` is faster and in-process."""

_T = TypeVar("_T")


def make_runtime(kind: str, policy: SandboxPolicy | None = None) -> CodeRuntime:
    """Create a new runtime by name (shared by the facade, the CLI and the demo).

    Args:
        kind: One of :data:`RUNTIME_NAMES`.
        policy: The sandbox policy; ``None`` for the runtime's default.

    Returns:
        A new, open runtime; the caller closes it with ``await runtime.aclose()``.

    Raises:
        ValueError: If ``kind`` is not a known runtime name.
    """
    if kind == "thread":
        return ThreadRuntime(policy)
    if kind == "subprocess":
        return SubprocessRuntime(policy)
    raise ValueError(f"unknown runtime {kind!r}; expected one of {', '.join(RUNTIME_NAMES)}")


async def aclose_runtime(runtime: object) -> None:
    """Close a runtime ptcbox created, shielded from cancellation."""
    aclose = getattr(runtime, "aclose", None)
    if callable(aclose):
        with anyio.CancelScope(shield=True):
            await aclose()


def _check_runtime_arg(runtime: object, policy: object) -> None:
    if isinstance(runtime, str):
        if runtime not in RUNTIME_NAMES:
            raise ValueError(
                f"unknown runtime {runtime!r}; expected one of {', '.join(RUNTIME_NAMES)} "
                "or a runtime instance"
            )
    elif runtime is not None and not isinstance(runtime, CodeRuntime):
        raise TypeError(
            f"runtime= must be None, a name ({', '.join(RUNTIME_NAMES)}) or a runtime "
            f"instance, got {type(runtime).__name__}"
        )
    elif runtime is not None and policy is not None:
        raise ValueError(
            "policy= cannot be combined with a runtime instance; the runtime's own policy "
            "applies (pass the policy to the runtime's constructor)"
        )
    check_policy_argument(policy)


class _OnCallerLoop:
    """A projection whose awaitable results are awaited on the caller's event loop.

    ``aexecute`` runs the shared default runtime on ptcbox's private loop; an async tool
    may hold objects bound to the caller's loop (a client session, a lock), so its
    coroutine is sent back there with ``asyncio.run_coroutine_threadsafe``.
    """

    __slots__ = ("_caller", "_projection", "call_scope", "is_async", "signature")

    def __init__(self, projection: ToolProjection, caller: asyncio.AbstractEventLoop) -> None:
        self._projection = projection
        self._caller = caller
        self.signature = binder_for(projection).signature  # positional binding still works
        self.is_async = runs_on_loop(projection)
        # called in the runtime's call context: a wrapped tool asking for its scope gets it
        self.call_scope = getattr(projection, "call_scope", False) is True

    @property
    def name(self) -> str:
        return self._projection.name

    @property
    def doc(self) -> str | None:
        return self._projection.doc

    def __call__(self, **kwargs: Any) -> Any:
        result = self._projection(**kwargs)
        if not inspect.isawaitable(result):
            return result
        return self._await_on_caller(result)

    async def _await_on_caller(self, awaitable: Awaitable[Any]) -> Any:
        async def run() -> Any:
            return await awaitable

        future = asyncio.run_coroutine_threadsafe(run(), self._caller)
        return await asyncio.wrap_future(future)


def _on_caller_loop(
    namespace: dict[str, ToolProjection], options: dict[str, Any]
) -> tuple[dict[str, ToolProjection], dict[str, Any]]:
    """Route async tools and observers of a delegated call back to the calling loop."""
    caller = asyncio.get_running_loop()
    routed: dict[str, ToolProjection] = {
        name: _OnCallerLoop(projection, caller) for name, projection in namespace.items()
    }
    moved = dict(options)
    for key in ("on_tool_call", "on_output"):
        callback = options[key]
        if callback is not None:
            moved[key] = functools.partial(caller.call_soon_threadsafe, callback)
    return routed, moved


async def _on_private_loop(
    code: str,
    namespace: dict[str, ToolProjection],
    kind: str,
    policy: SandboxPolicy | None,
    options: dict[str, Any],
) -> CodeResult:
    """Run on the shared runtime of ``kind`` and ``policy``; only on the private loop."""
    if policy is None:
        return await _LOOP.shared_runtime(kind).execute(code, namespace, **options)
    async with _LOOP.policy_runtime(kind, policy) as runtime:
        return await runtime.execute(code, namespace, **options)


async def _run_shared(
    code: str,
    namespace: dict[str, ToolProjection],
    kind: str,
    policy: SandboxPolicy | None,
    options: dict[str, Any],
) -> CodeResult:
    """``aexecute`` on a shared runtime, which lives on the private loop."""
    if _LOOP.is_loop_thread():
        return await _on_private_loop(code, namespace, kind, policy, options)
    routed, moved = _on_caller_loop(namespace, options)
    loop = _LOOP.start()
    future = asyncio.run_coroutine_threadsafe(
        _on_private_loop(code, routed, kind, policy, moved), loop
    )
    return await asyncio.wrap_future(future)


async def _run(
    code: str,
    namespace: dict[str, ToolProjection],
    runtime: CodeRuntime | str | None,
    policy: SandboxPolicy | None,
    *,
    where: Literal["private-loop", "caller-loop", "own-thread"],
    options: dict[str, Any],
) -> CodeResult:
    """Run on a runtime instance, a shared runtime or a runtime made for the call.

    ``where`` says which loop this coroutine runs on: ptcbox's private loop (``execute``),
    a caller's loop (``aexecute``; the shared runtimes are reached on the private loop),
    or a one-off loop in a helper thread (``execute`` called on the private loop itself,
    which is blocked, so a runtime is made for the call and closed after it).
    """
    if runtime is not None and not isinstance(runtime, str):
        return await runtime.execute(code, namespace, **options)
    kind = runtime or DEFAULT_RUNTIME
    if where == "private-loop":
        return await _on_private_loop(code, namespace, kind, policy, options)
    if where == "caller-loop":
        return await _run_shared(code, namespace, kind, policy, options)
    owned = make_runtime(kind, policy)
    try:
        return await owned.execute(code, namespace, **options)
    finally:
        await aclose_runtime(owned)


def _check_code(code: object) -> None:
    if not isinstance(code, str):
        raise TypeError(f"code must be a str, got {type(code).__name__}")


async def aexecute(
    code: str,
    tools: object = None,
    *,
    runtime: CodeRuntime | str | None = None,
    timeout: float | None = None,
    policy: SandboxPolicy | None = None,
    extra_globals: Mapping[str, Any] | None = None,
    on_tool_call: ToolCallCallback | None = None,
    on_output: OutputCallback | None = None,
) -> CodeResult:
    """Run a snippet with tools on the current event loop and return its result.

    Async tools and the observers run on the calling loop. With ``runtime=None`` or a
    runtime name, the shared runtime of that kind and ``policy`` serves the call (it
    lives on ptcbox's private loop, so a SubprocessRuntime's warm workers are reused;
    runtimes of the few most recently used policies stay open, see the module
    docstring). A runtime instance you pass runs on the calling loop and is never closed.

    Args:
        code: Python source, typically written by a model.
        tools: The tools the code may call; see :func:`~ptcbox.resolve_tools` for the forms.
        runtime: ``None`` for :data:`DEFAULT_RUNTIME`, ``"thread"``, ``"subprocess"``, or
            a runtime instance (never closed by this call).
        timeout: Wall-clock limit in seconds; ``None`` uses the policy's default.
        policy: Sandbox policy for a runtime created by name; ``None`` for the default.
        extra_globals: More names for the code; tools win on name clashes.
        on_tool_call: Called with each finished :class:`~ptcbox.ToolCallRecord`.
        on_output: Called as ``on_output(stream, text)`` for each chunk written.

    Returns:
        The frozen :class:`~ptcbox.CodeResult`. Failures of the code (exceptions,
        timeouts, limits, policy violations) come back as ``return_code=1``.

    Raises:
        TypeError: For a bad ``code``, ``tools``, ``runtime`` or ``policy`` argument.
        ValueError: For malformed tools, an unknown runtime name, ``policy`` with a
            runtime instance, or a non-positive ``timeout``.
        RuntimeClosedError: If the given runtime is closed.
    """
    _check_code(code)
    namespace = resolve_tools(tools)
    _check_runtime_arg(runtime, policy)
    trace = _execution_span(runtime, policy, timeout)
    namespace = dict(traced_namespace(trace, namespace))
    options = _options(timeout, extra_globals, trace.wrap(on_tool_call), on_output)
    try:
        result = await _run(code, namespace, runtime, policy, where="caller-loop", options=options)
    except BaseException as exc:
        trace.finish(None, exc)
        raise
    trace.finish(result)
    return result


def execute(
    code: str,
    tools: object = None,
    *,
    runtime: CodeRuntime | str | None = None,
    timeout: float | None = None,
    policy: SandboxPolicy | None = None,
    extra_globals: Mapping[str, Any] | None = None,
    on_tool_call: ToolCallCallback | None = None,
    on_output: OutputCallback | None = None,
) -> CodeResult:
    """Run a snippet with tools and return its result; blocks the calling thread.

    Safe in a plain script, in Jupyter (or any thread whose event loop is running) and
    from many threads at once: the work runs on ptcbox's private event-loop thread, where
    async tools and ``on_tool_call`` run too. ``runtime=None`` or a runtime name uses the
    shared runtime of that kind and ``policy``: the default policy's stays open until
    interpreter exit, those of the few most recently used policies until evicted or
    interpreter exit (see the module docstring). A runtime instance you pass is used on
    the private loop and never closed; do not also use that instance on an event loop
    of your own.

    Example:
        >>> def add(a: int, b: int) -> int:
        ...     return a + b
        >>> execute("add(a=1, b=2)", tools=[add]).value
        3

    Args:
        code: Python source, typically written by a model.
        tools: The tools the code may call; see :func:`~ptcbox.resolve_tools` for the forms.
        runtime: ``None`` for :data:`DEFAULT_RUNTIME`, ``"thread"``, ``"subprocess"``, or
            a runtime instance.
        timeout: Wall-clock limit in seconds; ``None`` uses the policy's default.
        policy: Sandbox policy; ``None`` for the default policy.
        extra_globals: More names for the code; tools win on name clashes.
        on_tool_call: Called with each finished :class:`~ptcbox.ToolCallRecord`.
        on_output: Called as ``on_output(stream, text)`` for each chunk written.

    Returns:
        The frozen :class:`~ptcbox.CodeResult`. Failures of the code (exceptions,
        timeouts, limits, policy violations) come back as ``return_code=1``.

    Raises:
        TypeError: For a bad ``code``, ``tools``, ``runtime`` or ``policy`` argument.
        ValueError: For malformed tools, an unknown runtime name, ``policy`` with a
            runtime instance, or a non-positive ``timeout``.
        RuntimeClosedError: If the given runtime is closed.
    """
    _check_code(code)
    namespace = resolve_tools(tools)
    _check_runtime_arg(runtime, policy)
    trace = _execution_span(runtime, policy, timeout)
    namespace = dict(traced_namespace(trace, namespace))
    options = _options(timeout, extra_globals, trace.wrap(on_tool_call), on_output)
    try:
        result = run_blocking(
            lambda where: _run(code, namespace, runtime, policy, where=where, options=options)
        )
    except BaseException as exc:
        trace.finish(None, exc)
        raise
    trace.finish(result)
    return result


def _execution_span(
    runtime: CodeRuntime | str | None, policy: SandboxPolicy | None, timeout: float | None
) -> ExecutionSpan:
    if runtime is None or isinstance(runtime, str):
        kind = runtime or DEFAULT_RUNTIME
        name = {"thread": "ThreadRuntime", "subprocess": "SubprocessRuntime"}.get(kind, kind)
        return ExecutionSpan(name, policy, timeout)
    return ExecutionSpan(type(runtime).__name__, getattr(runtime, "policy", None), timeout)


def run_blocking(
    make: Callable[[Literal["private-loop", "own-thread"]], Coroutine[Any, Any, _T]],
) -> _T:
    """Run a coroutine to completion from sync code; block the calling thread until then.

    The one mechanism behind every sync entry point (``execute``, ``Agent.run_sync``):
    the coroutine runs on ptcbox's private event-loop thread, so a loop already running
    in the calling thread (Jupyter) is never touched. Called on the private loop itself
    (from an async tool or callback running there), blocking it would deadlock, so the
    coroutine gets a fresh loop in a helper thread instead.

    Args:
        make: Builds the coroutine; told where it will run (``"private-loop"`` or
            ``"own-thread"``).

    Returns:
        The coroutine's result; its exception propagates.
    """
    if _LOOP.is_loop_thread():
        return run_in_new_thread(lambda: make("own-thread"))
    return _LOOP.run(make("private-loop"))


def _options(
    timeout: float | None,
    extra_globals: Mapping[str, Any] | None,
    on_tool_call: ToolCallCallback | None,
    on_output: OutputCallback | None,
) -> dict[str, Any]:
    return {
        "timeout": timeout,
        "extra_globals": extra_globals,
        "on_tool_call": on_tool_call,
        "on_output": on_output,
    }


def _make_shared(kind: str, policy: SandboxPolicy | None) -> CodeRuntime:
    return make_runtime(kind, policy)  # the module's make_runtime as it is at call time


_LOOP = BackgroundLoop(_make_shared, aclose_runtime)
atexit.register(_LOOP.shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_LOOP.forget)

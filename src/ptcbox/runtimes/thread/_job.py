"""The body a snippet thread runs for one :class:`~ptcbox.runtimes.ThreadRuntime` execution.

Compile, build the globals, run (in an event loop of the thread for top-level
``await``), convert the trailing value and format the error, all inside the time
limit; then leave the snippet for good (see :class:`Control.finish
<ptcbox.runtimes.thread._control.Control.finish>`) and hand the outcome to the host.
Warnings and ignored finalizer errors of a snippet thread go to that execution's stderr.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import contextvars
import math
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import CodeType
from typing import TYPE_CHECKING, Any

from ptcbox.runtimes._shared._awaitable import AwaitableToolCall
from ptcbox.runtimes._shared._error_text import (
    SNIPPET_FILENAME,
    describe_exception,
    error_type_name,
    format_snippet_error,
)
from ptcbox.runtimes._shared._exit import exit_note, exit_status
from ptcbox.runtimes._shared._fresh_threads import REUSE
from ptcbox.runtimes._shared._name_hint import add_name_hint
from ptcbox.runtimes._shared._value import capped_value
from ptcbox.runtimes.thread._control import Control, ExecutionInterrupted, current_control
from ptcbox.runtimes.thread._route import Route, current
from ptcbox.runtimes.thread._tools import Run
from ptcbox.runtimes.thread._unraisable import make_unraisablehook, prime
from ptcbox.sandbox import VALUE_NAME, SandboxPolicy, build_globals, compile_snippet
from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._alive import ALIVE_ATTR, ALIVE_NAME
from ptcbox.sandbox._cacheguards import install_cache_guards
from ptcbox.sandbox._caches import snippet_thread
from ptcbox.sandbox._loops import set_snippet_stderr
from ptcbox.sandbox._regexview import set_deadline

if TYPE_CHECKING:
    from ptcbox.runtimes.thread._session import ThreadSession

__all__ = ["Job", "Outcome", "install_hooks"]

_STOP_CLEANUP_OFF = off("stop_cleanup")  # test-only ablation switches (see _ablation)
_QUIET_REFUSALS_OFF = off("quiet_refusals")


@dataclass(slots=True)
class Outcome:
    """What the snippet's thread hands back (everything already converted)."""

    value: Any = None
    error: str | None = None
    error_type: str | None = None
    error_truncated: bool = False
    value_dropped: bool = False
    host_error: BaseException | None = None
    finished_at: float = 0.0


class Job:
    """The body a thread runs for one execution; returns ``False`` after a stop (the
    thread ends), :data:`REUSE` when no host code ran in the thread (it may serve the
    next execution), else ``True`` (it ends; a fresh one replaces it). Never raises."""

    __slots__ = (
        "code",
        "deliver",
        "extra_globals",
        "policy",
        "route",
        "run",
        "session",
        "tools",
        "tree",
    )

    def __init__(
        self,
        *,
        code: str,
        policy: SandboxPolicy,
        run: Run,
        route: Route,
        tools: dict[str, Callable[..., Any]],
        extra_globals: Mapping[str, Any] | None,
        session: ThreadSession | None,
        deliver: Callable[[Outcome | None], None],
        tree: ast.Module | None = None,
    ) -> None:
        self.code = code
        self.tree = tree  # ``code`` parsed by the pre-flight check, or None
        self.policy = policy
        self.run = run
        self.route = route
        self.tools = tools
        self.extra_globals = extra_globals
        self.session = session
        self.deliver = deliver

    def __call__(self) -> object:
        # A fresh, empty contextvars context: the snippet starts with a fresh decimal
        # context, and what it sets (an open localcontext()) dies with the execution.
        return contextvars.Context().run(self._body)

    def _body(self) -> object:
        control = self.run.control
        control.stderr = self.run.stderr
        prime(sys.unraisablehook)  # its generator for this thread, before a stop can land
        current.run = self.run
        snippet_thread(self.policy.restricted)  # typing's caches: not for snippets
        set_snippet_stderr(self.run.stderr)  # where its asyncio.run loops report
        clock = self.run.clock  # its regular expressions stop at the deadline
        set_deadline(None if math.isinf(clock.limit) else clock.budget_end)
        outcome: Outcome | None = None
        namespace: dict[str, Any] | None = None
        started = False
        while True:  # an ExecutionInterrupted may land anywhere until finish()
            try:
                if not started:
                    started = True
                    try:
                        control.enter()
                        namespace = {}
                        outcome = self._execute(namespace)
                    except ExecutionInterrupted:
                        outcome = None
                    if outcome is not None:
                        outcome.finished_at = time.perf_counter()
                if namespace is not None and self.session is None:
                    if control.stop and _STOP_CLEANUP_OFF:  # test-only ablation
                        control.shelter()
                    elif control.stop:  # no more snippet code: it fails at _alive_.running
                        control.wind_down()
                    namespace.clear()  # snippet finalizers run here, under the time limit
                stopped = control.finish()
                break
            except ExecutionInterrupted:
                continue
        self.run.end_threads()  # its tool threads end; this thread ends after the job
        # A stopped execution delivers None: whoever still waits learns it was stopped.
        self.deliver(None if stopped else outcome)
        current.run = None  # this thread's own state, reset once the caller has its result
        snippet_thread(False)
        set_snippet_stderr(None)
        set_deadline(None)
        if stopped:
            return False
        # no tool, no host callable ran in this thread: it holds no one's thread-locals
        return REUSE if self.run.calls == 0 and not self.extra_globals else True

    def _execute(self, scratch: dict[str, Any]) -> Outcome:
        policy = self.policy
        tree, self.tree = self.tree, None  # compile_snippet consumes it: used once
        try:
            compiled = compile_snippet(self.code, policy, filename=SNIPPET_FILENAME, tree=tree)
        except ExecutionInterrupted:
            raise
        except BaseException as exc:  # SyntaxError, PolicyViolation, RecursionError ...
            return self._failure(exc)
        try:
            namespace = self._globals(scratch)
        except ExecutionInterrupted:
            raise
        except BaseException as exc:  # host misuse, e.g. bad extra_globals
            return Outcome(host_error=exc)
        run = self.run
        try:
            try:
                if compiled.is_async:
                    _run_async(compiled.code, namespace)
                else:
                    exec(compiled.code, namespace)
                value = namespace.pop(VALUE_NAME, None) if compiled.has_value else None
                if type(value) is AwaitableToolCall:
                    value._ptc_misuse("using it as the value")
            finally:
                run.settle()  # calls started without await end inside the time limit
            if value is None:
                return Outcome()
            data, note = capped_value(value, policy.max_output_bytes)
            if note is not None:
                run.stderr.write(note)
            return Outcome(value=data, value_dropped=note is not None)
        except ExecutionInterrupted:
            raise
        except BaseException as exc:
            control = current_control()
            if control is not None and control.stop:
                raise ExecutionInterrupted(control.reason) from None
            if isinstance(exc, SystemExit):
                return self._exit(exc)
            return self._failure(exc)

    def _exit(self, exc: SystemExit) -> Outcome:
        """``sys.exit(code)``: a success for ``None``/``0``, as for a script."""
        status, text = exit_status(exc)
        if text is not None:
            self.run.stderr.write(text)
        if status == 0:
            return Outcome()
        outcome = self._failure(exc)
        if outcome.error is not None and text is None:
            outcome.error += "\n" + exit_note(status)
        return outcome

    def _globals(self, scratch: dict[str, Any]) -> dict[str, Any]:
        route = self.route
        fresh = build_globals(
            self.policy,
            tools=self.tools,
            extra_globals=self.extra_globals,
            stdout=route.stdout,
            stderr=route.stderr,
            sleep=route.sleep,
            alive=self.run.control.alive,
        )
        session = self.session
        if session is None:
            scratch.update(fresh)
            return scratch
        namespace = session._namespace
        for name, injected in session._injected.items():
            if name not in fresh and namespace.get(name) is injected:
                del namespace[name]
        namespace.update(fresh)
        namespace.pop(VALUE_NAME, None)
        session._injected = fresh
        return namespace

    def _failure(self, exc: BaseException) -> Outcome:
        kind = error_type_name(exc)
        try:
            add_name_hint(exc, self.tools)
            text, truncated = format_snippet_error(exc, self.code, self.policy.max_output_bytes)
        except ExecutionInterrupted:
            raise
        except BaseException:
            text, truncated = kind, False
        return Outcome(error=text, error_type=kind, error_truncated=truncated)


def _run_async(code: CodeType, namespace: dict[str, Any]) -> None:
    """Run a top-level-await snippet in an event loop of this thread."""
    control = current_control()
    assert control is not None
    coroutine = eval(code, namespace)
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_on_loop_exception)
    try:
        task = loop.create_task(coroutine)
        control.attach_loop(loop, task)
        loop.run_until_complete(task)
    finally:
        try:
            if not control.stop and not loop.is_running():
                _cancel_remaining(loop)  # tasks the snippet left behind, like asyncio.run
        finally:
            _close_loop(control, loop)


def _on_loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The snippet loop's exception handler: errors of callbacks are the snippet's own.

    A callback swallows every exception it raises (the loop hands it here), the stop
    included: stop the loop then, so that ``run_until_complete`` returns and the stop
    reaches :func:`_run_async` (else each task that gets it just ends, and the rest go
    on: G4, 50 busy tasks kept the thread, and the GIL, for seconds).
    """
    if isinstance(context.get("exception"), ExecutionInterrupted):
        loop.stop()


def _close_loop(control: Control, loop: asyncio.AbstractEventLoop) -> None:
    """Close the snippet's loop in ``HOST`` state, where no stop can cut it half-way.

    Raises :class:`ExecutionInterrupted` afterwards if the execution was stopped.
    Coroutines of the snippet still suspended in the loop's tasks are left to the
    garbage collector: their ``_alive_.running`` checks stop them wherever they are closed.
    """
    while True:
        try:
            control.shelter()
            break
        except ExecutionInterrupted:
            continue
    try:
        control.detach_loop()
        if loop.is_running():  # the stop cut run_forever's own clean-up short
            asyncio.events._set_running_loop(None)
            with contextlib.suppress(AttributeError):
                loop._thread_id = None  # type: ignore[attr-defined]
        with contextlib.suppress(RuntimeError):  # a loop implementation we cannot reset
            loop.close()
    finally:
        control.leave_host()


def _cancel_remaining(loop: asyncio.AbstractEventLoop) -> None:
    try:
        tasks = asyncio.all_tasks(loop)
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    except Exception:
        pass


_MARK = "_ptcbox_routes_snippet_threads"


def _wrap_showwarning(previous: Callable[..., Any]) -> Callable[..., Any]:
    def showwarning(  # noqa: PLR0917 - the signature of warnings.showwarning
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        control = current_control()
        if control is not None and file is None and control.stderr is not None:
            text = warnings.formatwarning(message, category, filename, lineno, line)
            control.stderr.write(text)
            return
        previous(message, category, filename, lineno, file, line)

    setattr(showwarning, _MARK, True)
    return showwarning


def _wrap_unraisablehook(previous: Callable[[Any], Any]) -> Callable[[Any], Any]:
    # entered through a generator (_unraisable): a stop pending in the thread cannot
    # break the hook and print "Exception ignored in sys.unraisablehook" to the host
    def unraisablehook(unraisable: Any) -> None:
        exc = unraisable.exc_value
        if isinstance(exc, ExecutionInterrupted) or (
            not _QUIET_REFUSALS_OFF and _refused_by_alive_check(exc)
        ):
            return  # a finalizer of the snippet, stopped with it or after it
        control = current_control()
        if control is not None and control.stderr is not None and exc is not None:
            control.stderr.write(f"Exception ignored in a finalizer: {describe_exception(exc)}\n")
            return
        previous(unraisable)

    return make_unraisablehook(unraisablehook, ExecutionInterrupted, {_MARK: True})


def _refused_by_alive_check(exc: BaseException | None) -> bool:
    """Snippet code the garbage collector started after its execution (``ALIVE_ATTR``);
    a ``NameError`` once its globals are cleared (red-team R5)."""
    if type(exc) is NameError:
        return exc.name == ALIVE_NAME
    return (
        type(exc) is AttributeError and exc.name == ALIVE_ATTR and type(exc.obj) is threading.local
    )


def install_hooks() -> None:
    """Route warnings and ignored finalizer errors of snippet threads to their stderr,
    and guard the standard library's caches against snippets (once per process).

    Wraps ``warnings.showwarning`` and ``sys.unraisablehook`` (again whenever someone
    replaced them, e.g. ``warnings.catch_warnings``); each wrapper keeps its own
    previous hook, to which every other thread's warnings and errors go unchanged.
    """
    install_cache_guards()  # the stdlib caches snippets reach: see _cacheguards
    if not getattr(warnings.showwarning, _MARK, False):
        warnings.showwarning = _wrap_showwarning(warnings.showwarning)
    if not getattr(sys.unraisablehook, _MARK, False):
        sys.unraisablehook = _wrap_unraisablehook(sys.unraisablehook)

"""Tool-call spans that are the current span while the host tool runs.

:class:`TracedProjection` wraps a tool of a traced execution
(:meth:`ptcbox._tracing.ExecutionSpan.traced`). It asks the runtime for the call's scope
(``call_scope``, see :mod:`ptcbox.runtimes._shared._clock`): the span is started as a
child of the ``ptcbox.execute`` span and made current in the context the tool runs in
(the thread of a sync tool, the task of an async one), so spans the tool creates itself
(an HTTP client's) nest under it. An approval wrapped inside is part of the span (its
wait included); the span's ``ptcbox.tool.argument_bytes`` are those of the arguments the
tool got. Calls that never reach the tool (argument errors, call limits) get their spans
from the execution's records instead (:meth:`~ptcbox._tracing.ExecutionSpan.finish`).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any

from ptcbox._tracing import fail, set_attributes, size_of
from ptcbox.projections import ToolProjection, binder_for
from ptcbox.runtimes._shared._clock import CallScope, current_call
from ptcbox.runtimes._shared._host import runs_on_loop

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from ptcbox._tracing import ExecutionSpan

__all__ = ["TracedProjection", "traced_namespace"]

_perf = time.perf_counter


class TracedProjection:
    """A projection whose calls are spans, current while the wrapped tool runs.

    Args:
        projection: The tool as the code calls it.
        execution: The execution's span (the parent of each call's span).
    """

    __slots__ = ("_execution", "_projection", "is_async", "signature")
    call_scope = True

    def __init__(self, projection: ToolProjection, execution: ExecutionSpan) -> None:
        self._projection = projection
        self._execution = execution
        self.signature = binder_for(projection).signature
        self.is_async = runs_on_loop(projection)

    @property
    def name(self) -> str:
        """The wrapped tool's name."""
        return self._projection.name

    @property
    def doc(self) -> str | None:
        """The wrapped tool's documentation."""
        return self._projection.doc

    def __call__(self, **kwargs: Any) -> Any:
        """Call the wrapped tool inside its span (a coroutine for an async tool)."""
        scope = current_call()
        if scope is None:  # a runtime without scopes: the spans come from the records
            return self._projection(**kwargs)
        span = self._execution.start_call(scope.index, self.name)
        if span is None:  # the execution has ended: no parent left
            return self._projection(**kwargs)
        from opentelemetry.trace import use_span  # noqa: PLC0415 - present: span is set

        started = _perf()
        try:
            with use_span(span, end_on_exit=False):
                result = self._projection(**kwargs)
        except BaseException as exc:
            _end(span, scope, kwargs, started, exc=exc)
            raise
        if type(result) is not str and inspect.isawaitable(result):
            return self._wait(span, scope, kwargs, started, result)
        _end(span, scope, kwargs, started, result=result)
        return result

    async def _wait(
        self,
        span: Span,
        scope: CallScope,
        kwargs: dict[str, Any],
        started: float,
        awaitable: Awaitable[Any],
    ) -> Any:
        from opentelemetry.trace import use_span  # noqa: PLC0415

        try:
            with use_span(span, end_on_exit=False):
                result = await awaitable
        except BaseException as exc:
            _end(span, scope, kwargs, started, exc=exc)
            raise
        _end(span, scope, kwargs, started, result=result)
        return result


def _end(
    span: Span,
    scope: CallScope,
    kwargs: dict[str, Any],
    started: float,
    *,
    result: Any = None,
    exc: BaseException | None = None,
) -> None:
    """End a call's span with its outcome and sizes (never the contents)."""
    edited = scope.arguments
    set_attributes(
        span,
        {
            "ptcbox.tool.ok": exc is None,
            "ptcbox.tool.duration_s": _perf() - started,
            "ptcbox.tool.argument_bytes": size_of(kwargs if edited is None else edited),
            "ptcbox.tool.result_bytes": None if exc is not None else size_of(result),
            "ptcbox.tool.arguments_edited": edited is not None or None,
        },
    )
    if exc is not None:
        fail(span, exc)
    span.end()


def traced_namespace(
    execution: ExecutionSpan, namespace: Mapping[str, ToolProjection]
) -> Mapping[str, ToolProjection]:
    """``namespace`` with every tool wrapped in a :class:`TracedProjection`, when the
    execution is traced (else ``namespace`` itself)."""
    if not execution.active:
        return namespace
    return {name: TracedProjection(projection, execution) for name, projection in namespace.items()}

"""OpenTelemetry spans for executions, tool calls, agent runs and model calls.

Used only when ``opentelemetry-api`` is importable (``ptcbox[tracing]``; several SDKs
bring it along); without it every helper is a no-op and nothing is imported. With the
API present but no tracer provider set, OpenTelemetry's own no-op tracer makes the spans
free. Attribute names follow the GenAI semantic conventions where they exist
(``gen_ai.operation.name``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``error.type``); ptcbox's own are under
``ptcbox.*``. Argument and result *contents* are never recorded, only their sizes.

Span tree of one agent run that calls ``run_code``::

    invoke_agent                       ptcbox.agent.steps, stop_reason, usage
      chat <model>                     one per model request
      execute_tool run_code            gen_ai.tool.name, gen_ai.tool.call.id
        ptcbox.execute                 runtime, policy, outcome, output bytes, tool calls
          execute_tool get_expenses    one per call the code made, ok, argument bytes

The per-call spans are built from the runtime's ``on_tool_call`` records (start = end -
duration), so they are exact in time but are not the current span while the tool runs.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ptcbox._jsonable import to_jsonable
from ptcbox._result import CodeResult, ToolCallRecord

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

__all__ = ["ExecutionSpan", "span", "tracer"]

_missing = False  # set once ``opentelemetry`` failed to import


def tracer() -> Tracer | None:
    """ptcbox's tracer from the current global provider; ``None`` without the API."""
    global _missing
    if _missing:
        return None
    try:
        from opentelemetry import trace  # noqa: PLC0415 - optional, imported when used
    except ImportError:
        _missing = True
        return None
    return trace.get_tracer("ptcbox")


@contextlib.contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[Span | None]:
    """A current span named ``name``; ``None`` without OpenTelemetry.

    An exception leaving the block is recorded (``error.type``, status ERROR) and
    re-raised; cancellation included.
    """
    current = tracer()
    if current is None:
        yield None
        return
    with current.start_as_current_span(
        name, attributes=_clean(attributes or {}), record_exception=False
    ) as active:
        try:
            yield active
        except BaseException as exc:
            fail(active, exc)
            raise


def fail(active: Span | None, exc: BaseException) -> None:
    """Mark ``active`` as failed with ``exc``'s type (no message: it may hold content)."""
    if active is None:
        return
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

    active.set_attribute("error.type", type(exc).__name__)
    active.set_status(Status(StatusCode.ERROR, type(exc).__name__))


def set_attributes(active: Span | None, attributes: Mapping[str, Any]) -> None:
    """Set attributes on ``active`` (``None`` values are skipped)."""
    if active is not None:
        active.set_attributes(_clean(attributes))


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, Sequence) and not isinstance(value, str):
            out[key] = [str(item) for item in value]
        elif isinstance(value, bool | int | float | str):
            out[key] = value
        else:
            out[key] = str(value)
    return out


def _error_type(record: ToolCallRecord) -> str | None:
    """The exception type of a failed call (``"PermissionError: ..."`` -> its name)."""
    if record.ok or not record.error:
        return None
    head = record.error.split(":", 1)[0].strip()
    return head if head.isidentifier() else "ToolError"


def _size(value: Any) -> int:
    try:
        return len(json.dumps(to_jsonable(value), ensure_ascii=False).encode())
    except (TypeError, ValueError):
        return 0


class ExecutionSpan:
    """The ``ptcbox.execute`` span of one execution, with a child span per tool call.

    Args:
        runtime: The runtime's class name (``"ThreadRuntime"``, ...).
        policy: Its sandbox policy, if known (``restricted`` and ``timeout`` are recorded).
        timeout: The execution's time limit in seconds, if any.

    Use :meth:`on_tool_call` as (or inside) the runtime's ``on_tool_call`` callback and
    call :meth:`finish` with the result; calls the code left running get their spans
    then, from the result's records.
    """

    def __init__(self, runtime: str, policy: object, timeout: float | None) -> None:
        current = tracer()
        self._span: Span | None = None
        self._reported = 0
        if current is None:
            return
        self._tracer = current
        self._span = current.start_span(
            "ptcbox.execute",
            attributes=_clean(
                {
                    "ptcbox.runtime": runtime,
                    "ptcbox.policy.restricted": getattr(policy, "restricted", None),
                    "ptcbox.policy.timeout_s": getattr(policy, "timeout", None),
                    "ptcbox.timeout_s": timeout,
                }
            ),
        )

    def wrap(
        self, callback: Callable[[ToolCallRecord], None] | None
    ) -> Callable[[ToolCallRecord], None] | None:
        """Return an ``on_tool_call`` callback that records spans, then calls ``callback``."""
        if self._span is None:
            return callback

        def observe(record: ToolCallRecord) -> None:
            self.on_tool_call(record)
            if callback is not None:
                callback(record)

        return observe

    def on_tool_call(self, record: ToolCallRecord, end_ns: int | None = None) -> None:
        """Record one finished tool call as a child span (start = end - duration)."""
        if self._span is None:
            return
        from opentelemetry import trace  # noqa: PLC0415

        self._reported += 1
        end = end_ns if end_ns is not None else time.time_ns()
        start = end - int(record.duration_s * 1e9)
        child = self._tracer.start_span(
            f"execute_tool {record.name}",
            context=trace.set_span_in_context(self._span),
            start_time=start,
            attributes=_clean(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": record.name,
                    "ptcbox.tool.ok": record.ok,
                    "ptcbox.tool.duration_s": record.duration_s,
                    "ptcbox.tool.argument_bytes": _size(record.arguments),
                    "error.type": _error_type(record),
                }
            ),
        )
        if not record.ok:
            from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

            child.set_status(Status(StatusCode.ERROR, "the tool failed"))
        child.end(end_time=end)

    def finish(self, result: CodeResult | None, error: BaseException | None = None) -> None:
        """End the span with the result's outcome (or the host error that stopped it)."""
        if self._span is None:
            return
        active, self._span = self._span, None
        if result is not None:
            pending = result.tool_calls[self._reported :]
            self._span, now = active, time.time_ns()
            for record in pending:  # left running, or reported after the result
                self.on_tool_call(record, end_ns=now)
            self._span = None
            outcome = "timeout" if result.timed_out else ("ok" if result.ok else "error")
            set_attributes(
                active,
                {
                    "ptcbox.outcome": outcome,
                    "error.type": result.error_type,
                    "ptcbox.duration_s": result.duration_s,
                    "ptcbox.output_bytes": len(result.stdout.encode())
                    + len(result.stderr.encode()),
                    "ptcbox.tool_calls": len(result.tool_calls),
                    "ptcbox.truncated": result.truncated,
                },
            )
            if not result.ok:
                from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

                active.set_status(Status(StatusCode.ERROR, result.error_type or "error"))
        if error is not None:
            fail(active, error)
        active.end()

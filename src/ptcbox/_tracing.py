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

Each call that reaches its tool gets a span that is the *current* span while the tool
runs (:mod:`ptcbox._tracing_calls`), so spans the tool makes (an HTTP client's) are its
children. Calls refused before the tool ran (argument errors, the call limit) get theirs
from the execution's records when it ends (end = when the record was reported, start =
end - duration).
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

__all__ = ["ExecutionSpan", "fail", "set_attributes", "size_of", "span", "tracer"]

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


def _key(record: ToolCallRecord) -> tuple[Any, ...]:
    """What tells a reported record from the same call's record in the result."""
    return (record.name, record.ok, record.error, record.duration_s)


def _error_type(record: ToolCallRecord) -> str | None:
    """The exception type of a failed call (``"PermissionError: ..."`` -> its name)."""
    if record.ok or not record.error:
        return None
    head = record.error.split(":", 1)[0].strip()
    return head if head.isidentifier() else "ToolError"


def size_of(value: Any) -> int:
    """Bytes of ``value`` as UTF-8 JSON (0 when it has no JSON form)."""
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

    Wrap the namespace with :func:`ptcbox._tracing_calls.traced_namespace` (each call
    that reaches its tool is then a span current while it runs), use :meth:`wrap` around
    the runtime's ``on_tool_call`` callback, and call :meth:`finish` with the result:
    the calls that never reached their tool get their spans then, from the records.
    """

    def __init__(self, runtime: str, policy: object, timeout: float | None) -> None:
        current = tracer()
        self._span: Span | None = None
        self._live: set[int] = set()  # calls whose span is made while the tool runs
        self._reported: dict[tuple[Any, ...], int] = {}  # record -> when reported (ns)
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

    @property
    def active(self) -> bool:
        """Whether spans are recorded (OpenTelemetry present, a recording provider set:
        without one, the tools are not wrapped and cost nothing more)."""
        return self._span is not None and self._span.is_recording()

    def start_call(self, index: int, name: str) -> Span | None:
        """Start the span of call ``index`` (its position in the result's records)."""
        if self._span is None:
            return None
        from opentelemetry import trace  # noqa: PLC0415

        self._live.add(index)
        return self._tracer.start_span(
            f"execute_tool {name}",
            context=trace.set_span_in_context(self._span),
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name},
        )

    def on_tool_call(self, record: ToolCallRecord) -> None:
        """Note when a call's record was reported (its span's end, if it had none live)."""
        if self._span is not None:
            self._reported.setdefault(_key(record), time.time_ns())

    def _record_span(self, record: ToolCallRecord, end_ns: int) -> None:
        """A child span for a call that never ran its tool (start = end - duration)."""
        assert self._span is not None
        from opentelemetry import trace  # noqa: PLC0415

        end = end_ns
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
                    "ptcbox.tool.argument_bytes": size_of(record.arguments),
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
        active = self._span
        if result is not None:
            now = time.time_ns()
            for index, record in enumerate(result.tool_calls):
                if index not in self._live:  # refused before its tool ran
                    self._record_span(record, self._reported.get(_key(record), now))
        self._span = None
        if result is not None:
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

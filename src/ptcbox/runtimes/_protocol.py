"""The :class:`CodeRuntime` protocol every runtime implements.

From the toolregistry ``runtimes`` design (``execute(code, namespace, *, timeout,
extra_globals) -> CodeResult``), extended compatibly with keyword-only observers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from ptcbox._result import CodeResult, ToolCallRecord
from ptcbox.projections import ToolProjection

__all__ = ["CodeRuntime", "OutputCallback", "ToolCallCallback"]

ToolCallCallback = Callable[[ToolCallRecord], None]
"""Called once per finished tool call (ok or failed), on the event loop that called
``execute``, in the order calls finish. Must not block."""

OutputCallback = Callable[[str, str], None]
"""Called as ``on_output(stream, text)`` with ``stream`` ``"stdout"`` or ``"stderr"`` for
each chunk the snippet writes (before any truncation), on the event loop that called
``execute``. Must not block."""


@runtime_checkable
class CodeRuntime(Protocol):
    """Runs snippets against a namespace of tools and returns a :class:`CodeResult`.

    Execution never raises for what the code does: syntax errors, exceptions, timeouts,
    limits and policy violations come back as ``CodeResult(return_code=1, ...)``.
    ``execute`` raises only for host misuse and lets cancellation propagate after
    cleaning up (no orphan process, thread or task).
    """

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
        """Run ``code`` with the tools of ``namespace``.

        Args:
            code: Python source written by a model.
            namespace: Tool name to projection; checked with ``validate_namespace``.
            timeout: Wall-clock limit in seconds; ``None`` uses the policy's default.
            extra_globals: More names for the snippet (JSON-compatible data for
                process-isolated runtimes); tools win on name clashes.
            on_tool_call: Observer of finished tool calls.
            on_output: Observer of output chunks as they are written. An observer that
                raises is reported to the loop's exception handler and the execution
                goes on (the result does not change).

        Returns:
            The frozen result.

        Raises:
            ValueError: If the namespace is malformed or ``timeout`` is not positive.
            RuntimeClosedError: If the runtime is closed.
        """
        ...

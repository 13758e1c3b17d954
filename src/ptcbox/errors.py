"""The ptcbox exception tree.

Errors are split by audience (the pydantic-ai convention): errors the *host developer*
sees are raised by ptcbox's API for misuse; errors the *snippet* sees are raised inside
model-written code and come back to the host as a failed :class:`~ptcbox.CodeResult`
(``return_code=1``, ``error_type`` set to the class name), never as an exception.

```
Exception
└── PtcboxError                      base of everything ptcbox raises
    ├── RuntimeClosedError           host: execute() on a closed runtime or session
    ├── SessionEndedError            host: execute() on a session whose worker is gone
    ├── PolicyViolation              snippet: the sandbox policy refused the code
    ├── LimitExceeded                snippet: a policy limit was hit (limit, observed, unit)
    │   ├── ToolCallLimitExceeded    max_tool_calls
    │   ├── MemoryLimitExceeded      max_memory_bytes
    │   ├── CPUTimeLimitExceeded     max_cpu_seconds
    │   ├── OutputLimitExceeded      max_output_bytes, written far past (a print flood)
    │   └── ArithmeticLimitExceeded  a power/shift/repetition whose result is too large
    ├── ToolError                    snippet: a tool failed (mixed into the tool's own type)
    ├── WorkerCrashed                snippet: the worker process died (signal, exit code)
    └── WireProtocolError            snippet: a malformed or oversized IPC message
```

Timeouts are reported as ``CodeResult(timed_out=True, error_type="TimeoutError")``.
"""

from __future__ import annotations

import contextlib
import signal as _signal

__all__ = [
    "ArithmeticLimitExceeded",
    "CPUTimeLimitExceeded",
    "CodeSizeLimitExceeded",
    "LimitExceeded",
    "MemoryLimitExceeded",
    "OutputLimitExceeded",
    "PolicyViolation",
    "PtcboxError",
    "RuntimeClosedError",
    "SessionEndedError",
    "ToolCallLimitExceeded",
    "ToolError",
    "WireProtocolError",
    "WorkerCrashed",
]


class PtcboxError(Exception):
    """Base class of every exception ptcbox raises."""


class RuntimeClosedError(PtcboxError):
    """``execute()`` was called on a runtime or session that is closed.

    Args:
        what: What was closed, e.g. ``"ThreadRuntime"`` or ``"session"``.
    """

    def __init__(self, what: str = "runtime") -> None:
        self.what = what
        super().__init__(f"{what} is closed; create a new one to execute code")


class SessionEndedError(PtcboxError):
    """A session can no longer run code because its worker ended.

    Args:
        reason: Why the session ended (timeout, crash, ...).
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"the session ended: {reason}; start a new session")


class PolicyViolation(PtcboxError):
    """The sandbox policy refused the snippet (at compile time or at run time).

    Args:
        message: What was refused and why, in words a model can act on.
    """

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class LimitExceeded(PtcboxError):
    """A policy limit was exceeded.

    Args:
        limit_name: The policy field, e.g. ``"max_tool_calls"``.
        limit: The configured limit.
        observed: What the snippet reached or asked for (may equal ``limit + 1``).
        unit: Unit of ``limit`` and ``observed``, e.g. ``"calls"``, ``"bytes"``, ``"bits"``.
    """

    def __init__(self, limit_name: str, limit: float, observed: float, unit: str) -> None:
        self.limit_name = limit_name
        self.limit = limit
        self.observed = observed
        self.unit = unit
        super().__init__(
            f"{limit_name} exceeded: {_fmt(observed)} {unit} > limit {_fmt(limit)} {unit}"
        )


class CodeSizeLimitExceeded(LimitExceeded):
    """The snippet is longer than ``SandboxPolicy.max_code_chars`` allows; it did not run.

    Compiling is one C call that no time limit interrupts, and ``ThreadRuntime``
    compiles in the host process, where it holds the GIL (and so blocks the host's
    event loop) for as long as it takes: seconds for a few hundred kilobytes of some
    expressions. The limit bounds that.

    Args:
        limit: The policy's ``max_code_chars``.
        observed: The snippet's length, in characters.
    """

    def __init__(self, limit: int, observed: int) -> None:
        super().__init__("max_code_chars", limit, observed, "characters")


class ToolCallLimitExceeded(LimitExceeded):
    """The snippet made more tool calls than ``SandboxPolicy.max_tool_calls`` allows."""

    def __init__(self, limit: int, observed: int) -> None:
        super().__init__("max_tool_calls", limit, observed, "calls")


class MemoryLimitExceeded(LimitExceeded):
    """The snippet used more memory than ``SandboxPolicy.max_memory_bytes`` allows."""

    def __init__(self, limit: int, observed: int) -> None:
        super().__init__("max_memory_bytes", limit, observed, "bytes")


class CPUTimeLimitExceeded(LimitExceeded):
    """The snippet used more CPU time than ``SandboxPolicy.max_cpu_seconds`` allows.

    Args:
        limit: The configured limit, in CPU seconds.
        observed: The CPU seconds (user + system) the worker process had used.
    """

    def __init__(self, limit: float, observed: float) -> None:
        super().__init__("max_cpu_seconds", limit, observed, "seconds")


class OutputLimitExceeded(LimitExceeded):
    """The snippet kept writing output far past ``SandboxPolicy.max_output_bytes``.

    Output over the cap is only truncated (head and tail kept); an execution that writes
    several times the cap to one stream is stopped with this error (a runaway print loop
    would otherwise run to the timeout).

    Args:
        limit: The policy's ``max_output_bytes``.
        observed: Bytes written to the stream when the execution was stopped.
    """

    def __init__(self, limit: int, observed: int) -> None:
        super().__init__("max_output_bytes", limit, observed, "bytes")


class ArithmeticLimitExceeded(LimitExceeded):
    """An operation would build a result larger than the policy allows.

    Raised before the work starts, e.g. for ``10 ** (10 ** 8)`` or ``"a" * 10 ** 10``.

    Args:
        operation: The operator, e.g. ``"**"``, ``"<<"``, ``"*"``.
        limit: The largest result allowed.
        observed: The estimated size of the result.
        unit: ``"bits"`` for integers, ``"items"`` for sequences.
    """

    def __init__(self, operation: str, limit: int, observed: int, unit: str) -> None:
        self.operation = operation
        super().__init__(f"result size of {operation!r}", limit, observed, unit)


class ToolError(PtcboxError):
    """A tool failed. Raised inside the snippet, where it can be caught.

    A tool's exception reaches the snippet as its own type that is also a ``ToolError``
    (``KeyError`` and ``ToolError`` in one class, see
    ``ptcbox.runtimes._shared._tool_errors``), so ``except KeyError`` and
    ``except ToolError`` both catch it; ``tool_name`` and ``message`` are set on it.

    Args:
        tool_name: The tool that failed.
        message: The tool's own error message (``"ValueError: unknown employee e9"``).
    """

    def __init__(self, tool_name: str, message: str) -> None:
        self.tool_name = tool_name
        self.message = message
        super().__init__(f"tool {tool_name!r} failed: {message}")

    def __reduce__(self) -> tuple[type[ToolError], tuple[str, str]]:
        return (type(self), (self.tool_name, self.message))


class WorkerCrashed(PtcboxError):
    """The worker process running the snippet died.

    Args:
        signal_number: The signal that killed it, if any (e.g. 9 for SIGKILL).
        exit_code: Its exit status, if it exited.
        detail: Extra context, e.g. ``"broken pipe while reading the result"``.
    """

    def __init__(
        self, signal_number: int | None = None, exit_code: int | None = None, detail: str = ""
    ) -> None:
        self.signal_number = signal_number
        self.exit_code = exit_code
        self.detail = detail
        if signal_number is not None:
            how = f"killed by signal {signal_number}"
            with contextlib.suppress(ValueError):
                how += f" ({_signal.Signals(signal_number).name})"
        elif exit_code is not None:
            how = f"exited with status {exit_code}"
        else:
            how = "died"
        super().__init__(f"the worker process {how}" + (f": {detail}" if detail else ""))


class WireProtocolError(PtcboxError):
    """A message between host and worker was malformed, unknown or too large.

    Args:
        message: What was wrong with the message.
    """

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


def _fmt(value: float) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}"

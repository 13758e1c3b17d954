"""ptcbox: programmatic tool calling.

A model writes one Python snippet that calls many tools; ptcbox runs it in a sandbox
(a thread, or a separate process) under a timeout and returns one frozen
:class:`CodeResult`.
"""

from ptcbox._execute import aexecute, execute
from ptcbox._result import CodeResult, ToolCallRecord
from ptcbox._toolset import resolve_tools
from ptcbox.errors import (
    ArithmeticLimitExceeded,
    LimitExceeded,
    MemoryLimitExceeded,
    PolicyViolation,
    PtcboxError,
    RuntimeClosedError,
    SessionEndedError,
    ToolCallLimitExceeded,
    ToolError,
    WireProtocolError,
    WorkerCrashed,
)
from ptcbox.projections import DirectProjection, ToolProjection, validate_namespace
from ptcbox.runtimes import CodeRuntime, SubprocessRuntime, ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

__all__ = [
    "ArithmeticLimitExceeded",
    "CodeResult",
    "CodeRuntime",
    "DirectProjection",
    "LimitExceeded",
    "MemoryLimitExceeded",
    "PolicyViolation",
    "PtcboxError",
    "RuntimeClosedError",
    "SandboxPolicy",
    "SessionEndedError",
    "SubprocessRuntime",
    "ThreadRuntime",
    "ToolCallLimitExceeded",
    "ToolCallRecord",
    "ToolError",
    "ToolProjection",
    "WireProtocolError",
    "WorkerCrashed",
    "aexecute",
    "execute",
    "resolve_tools",
    "validate_namespace",
]

"""ptcbox: programmatic tool calling.

A model writes one Python snippet that calls many tools; ptcbox runs it in a sandbox
(a thread, or a separate process) under a timeout and returns one frozen
:class:`CodeResult`.
"""

from ptcbox._execute import aexecute, execute
from ptcbox._result import CodeResult, ToolCallRecord
from ptcbox._toolset import resolve_tools
from ptcbox.errors import PtcboxError, ToolError
from ptcbox.projections import DirectProjection, ToolProjection, validate_namespace
from ptcbox.runtimes import CodeRuntime, ThreadRuntime

__all__ = [
    "CodeResult",
    "CodeRuntime",
    "DirectProjection",
    "PtcboxError",
    "ThreadRuntime",
    "ToolCallRecord",
    "ToolError",
    "ToolProjection",
    "aexecute",
    "execute",
    "resolve_tools",
    "validate_namespace",
]

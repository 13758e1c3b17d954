"""ptcbox: programmatic tool calling.

A model writes one Python snippet that calls many tools; ptcbox runs it in a sandbox
(a thread, or a separate process) under a timeout and returns one frozen
:class:`CodeResult`.
"""

from ptcbox._execute import aexecute, execute
from ptcbox._result import CodeResult, ToolCallRecord
from ptcbox._toolset import resolve_tools
from ptcbox.agent_glue import (
    Agent,
    AgentRunResult,
    AnthropicProvider,
    OpenAIChatProvider,
    OpenAIResponsesProvider,
    RunCodeTool,
    ScriptedProvider,
    StepResult,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
    repair_tool_history,
    step,
    tool,
)
from ptcbox.errors import (
    ArithmeticLimitExceeded,
    CodeSizeLimitExceeded,
    CPUTimeLimitExceeded,
    LimitExceeded,
    MemoryLimitExceeded,
    OutputLimitExceeded,
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
    "Agent",
    "AgentRunResult",
    "AnthropicProvider",
    "ArithmeticLimitExceeded",
    "CPUTimeLimitExceeded",
    "CodeResult",
    "CodeRuntime",
    "CodeSizeLimitExceeded",
    "DirectProjection",
    "LimitExceeded",
    "MemoryLimitExceeded",
    "OpenAIChatProvider",
    "OpenAIResponsesProvider",
    "OutputLimitExceeded",
    "PolicyViolation",
    "PtcboxError",
    "RunCodeTool",
    "RuntimeClosedError",
    "SandboxPolicy",
    "ScriptedProvider",
    "SessionEndedError",
    "StepResult",
    "SubprocessRuntime",
    "ThreadRuntime",
    "Tool",
    "ToolCallLimitExceeded",
    "ToolCallRecord",
    "ToolContext",
    "ToolError",
    "ToolProjection",
    "ToolRegistry",
    "ToolResult",
    "WireProtocolError",
    "WorkerCrashed",
    "aexecute",
    "execute",
    "repair_tool_history",
    "resolve_tools",
    "step",
    "tool",
    "validate_namespace",
]

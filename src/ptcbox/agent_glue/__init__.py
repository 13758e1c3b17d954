"""Agent glue: tools for models, ``run_code``, ``step`` and the agent loop.

- Tools: :func:`tool`, :class:`Tool`, :class:`ToolResult`, :class:`ToolContext`,
  :class:`ToolRegistry` (schemas for OpenAI Chat Completions, Responses, Anthropic).
- Programmatic tool calling: :class:`RunCodeTool` (tools as Python stubs in its
  description; results are ``CodeResult.render()``), :func:`render_stubs`,
  :func:`count_tokens`.
- One turn: :func:`step` / :class:`StepResult` (the kosong design); the loop:
  :class:`Agent` with events, hooks, interrupts and queued user messages.
- Models: :class:`OpenAIChatProvider` and :class:`OpenAIResponsesProvider` (the
  official ``openai`` SDK, any compatible endpoint), :class:`AnthropicProvider` (the
  ``anthropic`` SDK, extra ``ptcbox[anthropic]``), :class:`ScriptedProvider` and
  :class:`ScriptedOpenAIServer` (scripted, for tests, demos and benchmarks; the server
  speaks all three APIs).
- History: :func:`repair_tool_history` (applied before every request).
- Approvals for the tool calls code makes: ``RunCodeTool(approve=hook)`` with
  :class:`ApprovalRequest`, :class:`Approve`, :class:`Deny`; ``Tool(requires_approval=True)``.
"""

from ptcbox.agent_glue._agent import Agent
from ptcbox.agent_glue._anthropic import AnthropicProvider
from ptcbox.agent_glue._approval import (
    ApprovalDecision,
    ApprovalHook,
    ApprovalRequest,
    Approve,
    Deny,
    approval_from_hook,
)
from ptcbox.agent_glue._context import ToolContext
from ptcbox.agent_glue._events import (
    AfterToolCall,
    AgentEnd,
    AgentEvent,
    AgentRunResult,
    AgentStart,
    BeforeToolCall,
    BlockToolCall,
    MessageDelta,
    StopReason,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from ptcbox.agent_glue._history import ToolHistoryRepair, repair_tool_history
from ptcbox.agent_glue._messages import Message, ToolCall, Usage
from ptcbox.agent_glue._openai import OpenAIChatProvider
from ptcbox.agent_glue._openai_server import ScriptedOpenAIServer
from ptcbox.agent_glue._provider import (
    ChatProvider,
    ChatProviderError,
    ChatRequest,
    StreamedMessage,
    StreamedPart,
    TextPart,
    ToolCallPart,
)
from ptcbox.agent_glue._registry import ToolRegistry, Toolset
from ptcbox.agent_glue._responses import OpenAIResponsesProvider
from ptcbox.agent_glue._run_code import RunCodeTool
from ptcbox.agent_glue._schemas import SchemaFormat, ToolDefinition
from ptcbox.agent_glue._scripted import (
    ScriptedError,
    ScriptedProvider,
    ScriptedStreamFault,
    ScriptedTurn,
    StreamFault,
)
from ptcbox.agent_glue._step import StepResult, step
from ptcbox.agent_glue._tokens import count_request_tokens
from ptcbox.agent_glue._tool import Tool, tool
from ptcbox.agent_glue._tool_result import ToolResult
from ptcbox.projections._stubs import count_tokens, render_stubs

__all__ = [
    "AfterToolCall",
    "Agent",
    "AgentEnd",
    "AgentEvent",
    "AgentRunResult",
    "AgentStart",
    "AnthropicProvider",
    "ApprovalDecision",
    "ApprovalHook",
    "ApprovalRequest",
    "Approve",
    "BeforeToolCall",
    "BlockToolCall",
    "ChatProvider",
    "ChatProviderError",
    "ChatRequest",
    "Deny",
    "Message",
    "MessageDelta",
    "OpenAIChatProvider",
    "OpenAIResponsesProvider",
    "RunCodeTool",
    "SchemaFormat",
    "ScriptedError",
    "ScriptedOpenAIServer",
    "ScriptedProvider",
    "ScriptedStreamFault",
    "ScriptedTurn",
    "StepResult",
    "StopReason",
    "StreamFault",
    "StreamedMessage",
    "StreamedPart",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolCallPart",
    "ToolContext",
    "ToolDefinition",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolHistoryRepair",
    "ToolRegistry",
    "ToolResult",
    "Toolset",
    "TurnEnd",
    "TurnStart",
    "Usage",
    "approval_from_hook",
    "count_request_tokens",
    "count_tokens",
    "render_stubs",
    "repair_tool_history",
    "step",
    "tool",
]

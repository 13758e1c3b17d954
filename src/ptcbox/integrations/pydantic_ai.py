"""pydantic-ai: a toolset that gives a pydantic-ai ``Agent`` the ``run_code`` tool.

Install with ``pip install 'ptcbox[pydantic-ai]'``. Example::

    from pydantic_ai import Agent
    from ptcbox import RunCodeTool
    from ptcbox.integrations.pydantic_ai import run_code_toolset

    async with RunCodeTool([get_expenses, get_budget]) as run_code:
        agent = Agent("openai:gpt-4.1-mini", toolsets=[run_code_toolset(run_code)])
        result = await agent.run("Which engineers went over their Q3 travel budget?")

The tool's description is refreshed before every model request (a tool registered in
the ``RunCodeTool``'s registry later shows up in the stubs). pydantic-ai-harness's
``CodeMode`` takes no sandbox other than Monty (its ``monty_sandbox`` is a Monty
websocket), so ptcbox offers this toolset instead of a CodeMode backend.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset

from ptcbox.agent_glue import RunCodeTool
from ptcbox.integrations._common import require_run_code, run_code_text

__all__ = ["run_code_toolset"]


def run_code_toolset(run_code: RunCodeTool) -> FunctionToolset[Any]:
    """Build a pydantic-ai toolset holding the one ``run_code`` tool.

    Args:
        run_code: The ptcbox tool (its tools, runtime, policy and time limit apply).

    Returns:
        A ``FunctionToolset`` for ``Agent(toolsets=[...])``; the tool is named
        ``run_code.name``, takes ``code`` and an optional ``timeout`` (seconds) and
        returns ``CodeResult.render()``.

    Raises:
        TypeError: If ``run_code`` is not a :class:`RunCodeTool`.
    """
    require_run_code(run_code, "run_code_toolset")

    async def run(ctx: RunContext[Any], code: str, timeout: float | None = None) -> str:
        arguments: dict[str, Any] = {"code": code}
        if timeout is not None:
            arguments["timeout"] = timeout
        return await run_code_text(run_code, arguments, ctx.tool_call_id or "")

    async def refresh(ctx: RunContext[Any], definition: ToolDefinition) -> ToolDefinition:
        return dataclasses.replace(
            definition, description=run_code.description, parameters_json_schema=run_code.parameters
        )

    tool: Tool[Any] = Tool(
        run,
        takes_ctx=True,
        name=run_code.name,
        description=run_code.description,
        prepare=refresh,
    )
    return FunctionToolset([tool])

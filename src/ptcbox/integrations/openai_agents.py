"""OpenAI Agents SDK: a ``FunctionTool`` for ``run_code``.

Install with ``pip install 'ptcbox[openai-agents]'``. Example::

    from agents import Agent, Runner
    from ptcbox import RunCodeTool
    from ptcbox.integrations.openai_agents import run_code_tool

    async with RunCodeTool([get_expenses, get_budget]) as run_code:
        agent = Agent(name="analyst", instructions="Use run_code.", tools=[run_code_tool(run_code)])
        result = await Runner.run(agent, "Which engineers went over their Q3 travel budget?")
"""

from __future__ import annotations

from typing import Any

from agents import FunctionTool
from agents.tool_context import ToolContext

from ptcbox.agent_glue import RunCodeTool
from ptcbox.integrations._common import require_run_code, run_code_text

__all__ = ["run_code_tool"]


def run_code_tool(run_code: RunCodeTool, *, needs_approval: bool = False) -> FunctionTool:
    """Build an Agents SDK ``FunctionTool`` that runs model-written code with ptcbox.

    Args:
        run_code: The ptcbox tool (its tools, runtime, policy and time limit apply).
        needs_approval: Ask the SDK's human-in-the-loop flow before each ``run_code``
            call (``FunctionTool.needs_approval``).

    Returns:
        The tool: ``run_code.name``, its description (tools as Python stubs), its JSON
        schema (``code``, optional ``timeout`` in seconds; not strict, since ``timeout``
        is optional), answering with ``CodeResult.render()``. Malformed arguments come
        back as an error text, never as an exception.

    Raises:
        TypeError: If ``run_code`` is not a :class:`RunCodeTool`.
    """
    require_run_code(run_code, "run_code_tool")

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        return await run_code_text(run_code, arguments, context.tool_call_id)

    return FunctionTool(
        name=run_code.name,
        description=run_code.description,
        params_json_schema=run_code.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=False,
        needs_approval=needs_approval,
    )

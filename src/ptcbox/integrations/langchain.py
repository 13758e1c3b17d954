"""LangChain: a ``StructuredTool`` for ``run_code`` (needs only ``langchain-core``).

Install with ``pip install 'ptcbox[langchain]'``. Example::

    from ptcbox import RunCodeTool
    from ptcbox.integrations.langchain import run_code_tool

    async with RunCodeTool([get_expenses, get_budget]) as run_code:
        tool = run_code_tool(run_code)
        model = chat_model.bind_tools([tool])          # any tool-calling chat model
        ai = await model.ainvoke(messages)
        for call in ai.tool_calls:
            messages.append(await tool.ainvoke(call))  # a ToolMessage

``ainvoke`` runs on your event loop; ``invoke`` (sync) runs on ptcbox's private loop, as
``ptcbox.execute()`` does, so it is safe in Jupyter. Use one of the two per
``RunCodeTool``: its runtime lives on the loop it was first used on.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import StructuredTool

from ptcbox._execute import run_blocking
from ptcbox._result import CodeResult
from ptcbox.agent_glue import RunCodeTool
from ptcbox.integrations._common import require_run_code

__all__ = ["run_code_tool"]


def run_code_tool(run_code: RunCodeTool) -> StructuredTool:
    """Build a LangChain ``StructuredTool`` that runs model-written code with ptcbox.

    Args:
        run_code: The ptcbox tool (its tools, runtime, policy and time limit apply).

    Returns:
        The tool: ``run_code.name``, its description (tools as Python stubs) and its JSON
        schema as ``args_schema`` (``code``, optional ``timeout`` in seconds), answering
        with ``CodeResult.render()`` as content and the :class:`~ptcbox.CodeResult` as
        the ``ToolMessage``'s artifact (``None`` when the arguments were invalid); sync
        (``invoke``) and async (``ainvoke``).

    Raises:
        TypeError: If ``run_code`` is not a :class:`RunCodeTool`.
    """
    require_run_code(run_code, "run_code_tool")

    async def arun(code: str, timeout: float | None = None) -> tuple[str, CodeResult | None]:
        arguments: dict[str, Any] = {"code": code}
        if timeout is not None:
            arguments["timeout"] = timeout
        result = await run_code.execute(arguments)
        output = result.output if isinstance(result.output, CodeResult) else None
        return result.content, output

    def run(code: str, timeout: float | None = None) -> tuple[str, CodeResult | None]:
        return run_blocking(lambda _where: arun(code, timeout))

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=run_code.name,
        description=run_code.description,
        args_schema=run_code.parameters,
        response_format="content_and_artifact",
    )

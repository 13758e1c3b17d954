"""What every framework adapter shares: checking the ``RunCodeTool`` and running a call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ptcbox.agent_glue import RunCodeTool

__all__ = ["require_run_code", "run_code_text"]


def require_run_code(run_code: object, adapter: str) -> RunCodeTool:
    """Return ``run_code`` if it is a :class:`RunCodeTool`.

    Raises:
        TypeError: Otherwise, saying how to make one.
    """
    if not isinstance(run_code, RunCodeTool):
        raise TypeError(
            f"{adapter}() takes a ptcbox RunCodeTool, got {type(run_code).__name__}; "
            "wrap your tools first: `async with RunCodeTool(tools) as run_code: ...`"
        )
    return run_code


async def run_code_text(
    run_code: RunCodeTool, arguments: str | Mapping[str, Any], tool_call_id: str = ""
) -> str:
    """Run one ``run_code`` call and return the text the model reads.

    Args:
        run_code: The tool.
        arguments: JSON text as the model wrote it, or the decoded mapping.
        tool_call_id: The framework's call id, if it has one.

    Returns:
        ``CodeResult.render()`` (output, value, errors); invalid arguments come back as
        an ``"Error: ..."`` text the model can act on. Never raises for what the code does.
    """
    result = await run_code.execute(arguments, tool_call_id=tool_call_id)
    return result.content

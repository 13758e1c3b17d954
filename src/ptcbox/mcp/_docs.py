"""The docstring an MCP tool gets in the stubs (Google style, parsed by ``render_stubs``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ptcbox.mcp._schema import MCPParam, result_wrapper

__all__ = ["UNKNOWN_SHAPE", "tool_doc"]

UNKNOWN_SHAPE = (
    "The server declares no output schema, so the shape is unknown (often text). Print a "
    "sample first, e.g. print(repr(value)[:500]), before relying on its fields."
)
"""What the stub says when a tool has no ``outputSchema`` (a bare ``-> Any`` makes models
guess field names; a peer measured ~28k extra input tokens from that)."""


def tool_doc(
    description: str | None,
    *,
    mcp_name: str,
    python_name: str,
    params: tuple[MCPParam, ...],
    output_schema: Mapping[str, Any] | None,
) -> str:
    """Build the docstring of one MCP tool.

    Args:
        description: The tool's ``description`` from the server.
        mcp_name: Its name on the server.
        python_name: Its name in the snippet.
        params: Its parameters (descriptions become the ``Args:`` section).
        output_schema: Its output schema, or ``None``.

    Returns:
        The docstring text (summary, origin, ``Args:``, ``Returns:``).
    """
    text = (description or "").strip() or f"The MCP tool {mcp_name!r}."
    summary, _, rest = text.partition("\n\n")
    parts = [summary.strip()]
    renamed = [p for p in params if p.python_name != p.wire_name]
    if python_name != mcp_name or renamed:  # the mapping, when there is one to show
        origin = f"MCP tool {mcp_name!r}"
        if renamed:
            pairs = ", ".join(f"{p.python_name} -> {p.wire_name!r}" for p in renamed)
            origin += f" (arguments: {pairs})"
        parts.append(origin + ".")
    if rest.strip():
        parts.append(rest.strip())
    documented = [p for p in params if p.description]
    if documented and "Args:" not in rest:
        lines = [f"    {p.python_name}: {' '.join(p.description.split())}" for p in documented]  # type: ignore[union-attr]
        parts.append("Args:\n" + "\n".join(lines))
    returns = _returns_text(output_schema)
    if returns and "Returns:" not in rest:
        parts.append("Returns:\n    " + returns)
    return "\n\n".join(parts)


def _returns_text(output_schema: Mapping[str, Any] | None) -> str:
    if not isinstance(output_schema, Mapping):
        return UNKNOWN_SHAPE
    inner = result_wrapper(output_schema)
    if inner is None:
        return ""  # an object result: its class in the stubs says what it holds
    description = inner.get("description")
    if isinstance(description, str) and description.strip():
        return " ".join(description.split())
    return ""

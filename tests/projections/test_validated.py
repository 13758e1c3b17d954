"""The validated projection: arguments checked with the tool's model before the call."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from ptcbox.agent_glue import Tool, ToolContext, ToolResult
from ptcbox.errors import ToolError
from ptcbox.projections import ToolProjection, binder_for, validate_namespace
from ptcbox.projections._validated import ValidatedProjection


def search(query: str, limit: int = 10, *, context: ToolContext) -> list[str]:
    """Search."""
    context.report("searching")
    return [query] * limit


async def fetch(url: str) -> str:
    return url.upper()


def test_signature_hides_the_context_so_positional_binding_works() -> None:
    projection = Tool(search).projection()
    assert isinstance(projection, ValidatedProjection)
    assert isinstance(projection, ToolProjection)
    assert list(projection.signature.parameters) == ["query", "limit"]
    binder = binder_for(projection)
    assert binder.bind(("cats", 2), {}) == {"query": "cats", "limit": 2}
    assert projection(**binder.bind(("cats", 2), {})) == ["cats", "cats"]
    validate_namespace({"search": projection})


def test_arguments_are_validated_and_converted() -> None:
    projection = Tool(search).projection()
    assert projection(query="x", limit="3") == ["x", "x", "x"]  # lax: "3" -> 3
    with pytest.raises(TypeError) as caught:
        projection(query=5, limit="many", extra=1)
    message = str(caught.value)
    assert message.startswith("search(query: str, limit: int = 10) got invalid arguments:")
    assert "query: Input should be a valid string (given 5)" in message
    assert "limit: Input should be a valid integer" in message
    assert "unexpected argument 'extra'" in message
    with pytest.raises(TypeError, match="missing required argument 'query'"):
        projection()


def test_async_tools_stay_async() -> None:
    projection = Tool(fetch).projection()
    assert projection.is_async  # type: ignore[attr-defined]
    result = projection(url="a")
    assert inspect.iscoroutine(result)
    assert asyncio.run(result) == "A"


def test_context_is_injected_and_reports_reach_the_parent() -> None:
    reports: list[object] = []
    parent = ToolContext("call_1", "run_code", sink=lambda ctx, partial: reports.append(partial))
    projection = Tool(search).projection(parent)
    assert projection(query="q", limit=1) == ["q"]
    assert reports == [{"tool": "search", "tool_call_id": "call_1.1", "partial": "searching"}]


def test_returned_tool_result_is_unwrapped() -> None:
    def ok() -> ToolResult:
        return ToolResult.success(42)

    def bad() -> ToolResult:
        return ToolResult.failure("no such row")

    assert Tool(ok).projection()() == 42
    with pytest.raises(ToolError, match="no such row"):
        Tool(bad).projection()()


def test_context_parameter_needs_a_factory() -> None:
    tool = Tool(search)
    with pytest.raises(ValueError, match="context_factory"):
        ValidatedProjection(
            "search", search, model=tool.model, signature=tool.signature, context_parameter="c"
        )

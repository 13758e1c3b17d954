"""Tools: schema from the signature, descriptions from docstrings, execute never raises."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from ptcbox.agent_glue import Tool, ToolContext, ToolResult, tool
from ptcbox.errors import ToolError

pytestmark = pytest.mark.anyio


class Filter(BaseModel):
    field: str
    value: str


@tool(is_parallel_safe=True, timeout=5)
def get_expenses(employee_id: str, quarter: str = "Q3", limit: int | None = None) -> list[dict]:
    """Return the expenses of one employee.

    Longer explanation of the data.

    Args:
        employee_id: The employee's id, e.g. "e1".
        quarter: The quarter, "Q1" to "Q4".
    """
    return [{"employee_id": employee_id, "quarter": quarter, "limit": limit}]


def test_decorator_builds_a_tool_with_a_strict_schema() -> None:
    assert isinstance(get_expenses, Tool)
    assert get_expenses.name == "get_expenses"
    assert get_expenses.is_parallel_safe and get_expenses.timeout == 5
    assert get_expenses.description == (
        "Return the expenses of one employee.\n\nLonger explanation of the data."
    )
    assert get_expenses.parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "employee_id": {"type": "string", "description": 'The employee\'s id, e.g. "e1".'},
            "quarter": {
                "type": "string",
                "default": "Q3",
                "description": 'The quarter, "Q1" to "Q4".',
            },
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        },
        "required": ["employee_id"],
    }
    # the decorated function stays callable, with validated arguments
    assert get_expenses("e1") == [{"employee_id": "e1", "quarter": "Q3", "limit": None}]
    assert get_expenses("e1", limit="3")[0]["limit"] == 3
    with pytest.raises(TypeError, match="got invalid arguments"):
        get_expenses(employee_id=1)
    with pytest.raises(TypeError, match="too many positional arguments"):
        get_expenses("e1", "Q1", 3, 4)
    assert get_expenses.fn("e1", limit="raw")[0]["limit"] == "raw"  # the raw function


def test_a_tool_is_a_projection_usable_with_execute() -> None:
    import ptcbox
    from ptcbox.projections import ToolProjection

    @tool
    def scale(x: int, context: ToolContext) -> int:
        """Scale a number."""
        context.report("scaling")  # nobody listens: dropped
        return 10 * x

    assert isinstance(scale, ToolProjection)
    result = ptcbox.execute("print(scale(2), scale(x='3'))\nscale('x')", tools=[scale])
    assert result.stdout == "20 30\n"
    assert result.error_type == "TypeError" and "scale(x: int) got invalid arguments" in (
        result.error or ""
    )


def test_options_nested_models_and_awkward_parameter_names() -> None:
    def query(schema: str, model_config: Filter, title: Annotated[int, Field(ge=0)] = 0) -> str:
        return schema

    made = Tool(query, name="run_query", description="Run a query.", code_only=True)
    assert made.name == "run_query" and made.code_only and made.description == "Run a query."
    props = made.parameters["properties"]
    assert set(props) == {"schema", "model_config", "title"}  # a property named title stays
    assert props["title"] == {"type": "integer", "minimum": 0, "default": 0}
    assert "$defs" in made.parameters and "Filter" in made.parameters["$defs"]


def test_bad_tool_definitions_are_refused() -> None:
    def star(*args: int) -> None: ...

    def kw(**kwargs: int) -> None: ...

    def pos(a: int, /) -> None: ...

    for fn in (star, kw, pos):
        with pytest.raises(ValueError, match="named parameters"):
            Tool(fn)
    with pytest.raises(ValueError, match="identifier"):
        Tool(lambda: None, name="bad name")
    with pytest.raises(ValueError, match="keyword"):
        Tool(lambda: None, name="class")
    with pytest.raises(ValueError, match="timeout"):
        Tool(lambda: None, name="x", timeout=0)


async def test_execute_validates_and_explains_errors_to_the_model() -> None:
    ok = await get_expenses.execute('{"employee_id": "e1", "limit": "2"}', tool_call_id="c1")
    assert ok.ok and ok.tool_call_id == "c1" and ok.name == "get_expenses"
    assert ok.output == [{"employee_id": "e1", "quarter": "Q3", "limit": 2}]
    assert ok.duration_s >= 0

    bad = await get_expenses.execute({"employee_id": 7, "quarter": "Q3", "extra": True})
    assert not bad.ok and bad.is_error
    assert bad.error is not None
    assert "get_expenses(employee_id: str, quarter: str = 'Q3', limit: int | None = None)" in (
        bad.error
    )
    assert "employee_id: Input should be a valid string (given 7)" in bad.error
    assert "unexpected argument 'extra'" in bad.error
    assert bad.content.startswith("Error: ")

    missing = await get_expenses.execute("{}")
    assert "missing required argument 'employee_id'" in (missing.error or "")

    not_json = await get_expenses.execute('{"employee_id": "e1"')
    assert "not valid JSON" in (not_json.error or "") and '{"employee_id": "e1"' in (
        not_json.error or ""
    )
    array = await get_expenses.execute('["e1"]')
    assert "must be a JSON object" in (array.error or "") and "a JSON array" in (array.error or "")


async def test_tool_exceptions_and_tool_errors_become_error_results() -> None:
    def boom(x: int) -> int:
        raise LookupError(f"no row {x}")

    async def refuse() -> None:
        raise ToolError("refuse", "not allowed today")

    result = await Tool(boom).execute('{"x": 3}')
    assert result.error == "tool 'boom' raised LookupError: no row 3"
    refused = await Tool(refuse).execute(None)
    assert refused.error == "tool 'refuse' failed: not allowed today"


async def test_timeouts_become_error_results() -> None:
    release = threading.Event()

    def stuck() -> None:
        release.wait(10)

    async def slow() -> None:
        await asyncio.sleep(10)

    started = time.monotonic()
    for fn in (stuck, slow):
        result = await Tool(fn, timeout=0.2).execute("")
        assert result.error == f"tool {fn.__name__!r} timed out after 0.2 s; try a smaller request"
    release.set()
    assert time.monotonic() - started < 5

    async def own_timeout() -> None:
        raise TimeoutError("upstream timed out")

    result = await Tool(own_timeout).execute("")
    assert result.error == "tool 'own_timeout' raised TimeoutError: upstream timed out"


async def test_sync_tools_run_in_a_worker_thread_and_async_on_the_loop() -> None:
    loop_thread = threading.get_ident()
    seen: dict[str, int] = {}

    def sync_tool() -> None:
        seen["sync"] = threading.get_ident()

    async def async_tool() -> None:
        seen["async"] = threading.get_ident()

    await Tool(sync_tool).execute("")
    await Tool(async_tool).execute("")
    assert seen["sync"] != loop_thread and seen["async"] == loop_thread


async def test_context_is_injected_reports_are_ordered_and_dropped_after_return() -> None:
    reports: list[Any] = []
    kept: list[ToolContext] = []

    def worker(n: int, context: ToolContext) -> str:
        kept.append(context)
        for i in range(n):
            context.report(i)  # from a worker thread
        return context.tool_call_id + ":" + context.tool_name + ":" + str(context.deps)

    made = Tool(worker)
    assert "context" not in made.parameters["properties"]
    result = await made.execute(
        '{"n": 50}', tool_call_id="c9", deps="db", sink=lambda ctx, p: reports.append(p)
    )
    assert result.output == "c9:worker:db"
    assert reports == list(range(50))
    assert kept[0].closed
    kept[0].report("late")  # after the tool returned: dropped
    await asyncio.sleep(0.05)
    assert reports == list(range(50))


async def test_returning_a_tool_result_sets_text_and_terminate() -> None:
    def finish(answer: str) -> ToolResult:
        return ToolResult.success({"answer": answer}, text=f"done: {answer}", terminate=True)

    result = await Tool(finish).execute('{"answer": "42"}', tool_call_id="c1")
    assert result.ok and result.terminate and result.content == "done: 42"
    assert result.tool_call_id == "c1" and result.output == {"answer": "42"}
    message = result.to_message()
    assert (message.role, message.tool_call_id, message.content) == ("tool", "c1", "done: 42")


def test_result_content_rendering() -> None:
    assert ToolResult.success("text").content == "text"
    assert ToolResult.success({"a": [1, 2.5, None]}).content == '{"a": [1, 2.5, null]}'
    assert ToolResult.success(None).content == "null"
    assert ToolResult.failure("bad").content == "Error: bad"
    assert ToolResult.failure("bad").to_message().is_error

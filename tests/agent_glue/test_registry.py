"""ToolRegistry: membership, schemas in each API's shape, execution and batches."""

from __future__ import annotations

import typing
from typing import Any

import anyio
import pytest
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter

from ptcbox.agent_glue import RunCodeTool, Tool, ToolCall, ToolRegistry, tool

pytestmark = pytest.mark.anyio


@tool(is_parallel_safe=True)
def get_budget(department: str) -> float:
    """Return the quarterly budget of a department, in dollars.

    Args:
        department: Department name.
    """
    return 1000.0


@tool(code_only=True)
def list_departments() -> list[str]:
    """List the departments."""
    return ["Engineering"]


def _registry() -> ToolRegistry:
    return ToolRegistry([get_budget, list_departments])


def test_register_unregister_get() -> None:
    registry = _registry()
    assert registry.names == ("get_budget", "list_departments")
    assert "get_budget" in registry and len(registry) == 2
    with pytest.raises(ValueError, match="already registered"):
        registry.register(get_budget)
    registry.register(get_budget, replace=True)

    def plain(x: int) -> int:
        return x

    assert isinstance(registry.register(plain), Tool)
    assert registry.get("plain") is not None
    assert registry.unregister("plain").name == "plain"
    assert registry.get("plain") is None
    with pytest.raises(KeyError, match="no tool named 'plain'"):
        registry.unregister("plain")


def _typed_dict_keys(kind: Any) -> set[str]:
    return set(typing.get_type_hints(kind))


def test_schemas_have_each_apis_exact_shape() -> None:
    registry = _registry()
    parameters = get_budget.parameters

    (chat,) = registry.schemas("openai")  # code_only tools are not offered directly
    assert chat == {
        "type": "function",
        "function": {
            "name": "get_budget",
            "description": "Return the quarterly budget of a department, in dollars.",
            "parameters": parameters,
        },
    }
    TypeAdapter(ChatCompletionFunctionToolParam).validate_python(chat)
    assert set(chat) <= _typed_dict_keys(ChatCompletionFunctionToolParam)

    (responses,) = registry.schemas("responses")
    assert responses == {
        "type": "function",
        "name": "get_budget",
        "description": "Return the quarterly budget of a department, in dollars.",
        "parameters": parameters,
        "strict": False,
    }
    TypeAdapter(FunctionToolParam).validate_python(responses)
    assert set(responses) <= _typed_dict_keys(FunctionToolParam)

    (anthropic,) = registry.schemas("anthropic")
    assert anthropic == {
        "name": "get_budget",
        "description": "Return the quarterly budget of a department, in dollars.",
        "input_schema": parameters,
    }
    assert parameters["type"] == "object"
    with pytest.raises(ValueError, match="unknown schema format"):
        registry.schemas("gemini")  # type: ignore[arg-type]


async def test_execute_unknown_and_code_only_tools() -> None:
    registry = _registry()
    ok = await registry.execute(ToolCall("c1", "get_budget", '{"department": "x"}'))
    assert ok.ok and ok.output == 1000.0 and ok.content == "1000.0"
    unknown = await registry.execute(ToolCall("c2", "get_budgets", "{}"))
    assert unknown.error == "unknown tool 'get_budgets'; available tools: get_budget"
    assert unknown.tool_call_id == "c2"
    code_only = await registry.execute(ToolCall("c3", "list_departments", "{}"))
    assert code_only.error == (
        "tool 'list_departments' can only be called from Python code inside run_code"
    )


def test_projections_include_code_only_tools_but_never_run_code() -> None:
    registry = _registry()
    registry.register(RunCodeTool(registry))
    assert sorted(registry.projections()) == ["get_budget", "list_departments"]
    assert [d.name for d in registry.definitions()] == ["get_budget", "run_code"]


async def test_parallel_safe_batch_runs_concurrently() -> None:
    """Each call waits until all three are running: only possible if they overlap."""
    running = 0
    all_running = anyio.Event()

    @tool(is_parallel_safe=True)
    async def meet(n: int) -> int:
        nonlocal running
        running += 1
        if running == 3:
            all_running.set()
        with anyio.fail_after(10):
            await all_running.wait()
        return n

    registry = ToolRegistry([meet])
    calls = [ToolCall(f"c{i}", "meet", f'{{"n": {i}}}') for i in range(3)]
    results = await registry.execute_batch(calls)
    assert [r.output for r in results] == [0, 1, 2]
    assert [r.tool_call_id for r in results] == ["c0", "c1", "c2"]


async def test_batch_with_unsafe_calls_keeps_source_order() -> None:
    log: list[str] = []

    async def step(n: int) -> int:
        log.append(f"start {n}")
        await anyio.sleep(0.01 * (3 - n))  # later calls are faster: overlap would reorder
        log.append(f"end {n}")
        return n

    registry = ToolRegistry([Tool(step, is_parallel_safe=False)])
    calls = [ToolCall(f"c{i}", "step", f'{{"n": {i}}}') for i in range(3)]
    results = await registry.execute_batch(calls)
    assert [r.output for r in results] == [0, 1, 2]
    assert log == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]


async def test_unsafe_call_is_a_barrier_between_parallel_safe_calls() -> None:
    log: list[str] = []

    async def work(name: str, delay: float) -> str:
        log.append(f"start {name}")
        await anyio.sleep(delay)
        log.append(f"end {name}")
        return name

    registry = ToolRegistry(
        [Tool(work, name="safe", is_parallel_safe=True), Tool(work, name="unsafe")]
    )
    calls = [
        ToolCall("a", "safe", '{"name": "a", "delay": 0.05}'),
        ToolCall("b", "safe", '{"name": "b", "delay": 0.01}'),
        ToolCall("c", "unsafe", '{"name": "c", "delay": 0.01}'),
        ToolCall("d", "safe", '{"name": "d", "delay": 0.01}'),
    ]
    await registry.execute_batch(calls)
    assert log[:2] == ["start a", "start b"]  # a and b overlap
    assert log.index("start c") > max(log.index("end a"), log.index("end b"))
    assert log.index("start d") > log.index("end c")


async def test_cancelling_a_batch_cancels_every_call() -> None:
    ended: list[str] = []

    @tool(is_parallel_safe=True)
    async def hang(n: int) -> None:
        try:
            await anyio.sleep(30)
        finally:
            ended.append(str(n))

    registry = ToolRegistry([hang])
    with anyio.move_on_after(0.2):
        await registry.execute_batch([ToolCall(f"c{i}", "hang", f'{{"n": {i}}}') for i in range(3)])
    assert sorted(ended) == ["0", "1", "2"]

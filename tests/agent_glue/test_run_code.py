"""RunCodeTool: the run_code tool a model calls, on a real ThreadRuntime (case B26)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import pytest

from ptcbox import CodeResult
from ptcbox.agent_glue import (
    Agent,
    AgentEvent,
    RunCodeTool,
    ScriptedProvider,
    ScriptedTurn,
    Tool,
    ToolContext,
    ToolExecutionUpdate,
    ToolRegistry,
    count_tokens,
    render_stubs,
    tool,
)
from ptcbox.projections import DirectProjection
from ptcbox.runtimes import CodeRuntime, ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio


class CountingRuntime:
    """A real ThreadRuntime that counts the executions it is asked for."""

    def __init__(self) -> None:
        self.inner = ThreadRuntime()
        self.calls: list[dict[str, Any]] = []

    async def execute(self, code: str, namespace: Mapping[str, Any], **options: Any) -> CodeResult:
        self.calls.append({"code": code, **options})
        return await self.inner.execute(code, namespace, **options)

    async def aclose(self) -> None:
        await self.inner.aclose()


@tool(is_parallel_safe=True)
def get_price(item: str, quantity: int = 1) -> float:
    """Return the price of some items, in dollars.

    Args:
        item: The item's name.
        quantity: How many.
    """
    return {"apple": 0.5, "pear": 0.75}[item] * quantity


@tool(code_only=True)
def list_items() -> list[str]:
    """List the items for sale."""
    return ["apple", "pear"]


@pytest.fixture
async def counting() -> AsyncIterator[CountingRuntime]:
    runtime = CountingRuntime()
    try:
        yield runtime
    finally:
        await runtime.aclose()


MALFORMED = [
    pytest.param('{"code": "print(1', "not valid JSON", '{"code": "print(1', id="truncated-json"),
    pytest.param('["print(1)"]', "must be a JSON object", '["print(1)"]', id="array"),
    pytest.param("", "missing required argument 'code'", "(empty)", id="empty-text"),
    pytest.param("null", "must be a JSON object", "null", id="null"),
    pytest.param('{"code": ""}', "'code' is empty", '""', id="empty-code"),
    pytest.param('{"code": "  \\n "}', "'code' is empty", '"  \\n "', id="blank-code"),
    pytest.param('{"code": 123}', "code: Input should be a valid string", "123", id="wrong-type"),
    pytest.param(
        '{"code": "1", "timeout": "soon"}', "timeout: Input should be", "soon", id="bad-timeout"
    ),
    pytest.param(
        '{"code": "1", "timeout": -1}', "'timeout' must be a positive", "-1", id="neg-timeout"
    ),
    pytest.param('{"code": "1", "lang": "py"}', "unexpected argument 'lang'", "lang", id="extra"),
]


@pytest.mark.parametrize(("arguments", "problem", "shown"), MALFORMED)
async def test_B26_malformed_arguments_never_reach_the_runtime(
    counting: CountingRuntime, arguments: str, problem: str, shown: str
) -> None:
    """B26: invalid JSON, non-objects, null, empty or mistyped code: a clear error result."""
    run_code = RunCodeTool([get_price], runtime=counting)
    result = await run_code.execute(arguments, tool_call_id="call_1")
    assert counting.calls == []
    assert result.is_error and result.tool_call_id == "call_1" and result.name == "run_code"
    assert problem in (result.error or "")
    assert "invalid" in result.content or "not valid JSON" in result.content
    assert shown in result.content  # a short preview of what was sent
    assert result.to_message().is_error


async def test_B26_huge_malformed_arguments_get_a_short_preview(counting: CountingRuntime) -> None:
    run_code = RunCodeTool([get_price], runtime=counting)
    result = await run_code.execute('{"code": "' + "x" * 100_000)
    assert counting.calls == [] and result.is_error
    assert len(result.content) < 1000


async def test_valid_code_runs_and_renders_the_code_result(counting: CountingRuntime) -> None:
    run_code = RunCodeTool(ToolRegistry([get_price, list_items]), runtime=counting)
    code = (
        "total = sum(get_price(item=i, quantity=2) for i in list_items())\n"
        "print(f'total: {total}')\n"
        "total"
    )
    result = await run_code.execute(json.dumps({"code": code}), tool_call_id="c1")
    assert result.ok and not result.is_error
    assert isinstance(result.output, CodeResult) and result.output.value == 2.5
    assert result.content == result.output.render() == "[stdout]\n```\ntotal: 2.5\n```\n[value] 2.5"
    assert [c.name for c in result.output.tool_calls] == ["list_items", "get_price", "get_price"]
    assert counting.calls[0]["timeout"] == 30.0


async def test_failing_code_is_an_error_result_with_the_traceback(
    counting: CountingRuntime,
) -> None:
    run_code = RunCodeTool([get_price], runtime=counting)
    result = await run_code.execute(json.dumps({"code": "get_price(item='kiwi')"}))
    assert result.is_error and isinstance(result.output, CodeResult)
    assert result.output.return_code == 1
    assert "KeyError" in result.content and result.content == result.output.render()
    wrong = await run_code.execute(json.dumps({"code": "get_price(item=3)"}))
    assert wrong.is_error
    assert "get_price(item: str, quantity: int = 1) got invalid arguments" in wrong.content


async def test_the_model_cannot_raise_the_timeout_above_the_cap(counting: CountingRuntime) -> None:
    run_code = RunCodeTool([get_price], runtime=counting, max_timeout=1.0)
    started = time.monotonic()
    result = await run_code.execute(json.dumps({"code": "while True:\n    pass", "timeout": 1000}))
    assert time.monotonic() - started < 1.0 + 5.0
    assert counting.calls[0]["timeout"] == 1.0
    assert result.is_error and result.output.timed_out
    shorter = await run_code.execute(json.dumps({"code": "1", "timeout": 0.5}))
    assert shorter.ok and counting.calls[1]["timeout"] == 0.5
    assert run_code.parameters["properties"]["timeout"]["description"].endswith(
        "at most 1 (the default)."
    )


async def test_description_lists_tools_as_stubs_code_only_included() -> None:
    registry = ToolRegistry([get_price, list_items])
    run_code = RunCodeTool(registry)
    registry.register(run_code)
    description = run_code.description
    assert render_stubs(registry.projections()) in description
    assert "def list_items() -> list[str]:" in description
    assert "def run_code" not in description
    assert run_code.parameters["required"] == ["code"]
    assert run_code.description_tokens == count_tokens(description)
    # direct tools offered to the model: code_only tools are not among them
    assert [s["function"]["name"] for s in registry.schemas()] == ["get_price", "run_code"]

    @tool
    def late(x: int) -> int:
        """Registered after run_code was built."""
        return x

    registry.register(late)
    assert "def late(x: int) -> int:" in run_code.description  # stubs follow the registry


async def test_progress_is_streamed_as_updates(counting: CountingRuntime) -> None:
    @tool
    def step_tool(n: int, context: ToolContext) -> int:
        context.report(f"half of {n}")
        return n

    updates: list[Any] = []
    run_code = RunCodeTool([step_tool], runtime=counting)
    code = "print('one')\nstep_tool(n=1)\nprint('two')"
    result = await run_code.execute(
        json.dumps({"code": code}), tool_call_id="rc", sink=lambda ctx, p: updates.append(p)
    )
    assert result.ok
    stdout = "".join(u["text"] for u in updates if u.get("stream") == "stdout")
    assert stdout == "one\ntwo\n"
    inner = [u for u in updates if u.get("tool") == "step_tool"]
    assert inner == [{"tool": "step_tool", "tool_call_id": "rc.1", "partial": "half of 1"}]
    calls = [u["tool_call"] for u in updates if "tool_call" in u]
    assert [(c["name"], c["arguments"], c["ok"]) for c in calls] == [("step_tool", {"n": 1}, True)]


async def test_namespaces_and_plain_functions_are_accepted() -> None:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    async with RunCodeTool({"add": DirectProjection("add", add)}) as direct:
        result = await direct.execute('{"code": "add(1, 2)"}')
        assert result.ok and result.output.value == 3
    async with RunCodeTool([add]) as listed:
        result = await listed.execute('{"code": "add(a=1, b=\\"2\\")"}')
        assert result.ok and result.output.value == 3  # validated: "2" -> 2
    async with RunCodeTool({"add": Tool(add)}, policy=SandboxPolicy(timeout=5)) as mapped:
        assert mapped.runtime.policy.timeout == 5  # type: ignore[attr-defined]
        assert (await mapped.execute('{"code": "add(2, 2)"}')).output.value == 4


async def test_construction_errors_and_runtime_ownership(counting: CountingRuntime) -> None:
    with pytest.raises(ValueError, match="pass the policy to the runtime"):
        RunCodeTool([], runtime=counting, policy=SandboxPolicy())
    with pytest.raises(ValueError, match="max_timeout"):
        RunCodeTool([], max_timeout=0)
    with pytest.raises(
        TypeError, match=r"policy= takes a SandboxPolicy, e\.g\. SandboxPolicy\.strict"
    ):
        RunCodeTool([], policy="strict")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="does not match"):
        RunCodeTool({"other": DirectProjection("add", lambda a: a)})
    given = RunCodeTool([], runtime=counting)
    await given.aclose()
    assert (await counting.execute("1", {})).ok  # a runtime we were given stays open
    owned = RunCodeTool([])
    runtime = owned.runtime
    await owned.aclose()
    assert owned.runtime is not runtime  # a fresh default runtime after close
    await owned.aclose()


async def test_interrupting_an_agent_mid_snippet_stops_the_code(code_runtime: CodeRuntime) -> None:
    """Cancellation mid-tool: run_code gets the interrupted result, the runtime is reusable."""
    script = [ScriptedTurn("", [("run_code", {"code": "print('started')\nwhile True:\n    pass"})])]
    run_code = RunCodeTool([get_price], runtime=code_runtime)
    agent_box: dict[str, Agent] = {}

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, ToolExecutionUpdate) and event.partial.get("stream") == "stdout":
            agent_box["agent"].interrupt()  # the snippet is now spinning

    agent = Agent(ScriptedProvider(script), [run_code], on_event=on_event)
    agent_box["agent"] = agent
    started = time.monotonic()
    with anyio.fail_after(20):
        result = await agent.run("spin")
    assert time.monotonic() - started < 20
    assert result.stop_reason == "interrupted"
    assert result.messages[-1].content == "Tool call interrupted by user"
    assert result.messages[-1].is_error
    with anyio.fail_after(20):
        after = await run_code.execute('{"code": "print(6 * 7)"}')
    assert after.ok and after.content == "[stdout]\n```\n42\n```"


async def test_code_cannot_reach_run_code_or_forge_a_tool_context(
    counting: CountingRuntime,
) -> None:
    """Guards: run_code is not callable from code; the injected context cannot be forged."""

    @tool
    def whoami(context: ToolContext) -> str:
        return context.tool_call_id

    registry = ToolRegistry([whoami])
    run_code = RunCodeTool(registry, runtime=counting)
    registry.register(run_code)
    recursive = await run_code.execute('{"code": "run_code(code=\\"1\\")"}')
    assert recursive.is_error and "NameError" in recursive.content
    forged = await run_code.execute('{"code": "whoami(context=\\"forged\\")"}')
    assert forged.is_error and "unexpected" in forged.content and "'context'" in forged.content
    positional = await run_code.execute('{"code": "whoami(\\"forged\\")"}')
    assert positional.is_error
    assert "whoami() takes 0 positional arguments but 1 was given" in positional.content
    assert [c.ok for c in forged.output.tool_calls + positional.output.tool_calls] in (
        [],
        [False, False],
    )
    honest = await run_code.execute('{"code": "whoami()"}', tool_call_id="rc7")
    assert honest.ok and honest.output.value == "rc7.1"


@pytest.mark.parametrize(
    ("name", "kind"), [("thread", "ThreadRuntime"), ("subprocess", "SubprocessRuntime")]
)
async def test_a_runtime_named_like_execute_names_it_is_created_and_closed(
    name: str, kind: str
) -> None:
    def double(x: int) -> int:
        """Twice x."""
        return 2 * x

    strict = SandboxPolicy.strict()
    tool = RunCodeTool([double], runtime=name, policy=strict)
    try:
        result = await tool.execute(json.dumps({"code": "print(double(x=21))"}))
        assert result.ok, result.content
        assert isinstance(result.output, CodeResult) and result.output.stdout == "42\n"
        assert type(tool.runtime).__name__ == kind
        assert tool.runtime.policy is strict  # type: ignore[attr-defined]
    finally:
        await tool.aclose()


async def test_a_runtime_that_is_neither_a_name_nor_a_runtime_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="unknown runtime 'threads'"):
        RunCodeTool([], runtime="threads")
    with pytest.raises(TypeError, match="not int"):
        RunCodeTool([], runtime=3)  # type: ignore[arg-type]


async def test_repr_names_the_tools_and_the_runtime(counting: CountingRuntime) -> None:
    """repr() used to recurse: Tool's repr shows fn, here RunCodeTool's own bound _run.

    A notebook displaying the tool, or a log line formatting it, hit RecursionError.
    """

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    listed = RunCodeTool([add])
    assert repr(listed) == "RunCodeTool(name='run_code', tools=['add'], runtime='subprocess')"
    assert listed._runtime is None  # repr did not create the runtime
    given = RunCodeTool(ToolRegistry([add]), runtime=counting, name="python")
    assert repr(given) == "RunCodeTool(name='python', tools=['add'], runtime='CountingRuntime')"

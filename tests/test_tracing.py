"""OpenTelemetry spans, checked with the SDK's in-memory exporter.

One agent run through ``run_code`` gives ``invoke_agent`` > ``chat`` / ``execute_tool
run_code`` > ``ptcbox.execute`` > one ``execute_tool <name>`` per call the code made;
``ptcbox.execute()`` alone gives the execution span. Contents never reach attributes.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import ptcbox
from ptcbox.agent_glue import Agent, RunCodeTool, ScriptedProvider, ScriptedTurn, ToolRegistry
from ptcbox.demo import GATHER_SNIPPET, TASK, ExpenseTools, create_database
from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_agent_run_is_a_span_tree(
    spans: InMemorySpanExporter, tmp_path: Path, anyio_backend: str
) -> None:
    tools = ExpenseTools(create_database(tmp_path / "expenses.db"))
    model = ScriptedProvider(
        [ScriptedTurn(tool_calls=[("run_code", {"code": GATHER_SNIPPET})]), "done"]
    )
    runtime = ThreadRuntime()
    try:
        run_code = RunCodeTool(ToolRegistry(tools.as_list()), runtime=runtime)
        result = await Agent(model, [run_code], "Use run_code.").run(TASK)
    finally:
        await runtime.aclose()
    finished = list(spans.get_finished_spans())
    (root,) = [s for s in finished if s.parent is None]
    assert root.name == "invoke_agent"
    assert root.attributes["ptcbox.agent.steps"] == 2
    assert root.attributes["gen_ai.usage.input_tokens"] == result.usage.input_tokens
    top = _children(finished, root)
    assert [s.name for s in top] == ["chat scripted", "execute_tool run_code", "chat scripted"]
    chat = top[0]
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.provider.name"] == "ptcbox.scripted"
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert chat.attributes["gen_ai.usage.output_tokens"] > 0
    (execution,) = _children(finished, top[1])
    assert execution.name == "ptcbox.execute"
    assert execution.attributes["ptcbox.runtime"] == "ThreadRuntime"
    assert execution.attributes["ptcbox.outcome"] == "ok"
    calls = _children(finished, execution)
    assert len(calls) == execution.attributes["ptcbox.tool_calls"] == 1 + 2 * 14
    names = {s.name for s in calls}
    assert names == {"execute_tool list_team_members", "execute_tool get_expenses",
                     "execute_tool get_budget"}  # fmt: skip
    for call in calls:
        assert execution.start_time <= call.start_time <= call.end_time <= execution.end_time
        assert call.attributes["ptcbox.tool.argument_bytes"] > 0
    # no argument or output content in any attribute
    values = " ".join(str(v) for s in finished for v in (s.attributes or {}).values())
    assert "Engineering" not in values and "travel" not in values


def test_execute_alone_is_one_span_with_its_outcome(spans: InMemorySpanExporter) -> None:
    def double(x: int) -> int:
        return 2 * x

    result = ptcbox.execute("print(double(x=2))\n1 / 0", tools=[double], runtime="thread")
    assert result.error_type == "ZeroDivisionError"
    finished = list(spans.get_finished_spans())
    (execution,) = [s for s in finished if s.name == "ptcbox.execute"]
    assert execution.attributes["ptcbox.outcome"] == "error"
    assert execution.attributes["error.type"] == "ZeroDivisionError"
    assert execution.attributes["ptcbox.output_bytes"] == 2
    assert execution.status.status_code == trace.StatusCode.ERROR
    (call,) = _children(finished, execution)
    assert call.name == "execute_tool double" and call.attributes["ptcbox.tool.ok"] is True


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_denied_nested_call_is_a_failed_span(
    spans: InMemorySpanExporter, anyio_backend: str
) -> None:
    from ptcbox.agent_glue import Deny

    def pay(amount: int) -> str:
        return "paid"

    runtime = ThreadRuntime()
    try:
        run_code = RunCodeTool([pay], runtime=runtime, approve=lambda request: Deny("no"))
        outcome = await run_code.execute(
            {"code": "try:\n    pay(amount=5)\nexcept ToolError:\n    pass"}
        )
    finally:
        await runtime.aclose()
    assert outcome.ok
    (call,) = [s for s in spans.get_finished_spans() if s.name == "execute_tool pay"]
    assert call.attributes["ptcbox.tool.ok"] is False
    assert call.attributes["error.type"] == "PermissionError"
    assert call.status.status_code == trace.StatusCode.ERROR


def test_without_opentelemetry_nothing_changes() -> None:
    code = (
        "import sys\nsys.modules['opentelemetry'] = None\n"
        "import ptcbox\nr = ptcbox.execute('print(1)', runtime='thread')\n"
        "print(r.stdout.strip(), 'opentelemetry' in sys.modules and sys.modules['opentelemetry'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "None"]


_TOOL_TRACER = trace.get_tracer("a-tool")


def fetch(url: str) -> str:
    """A sync tool that makes its own span, as an HTTP client would."""
    with _TOOL_TRACER.start_as_current_span("GET"):
        return url.upper()


async def afetch(url: str) -> str:
    """An async tool that makes its own span."""
    with _TOOL_TRACER.start_as_current_span("GET async"):
        await asyncio.sleep(0)
        return url.upper()


_CODES = {
    "sync code": "print(fetch(url='a'), afetch(url='b'))\n"
    "try:\n    fetch(1, 2)\nexcept TypeError:\n    print('bad call')",
    "async code": "import asyncio\nprint(await asyncio.gather(fetch(url='a'), afetch(url='b')))\n"
    "try:\n    await fetch(1, 2)\nexcept TypeError:\n    print('bad call')",
}


def _parent(finished: list[ReadableSpan], child: ReadableSpan) -> ReadableSpan:
    assert child.parent is not None
    (parent,) = [s for s in finished if s.context.span_id == child.parent.span_id]
    return parent


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("runtime_kind", ["thread", "subprocess"])
@pytest.mark.parametrize("code", list(_CODES))
@pytest.mark.parametrize("approved", [False, True], ids=["no approval", "approved"])
async def test_a_tool_call_span_is_current_while_the_tool_runs(
    spans: InMemorySpanExporter, anyio_backend: str, runtime_kind: str, code: str, approved: bool
) -> None:
    from ptcbox.agent_glue import Approve

    def approve(request: object) -> Approve:
        return Approve(arguments={"url": "edited-url"})

    runtime = ThreadRuntime() if runtime_kind == "thread" else SubprocessRuntime()
    try:
        run_code = RunCodeTool(
            [fetch, afetch], runtime=runtime, approve=approve if approved else None
        )
        outcome = await run_code.execute({"code": _CODES[code]})
    finally:
        await runtime.aclose()
    result = outcome.output
    assert isinstance(result, ptcbox.CodeResult) and result.ok, result
    assert ("EDITED-URL" in result.stdout) is approved and "bad call" in result.stdout
    finished = list(spans.get_finished_spans())
    (execution,) = [s for s in finished if s.name == "ptcbox.execute"]
    for own, tool_span in (("GET", "execute_tool fetch"), ("GET async", "execute_tool afetch")):
        (made,) = [s for s in finished if s.name == own]
        parent = _parent(finished, made)
        assert parent.name == tool_span  # the tool's own span nests under its call
        assert _parent(finished, parent) is execution
        assert parent.start_time <= made.start_time <= made.end_time <= parent.end_time
        assert parent.attributes["ptcbox.tool.ok"] is True
        assert parent.attributes["ptcbox.tool.result_bytes"] > 0
        edited = parent.attributes.get("ptcbox.tool.arguments_edited")
        assert (edited is True) if approved else edited is None
        expected = len('{"url": "edited-url"}') if approved else len('{"url": "a"}')
        assert parent.attributes["ptcbox.tool.argument_bytes"] == expected
    # the call that never reached its tool has its span too, from the record
    calls = _children(finished, execution)
    assert len(calls) == execution.attributes["ptcbox.tool_calls"] == 3
    (bad,) = [s for s in calls if s.attributes["ptcbox.tool.ok"] is False]
    assert bad.name == "execute_tool fetch" and bad.attributes["error.type"] == "TypeError"


def test_without_a_recording_provider_tools_are_not_wrapped() -> None:
    code = (
        "from ptcbox._tracing import ExecutionSpan\n"
        "from ptcbox._tracing_calls import traced_namespace\n"
        "trace = ExecutionSpan('ThreadRuntime', None, 1.0)\n"
        "namespace = {}\n"
        "print(trace.active, traced_namespace(trace, namespace) is namespace)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_aexecute_on_the_shared_runtime_nests_the_tools_spans(
    spans: InMemorySpanExporter, anyio_backend: str
) -> None:
    result = await ptcbox.aexecute(
        "print(await fetch(url='a'))\nprint(await afetch(url='b'))",
        tools=[fetch, afetch],
        runtime="thread",
    )
    assert result.ok and result.stdout == "A\nB\n", result
    finished = list(spans.get_finished_spans())
    for own, tool_span in (("GET", "execute_tool fetch"), ("GET async", "execute_tool afetch")):
        (made,) = [s for s in finished if s.name == own]
        parent = _parent(finished, made)
        assert parent.name == tool_span
        assert _parent(finished, parent).name == "ptcbox.execute"

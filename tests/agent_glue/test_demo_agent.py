"""A full agent run that solves the demo's budget-overrun task through run_code.

The real openai SDK streams from the scripted server on 127.0.0.1; the snippet runs on
each real runtime (a worker thread, a separate process) and calls the demo's SQLite
tools; the answer is checked in SQL.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ptcbox import CodeResult
from ptcbox.agent_glue import (
    Agent,
    AgentEvent,
    ChatRequest,
    OpenAIChatProvider,
    RunCodeTool,
    ScriptedOpenAIServer,
    ScriptedTurn,
    ToolExecutionEnd,
    ToolExecutionUpdate,
    ToolRegistry,
    count_request_tokens,
)
from ptcbox.demo import (
    GATHER_SNIPPET,
    SEQUENTIAL_SNIPPET,
    TASK,
    ExpenseTools,
    check_answer,
    expected_answer,
)
from ptcbox.runtimes import CodeRuntime

pytestmark = pytest.mark.anyio


def _answer(request: ChatRequest) -> str:
    result = request.messages[-1].content
    found = re.search(r"^\[value\] (.*)$", result, flags=re.MULTILINE)
    assert found is not None, result
    rows = json.loads(found.group(1))
    return "\n".join(f"{row['name']}: ${row['over_by']:,.2f} over" for row in rows)


@pytest.mark.parametrize("snippet", [SEQUENTIAL_SNIPPET, GATHER_SNIPPET], ids=["loop", "gather"])
async def test_agent_solves_the_budget_overrun_task_through_run_code(
    demo_db: Path, snippet: str, code_runtime: CodeRuntime
) -> None:
    registry = ToolRegistry(ExpenseTools(demo_db).as_list())
    events: list[AgentEvent] = []
    script = [ScriptedTurn("One snippet will do.", [("run_code", {"code": snippet})]), _answer]
    with ScriptedOpenAIServer(script, chunk_chars=64) as server:
        async with RunCodeTool(registry, runtime=code_runtime) as run_code:
            agent = Agent(
                OpenAIChatProvider(server.client(), "scripted"),
                [run_code],
                "Use run_code.",
                on_event=events.append,
            )
            result = await agent.run(TASK)
        first_request = server.requests[0]
    assert result.stop_reason == "completed" and result.steps == 2
    # the model saw exactly one tool, whose description lists the demo tools as stubs
    (offered,) = first_request["tools"]
    assert offered["function"]["name"] == "run_code"
    assert "def get_expenses(employee_id: str, quarter: str" in (offered["function"]["description"])
    # the snippet's value is the right answer, checked against SQL
    (end,) = [e for e in events if isinstance(e, ToolExecutionEnd)]
    code_result = end.result.output
    assert isinstance(code_result, CodeResult) and code_result.ok, code_result.error
    expected = expected_answer(demo_db)
    check = check_answer(code_result.value, expected)
    assert check.ok, check.problems
    for row in expected:
        assert f"{row['name']}: ${row['over_by']:,.2f} over" in result.final_text
    # run_code streamed its progress: every tool call the snippet made, and its output
    updates: list[Any] = [e.partial for e in events if isinstance(e, ToolExecutionUpdate)]
    calls = [u["tool_call"] for u in updates if "tool_call" in u]
    assert len(calls) == len(code_result.tool_calls) == 1 + 2 * 14
    printed = "".join(u["text"] for u in updates if u.get("stream") == "stdout")
    assert printed == code_result.stdout
    # usage: the API's numbers, equal to counting the requests as sent
    assert result.usage.requests == 2
    assert result.usage.input_tokens == sum(
        count_request_tokens("Use run_code.", (run_code.definition,), tuple(agent.messages[:i]))
        for i in (1, 3)
    )

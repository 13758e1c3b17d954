"""The pydantic-ai toolset: a real pydantic-ai Agent solves the demo task through run_code.

The model is pydantic-ai's own ``OpenAIChatModel`` over the real ``openai`` SDK, talking
to the scripted server on 127.0.0.1 (no network, no key).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from ptcbox.agent_glue import RunCodeTool, ScriptedOpenAIServer, ScriptedTurn
from ptcbox.agent_glue._wire_chat import chat_request_from_openai
from ptcbox.demo import GATHER_SNIPPET, TASK, expected_answer
from ptcbox.integrations.pydantic_ai import run_code_toolset

from .conftest import answer

pytestmark = pytest.mark.anyio


async def test_a_pydantic_ai_agent_solves_the_demo_task(
    run_code: RunCodeTool, demo_db: Path
) -> None:
    script = [ScriptedTurn("One snippet.", [("run_code", {"code": GATHER_SNIPPET})]), answer]
    with ScriptedOpenAIServer(script) as server:
        model = OpenAIChatModel("scripted", provider=OpenAIProvider(openai_client=server.client()))
        agent = Agent(model, toolsets=[run_code_toolset(run_code)], instructions="Use run_code.")
        result = await agent.run(TASK)
        first, second = server.requests
    for row in expected_answer(demo_db):
        assert f"{row['name']}: ${row['over_by']:,.2f} over" in result.output
    (offered,) = first["tools"]
    assert offered["function"]["name"] == "run_code"
    assert offered["function"]["description"] == run_code.description
    assert "def get_expenses(employee_id: str, quarter: str" in offered["function"]["description"]
    assert set(offered["function"]["parameters"]["properties"]) == {"code", "timeout"}
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and "[value] " in tool_message["content"]
    # token usage as pydantic-ai reports it: the scripted server's counts of each request
    usage = result.usage
    assert usage.requests == 2 and usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage.input_tokens == sum(
        chat_request_from_openai(body).input_tokens for body in (first, second)
    )


async def test_bad_code_comes_back_as_text_the_model_reads(run_code: RunCodeTool) -> None:
    script = [ScriptedTurn(tool_calls=[("run_code", {"code": "1 / 0"})]), lambda r: "noted"]
    with ScriptedOpenAIServer(script) as server:
        model = OpenAIChatModel("scripted", provider=OpenAIProvider(openai_client=server.client()))
        result = await Agent(model, toolsets=[run_code_toolset(run_code)]).run("divide")
        content = server.requests[1]["messages"][-1]["content"]
    assert result.output == "noted"
    assert content.startswith("[error: ZeroDivisionError]"), json.dumps(content)


def test_only_a_run_code_tool_is_accepted() -> None:
    with pytest.raises(TypeError, match="takes a ptcbox RunCodeTool"):
        run_code_toolset([len])  # type: ignore[arg-type]

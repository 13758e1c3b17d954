"""The OpenAI Agents SDK FunctionTool: a real Agents SDK agent solves the demo task.

The model is the SDK's own ``OpenAIResponsesModel`` over the real ``openai`` SDK, talking
to the scripted server's ``/v1/responses`` on 127.0.0.1; tracing is off (no export).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agents import Agent, RunConfig, Runner
from agents.models.openai_responses import OpenAIResponsesModel

from ptcbox.agent_glue import RunCodeTool, ScriptedOpenAIServer, ScriptedTurn
from ptcbox.demo import GATHER_SNIPPET, TASK, expected_answer
from ptcbox.integrations.openai_agents import run_code_tool

from .conftest import answer

pytestmark = pytest.mark.anyio


def _run_config() -> RunConfig:
    return RunConfig(tracing_disabled=True)


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_streamed"])
async def test_an_agents_sdk_agent_solves_the_demo_task(
    run_code: RunCodeTool, demo_db: Path, stream: bool
) -> None:
    script = [ScriptedTurn("One snippet.", [("run_code", {"code": GATHER_SNIPPET})]), answer]
    with ScriptedOpenAIServer(script) as server:
        agent = Agent(
            name="analyst",
            instructions="Use run_code.",
            tools=[run_code_tool(run_code)],
            model=OpenAIResponsesModel("scripted", openai_client=server.client()),
        )
        if stream:
            streamed = Runner.run_streamed(agent, TASK, run_config=_run_config())
            async for _ in streamed.stream_events():
                pass
            output, usage = streamed.final_output, streamed.context_wrapper.usage
        else:
            result = await Runner.run(agent, TASK, run_config=_run_config())
            output, usage = result.final_output, result.context_wrapper.usage
        first, second = server.requests
    assert server.paths == ["/v1/responses", "/v1/responses"]
    for row in expected_answer(demo_db):
        assert f"{row['name']}: ${row['over_by']:,.2f} over" in output
    (offered,) = first["tools"]
    assert offered["name"] == "run_code" and offered["description"] == run_code.description
    assert offered["strict"] is False
    outputs = [item for item in second["input"] if item.get("type") == "function_call_output"]
    assert len(outputs) == 1 and "[value] " in str(outputs[0]["output"])
    assert usage.requests == 2 and usage.input_tokens > 0 and usage.output_tokens > 0


async def test_malformed_arguments_come_back_as_an_error_text(run_code: RunCodeTool) -> None:
    script = [ScriptedTurn(tool_calls=[("run_code", '{"code": ')]), lambda r: "retrying"]
    with ScriptedOpenAIServer(script) as server:
        agent = Agent(
            name="a",
            tools=[run_code_tool(run_code)],
            model=OpenAIResponsesModel("scripted", openai_client=server.client()),
        )
        result = await Runner.run(agent, "x", run_config=_run_config())
        outputs = [
            i for i in server.requests[1]["input"] if i.get("type") == "function_call_output"
        ]
    assert result.final_output == "retrying"
    assert "invalid" in str(outputs[0]["output"]).lower()


def test_needs_approval_is_passed_to_the_sdk() -> None:
    assert run_code_tool(RunCodeTool(), needs_approval=True).needs_approval is True
    with pytest.raises(TypeError, match="takes a ptcbox RunCodeTool"):
        run_code_tool(object())  # type: ignore[arg-type]

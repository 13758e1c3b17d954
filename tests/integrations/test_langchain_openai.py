"""The LangChain tool with a real LangChain chat model: ``langchain-openai``'s ``ChatOpenAI``
over the real ``openai`` SDK, talking to the scripted server on 127.0.0.1 (no network).

The same demo task as the other adapters, through LangChain's own tool-calling loop
(``bind_tools``, ``ainvoke`` with each tool call), with the token usage LangChain reports
(``usage_metadata``) equal to the scripted server's count of each request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain_openai")

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

from ptcbox import CodeResult
from ptcbox.agent_glue import RunCodeTool, ScriptedOpenAIServer, ScriptedTurn
from ptcbox.agent_glue._wire_chat import chat_request_from_openai
from ptcbox.demo import GATHER_SNIPPET, TASK, expected_answer
from ptcbox.integrations.langchain import run_code_tool

from .conftest import answer

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("streaming", [False, True], ids=["invoke", "streaming"])
async def test_chat_openai_solves_the_demo_task_with_usage(
    run_code: RunCodeTool, demo_db: Path, streaming: bool
) -> None:
    tool = run_code_tool(run_code)
    script = [ScriptedTurn("One snippet.", [("run_code", {"code": GATHER_SNIPPET})]), answer]
    with ScriptedOpenAIServer(script) as server:
        model = ChatOpenAI(
            model="scripted",
            base_url=server.base_url,
            api_key="test",
            streaming=streaming,
            stream_usage=True,
            max_retries=0,
        ).bind_tools([tool])
        history: list[BaseMessage] = [HumanMessage(TASK)]
        input_tokens = output_tokens = 0
        while True:
            reply = await model.ainvoke(history)
            history.append(reply)
            assert isinstance(reply, AIMessage) and reply.usage_metadata is not None
            input_tokens += reply.usage_metadata["input_tokens"]
            output_tokens += reply.usage_metadata["output_tokens"]
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                history.append(await tool.ainvoke({**call, "type": "tool_call"}))
        first, second = server.requests
    tool_message = history[2]
    assert isinstance(tool_message, ToolMessage) and isinstance(tool_message.artifact, CodeResult)
    assert tool_message.artifact.ok and len(tool_message.artifact.tool_calls) == 29
    for row in expected_answer(demo_db):
        assert f"{row['name']}: ${row['over_by']:,.2f} over" in str(history[-1].content)
    (offered,) = first["tools"]
    assert offered["function"]["name"] == "run_code"
    assert offered["function"]["description"] == run_code.description
    # the usage LangChain reports is the server's count of each request as sent
    assert input_tokens == sum(chat_request_from_openai(b).input_tokens for b in (first, second))
    assert output_tokens > 0

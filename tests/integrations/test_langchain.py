"""The LangChain StructuredTool: a tool-calling loop over langchain-core's fake chat model.

``GenericFakeChatModel`` plays the model (its second answer is written from the tool
result it was given); the tool runs through LangChain's runnable interface (``ainvoke``
with a tool call gives a ``ToolMessage``; ``invoke`` is the sync path).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from ptcbox import CodeResult
from ptcbox.agent_glue import RunCodeTool, ToolRegistry
from ptcbox.demo import GATHER_SNIPPET, SEQUENTIAL_SNIPPET, TASK, ExpenseTools, expected_answer
from ptcbox.integrations.langchain import run_code_tool

from .conftest import answer_from

pytestmark = pytest.mark.anyio


def _model(history: list[BaseMessage]) -> GenericFakeChatModel:
    def turns() -> Iterator[AIMessage]:
        call = {"name": "run_code", "args": {"code": GATHER_SNIPPET}, "id": "call_1"}
        yield AIMessage(content="One snippet.", tool_calls=[call])
        yield AIMessage(content=answer_from(str(history[-1].content)))

    return GenericFakeChatModel(messages=turns())


async def test_a_langchain_tool_loop_solves_the_demo_task(
    run_code: RunCodeTool, demo_db: Path
) -> None:
    tool = run_code_tool(run_code)
    history: list[BaseMessage] = [HumanMessage(TASK)]
    model = _model(history)
    while True:
        reply = await model.ainvoke(history)
        history.append(reply)
        if not isinstance(reply, AIMessage) or not reply.tool_calls:
            break
        for call in reply.tool_calls:
            history.append(await tool.ainvoke(call))
    tool_message = history[2]
    assert isinstance(tool_message, ToolMessage) and tool_message.tool_call_id == "call_1"
    assert "[value] " in str(tool_message.content)
    code_result = tool_message.artifact
    assert isinstance(code_result, CodeResult) and code_result.ok
    assert len(code_result.tool_calls) == 29
    for row in expected_answer(demo_db):
        assert f"{row['name']}: ${row['over_by']:,.2f} over" in str(history[-1].content)
    # what a tool-calling model is offered: the stubs and the {code, timeout} schema
    spec = convert_to_openai_tool(tool)["function"]
    assert spec["name"] == "run_code" and spec["description"] == run_code.description
    assert set(spec["parameters"]["properties"]) == {"code", "timeout"}


def test_invoke_is_sync_and_safe_under_a_running_loop(demo_db: Path) -> None:
    run_code = RunCodeTool(ToolRegistry(ExpenseTools(demo_db).as_list()))

    async def notebook_cell() -> str:
        # plain arguments (not a tool call) give the content only
        return str(run_code_tool(run_code).invoke({"code": SEQUENTIAL_SNIPPET, "timeout": 20}))

    try:
        text = asyncio.run(notebook_cell())
    finally:
        from ptcbox._execute import run_blocking

        run_blocking(lambda _where: run_code.aclose())
    assert "[value] " in text
    assert answer_from(text).count(" over") == len(expected_answer(demo_db))


async def test_bad_code_is_text_not_an_exception(run_code: RunCodeTool) -> None:
    text = await run_code_tool(run_code).ainvoke({"code": "   "})
    assert text.startswith("Error: run_code got invalid arguments: 'code' is empty")

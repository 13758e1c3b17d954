"""A LangChain tool-calling loop that answers the demo question with ptcbox's run_code.

Needs ``pip install 'ptcbox[langchain]'`` (langchain-core only). The model here is
langchain-core's ``GenericFakeChatModel`` playing what a capable model does (one
``run_code`` call, then an answer from its result), so it runs offline; swap in any
tool-calling chat model with ``model.bind_tools([tool])``. Prints the answer.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from ptcbox.agent_glue import RunCodeTool, ToolRegistry
from ptcbox.demo import GATHER_SNIPPET, TASK, ExpenseTools, create_database
from ptcbox.integrations.langchain import run_code_tool


def scripted_model(history: list[BaseMessage]) -> GenericFakeChatModel:
    """A fake chat model: one run_code call, then an answer from the tool result."""

    def turns() -> Iterator[AIMessage]:
        call = {"name": "run_code", "args": {"code": GATHER_SNIPPET}, "id": "call_1"}
        yield AIMessage(content="", tool_calls=[call])
        found = re.search(r"^\[value\] (.*)$", str(history[-1].content), flags=re.MULTILINE)
        rows = json.loads(found.group(1)) if found else []
        yield AIMessage(
            content="\n".join(f"- {r['name']}: ${r['over_by']:,.2f} over" for r in rows)
        )

    return GenericFakeChatModel(messages=turns())


async def main() -> None:
    """Run the loop once and print what it found."""
    with tempfile.TemporaryDirectory() as tmp:
        registry = ToolRegistry(ExpenseTools(create_database(Path(tmp) / "expenses.db")).as_list())
        async with RunCodeTool(registry) as run_code:
            tool = run_code_tool(run_code)
            history: list[BaseMessage] = [HumanMessage(TASK)]
            model = scripted_model(history)
            while True:
                reply = await model.ainvoke(history)
                history.append(reply)
                if not isinstance(reply, AIMessage) or not reply.tool_calls:
                    break
                for call in reply.tool_calls:
                    print(f"> {call['name']}({len(call['args']['code'])} characters of code)")
                    history.append(await tool.ainvoke(call))
    print(f"Q: {TASK}\nA:\n{history[-1].content}")


if __name__ == "__main__":
    asyncio.run(main())

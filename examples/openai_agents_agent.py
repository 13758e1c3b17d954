"""An OpenAI Agents SDK agent that answers the demo question with ptcbox's run_code tool.

Needs ``pip install 'ptcbox[openai-agents]'``. By default the model is the SDK's own
``OpenAIResponsesModel`` talking to ptcbox's scripted server (``/v1/responses``) on
127.0.0.1, with tracing off (no key, no network); pass ``--base-url URL --model NAME``
(and ``OPENAI_API_KEY``) for a real endpoint. Prints the answer and the token usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import tempfile
from pathlib import Path

import openai
from agents import Agent, RunConfig, Runner
from agents.models.openai_responses import OpenAIResponsesModel

from ptcbox.agent_glue import (
    ChatRequest,
    RunCodeTool,
    ScriptedOpenAIServer,
    ScriptedTurn,
    ToolRegistry,
)
from ptcbox.demo import GATHER_SNIPPET, TASK, ExpenseTools, create_database
from ptcbox.integrations.openai_agents import run_code_tool


def answer(request: ChatRequest) -> str:
    """What the scripted model says after reading run_code's result."""
    result = next(m.content for m in reversed(request.messages) if m.role == "tool")
    rows = json.loads(re.search(r"^\[value\] (.*)$", result, flags=re.MULTILINE).group(1))  # type: ignore[union-attr]
    return "\n".join(f"- {row['name']}: ${row['over_by']:,.2f} over" for row in rows)


async def main(base_url: str | None, model_name: str) -> None:
    """Run the agent once and print what it found."""
    script = [
        ScriptedTurn("One snippet will do.", [("run_code", {"code": GATHER_SNIPPET})]),
        answer,
    ]
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer(script) as server:
        registry = ToolRegistry(ExpenseTools(create_database(Path(tmp) / "expenses.db")).as_list())
        client = openai.AsyncOpenAI(
            base_url=base_url or server.base_url, api_key=os.environ.get("OPENAI_API_KEY", "none")
        )
        async with RunCodeTool(registry) as run_code:
            agent = Agent(
                name="analyst",
                instructions="Use run_code.",
                tools=[run_code_tool(run_code)],
                model=OpenAIResponsesModel(model_name, openai_client=client),
            )
            config = RunConfig(tracing_disabled=base_url is None)
            result = await Runner.run(agent, TASK, run_config=config)
    usage = result.context_wrapper.usage
    print(f"Q: {TASK}\nA:\n{result.final_output}")
    tokens = f"{usage.input_tokens} input + {usage.output_tokens} output tokens"
    print(f"usage: {usage.requests} requests, {tokens}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base-url", default=None, help="endpoint (default: a scripted local server)"
    )
    parser.add_argument("--model", default="gpt-4.1-mini", help="model name")
    args = parser.parse_args()
    asyncio.run(main(args.base_url, args.model))

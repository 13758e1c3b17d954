"""An agent that answers the demo question with one run_code call, over the openai SDK.

By default it starts ptcbox's scripted OpenAI-compatible server on 127.0.0.1 (no key,
no network), so the whole loop runs for real: the openai SDK streams the model's turn,
the agent starts ``run_code`` as soon as its arguments are complete, the snippet calls
the demo's SQLite tools in a sandbox, and the model answers from the result.

Against a real endpoint::

    OPENAI_API_KEY=sk-... python examples/openai_agent.py \\
        --base-url https://api.openai.com/v1 --model gpt-4.1-mini
    OPENAI_API_KEY=... python examples/openai_agent.py \\
        --base-url http://localhost:8000/v1 --model my-model

Prints the run's events (tool calls, streamed snippet output), the answer and the
token usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import openai

from ptcbox.agent_glue import (
    Agent,
    AgentEvent,
    ChatProviderError,
    ChatRequest,
    OpenAIChatProvider,
    RunCodeTool,
    ScriptedOpenAIServer,
    ScriptedTurn,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolRegistry,
)
from ptcbox.demo import GATHER_SNIPPET, TASK, ExpenseTools, create_database

SYSTEM_PROMPT = (
    "You answer questions about the company's expenses. Use the run_code tool: write "
    "one Python snippet that calls the tools, computes the answer and prints it. "
    "Then answer in plain words, with the amounts."
)


def scripted_turns() -> list[Any]:
    """What a capable model does for the demo task: one snippet, then the answer."""
    return [
        ScriptedTurn(
            "I'll check every engineer's Q3 travel spending against their budget in one go.",
            [("run_code", {"code": GATHER_SNIPPET})],
        ),
        _answer_from_result,
    ]


def _answer_from_result(request: ChatRequest) -> str:
    result = next(m.content for m in reversed(request.messages) if m.role == "tool")
    found = re.search(r"^\[value\] (.*)$", result, flags=re.MULTILINE)
    if found is None:
        return "The snippet failed, so I cannot answer yet:\n" + result
    rows = json.loads(found.group(1))
    lines = [
        f"- {row['name']} ({row['id']}): ${row['over_by']:,.2f} over "
        f"(spent ${row['spent']:,.2f} of ${row['budget']:,.2f})"
        for row in rows
    ]
    return f"{len(rows)} engineers went over their Q3 travel budget:\n" + "\n".join(lines)


def _print_event(event: AgentEvent) -> None:
    if isinstance(event, ToolExecutionStart):
        print(f"> {event.tool_call.name}({len(event.tool_call.arguments)} characters of arguments)")
    elif isinstance(event, ToolExecutionUpdate) and isinstance(event.partial, dict):
        call = event.partial.get("tool_call")
        if call is not None:
            print(f"    {call['name']}({json.dumps(call['arguments'])}) ok={call['ok']}")
    elif isinstance(event, ToolExecutionEnd):
        print(f"< {event.tool_call.name}: {'error' if event.is_error else 'ok'}")


async def run(base_url: str | None, model: str, api_key: str | None, max_steps: int) -> int:
    """Run the agent once; returns a process exit status."""
    with tempfile.TemporaryDirectory() as tmp:
        db = create_database(Path(tmp) / "expenses.db")
        registry = ToolRegistry(ExpenseTools(db).as_list())
        server = ScriptedOpenAIServer(scripted_turns()) if base_url is None else None
        if server is not None:
            server.start()
        try:
            client = openai.AsyncOpenAI(
                base_url=server.base_url if server is not None else base_url,
                api_key=api_key or "scripted-server-needs-no-key",
            )
            async with RunCodeTool(registry, max_timeout=30) as run_code:
                agent = Agent(
                    OpenAIChatProvider(client, model),
                    [run_code],
                    SYSTEM_PROMPT,
                    max_steps=max_steps,
                    on_event=_print_event,
                )
                print(f"Q: {TASK}")
                result = await agent.run(TASK)
            await client.close()
        finally:
            if server is not None:
                server.stop()
    print(f"\nA: {result.final_text}\n")
    usage = result.usage
    print(
        f"stop: {result.stop_reason}; {result.steps} requests; "
        f"{usage.input_tokens} input + {usage.output_tokens} output tokens"
    )
    return 0 if result.stop_reason == "completed" else 1


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base-url",
        default=None,
        help="OpenAI-compatible endpoint (default: a scripted local server)",
    )
    parser.add_argument("--model", default="gpt-4.1-mini", help="model name")
    parser.add_argument("--max-steps", type=int, default=8, help="most model requests")
    args = parser.parse_args(argv)
    api_key = os.environ.get("OPENAI_API_KEY")
    try:
        return asyncio.run(run(args.base_url, args.model, api_key, args.max_steps))
    except ChatProviderError as exc:
        print(f"error: the model API failed: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

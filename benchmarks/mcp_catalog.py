"""Token cost over a 48-tool MCP server: classic tool calling vs run_code vs discovery.

``ptcbox bench mcp-catalog`` (or ``python benchmarks/mcp_catalog.py [--json]``) starts
``mcp_catalog_server.py`` over stdio, connects with :func:`ptcbox.mcp.mcp_tools`, and
plays one task three ways with every tool call really made against the server:

- ``classic``: every MCP tool's schema in each request (as an MCP client offers them);
  results flow through the model's context, turn by turn (parallel calls where possible);
- ``run_code``: one ``run_code`` tool whose description holds all 48 stubs;
- ``discovery``: ``run_code`` listing one line per tool; the code first calls
  ``search_tools`` for the stubs it needs, then does the work.

Tokens are counted as ``ptcbox bench tokens`` counts them (``count_request_tokens``:
``o200k_base`` over the exact requests). Each run is checked: the classic final answer
and the code's own output must state the answer computed from the server's data.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from ptcbox.agent_glue import RunCodeTool, ToolDefinition, count_request_tokens, count_tokens
from ptcbox.agent_glue._messages import Message, ToolCall
from ptcbox.mcp import DiscoveryRunCodeTool, MCPTools, mcp_tools
from ptcbox.runtimes import ThreadRuntime

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mcp_catalog_data as data  # noqa: E402 - the server's data, for the answer

SYSTEM = "You are an operations agent. Use the tools; never guess a number you can look up."
PROMPT = (
    "Across all warehouses, which SKUs have fewer available units (on hand minus reserved) "
    "than their reorder point? Give their number and the total cost in EUR of restocking "
    "each of them up to its target level at the current supplier quote."
)
CODE = """
count, cost = 0, 0.0
for w in inventory_list_warehouses():
    for row in inventory_get_stock_levels(warehouse=w):
        available = row["on_hand"] - row["reserved"]
        if available < row["reorder_point"]:
            quote = purchasing_get_supplier_quote(sku=row["sku"])
            count += 1
            cost += (row["target_level"] - available) * quote["unit_cost_eur"]
print(f"{count} SKUs below their reorder point; restock cost EUR {cost:.2f}")
"""
SEARCH = """
print(search_tools("warehouse stock levels reorder point", limit=3))
print(search_tools("supplier quote unit cost of a SKU", limit=3))
"""


@dataclass(slots=True)
class Run:
    """One trajectory's measurements."""

    mode: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    first_request_tokens: int = 0
    tool_calls: int = 0
    correct: bool = False


class Conversation:
    """A scripted model's conversation, counted request by request."""

    def __init__(self, mode: str, tools: Sequence[ToolDefinition]) -> None:
        self.run = Run(mode)
        self._tools = list(tools)
        self.messages = [Message.user(PROMPT)]
        self._ids = 0

    def _request(self) -> None:
        tokens = count_request_tokens(SYSTEM, self._tools, self.messages)
        if not self.run.requests:
            self.run.first_request_tokens = tokens
        self.run.requests += 1
        self.run.input_tokens += tokens

    async def turn(
        self,
        calls: Sequence[tuple[str, dict[str, Any]]],
        execute: Callable[[str, dict[str, Any]], Awaitable[str]],
    ) -> list[str]:
        """One assistant turn making ``calls`` (in parallel); returns the results."""
        self._request()
        tool_calls = []
        for name, arguments in calls:
            self._ids += 1
            tool_calls.append(ToolCall(f"call_{self._ids}", name, json.dumps(arguments)))
        message = Message.assistant("", tuple(tool_calls))
        self.messages.append(message)
        self.run.output_tokens += sum(count_tokens(c.name + c.arguments) for c in tool_calls)
        results = await asyncio.gather(*(execute(n, a) for n, a in calls))
        for call, text in zip(tool_calls, results, strict=True):
            self.messages.append(Message.tool(call.id, text, name=call.name))
        self.run.tool_calls += len(calls)
        return list(results)

    def final(self, text: str) -> None:
        """The closing answer."""
        self._request()
        self.messages.append(Message.assistant(text))
        self.run.output_tokens += count_tokens(text)


def _facts() -> tuple[str, str]:
    count, cost = data.restock_plan()
    return f"{count} SKUs", f"{cost:.2f}"


def _answer() -> str:
    count, cost = _facts()
    return f"{count} are below their reorder point; restocking them costs EUR {cost}."


async def classic(tools: MCPTools) -> Run:
    """Every MCP schema offered; results through the context."""
    definitions = [
        ToolDefinition(name, d.description or "", dict(d.input_schema))
        for name, d in tools.definitions.items()
    ]
    chat = Conversation("classic", definitions)
    seen: dict[str, Any] = {}  # what the scripted model reads in each result

    async def execute(name: str, arguments: dict[str, Any]) -> str:
        result = await tools[name].call_raw(arguments)
        seen[json.dumps([name, arguments])] = (result.structured_content or {}).get("result")
        return "\n".join(getattr(b, "text", "") for b in result.content)

    def read(name: str, arguments: dict[str, Any]) -> Any:
        return seen[json.dumps([name, arguments])]

    await chat.turn([("inventory_list_warehouses", {})], execute)
    codes = read("inventory_list_warehouses", {})
    calls = [("inventory_get_stock_levels", {"warehouse": w}) for w in codes]
    await chat.turn(calls, execute)
    low = [
        row
        for name, arguments in calls
        for row in read(name, arguments)
        if row["on_hand"] - row["reserved"] < row["reorder_point"]
    ]
    quotes = [("purchasing_get_supplier_quote", {"sku": r["sku"]}) for r in low]
    texts = await chat.turn(quotes, execute)
    chat.final(_answer())
    count, _ = _facts()
    cost = sum(
        (r["target_level"] - (r["on_hand"] - r["reserved"])) * json.loads(t)["unit_cost_eur"]
        for r, t in zip(low, texts, strict=True)
    )
    chat.run.correct = len(low) == int(count.split()[0]) and f"{cost:.2f}" in _answer()
    return chat.run


async def with_code(tools: MCPTools, *, discovery: bool) -> Run:
    """``run_code`` with every stub, or in discovery mode."""
    async with ThreadRuntime() as runtime:
        kind = DiscoveryRunCodeTool if discovery else RunCodeTool
        tool = kind(tools, runtime=runtime)
        definition = ToolDefinition(tool.name, tool.description, dict(tool.parameters))
        chat = Conversation("discovery" if discovery else "run_code", [definition])
        outputs: list[str] = []

        async def execute(name: str, arguments: dict[str, Any]) -> str:
            result = await runtime.execute(arguments["code"], tool.namespace())
            outputs.append(result.stdout)
            return result.render()

        found = True
        if discovery:
            (stubs,) = await chat.turn([("run_code", {"code": SEARCH.strip()})], execute)
            needed = ("def inventory_get_stock_levels(", "def purchasing_get_supplier_quote(")
            found = all(stub in stubs for stub in needed)
        await chat.turn([("run_code", {"code": CODE.strip()})], execute)
        chat.final(_answer())
        chat.run.correct = found and all(fact in outputs[-1] for fact in _facts())
        return chat.run


async def measure() -> dict[str, Any]:
    """Run the three trajectories; returns JSON-ready results."""
    server = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "mcp_catalog_server.py")]
    )
    async with mcp_tools(server) as tools:
        runs = [await classic(tools), await with_code(tools, discovery=False)]
        runs.append(await with_code(tools, discovery=True))
    return {"tools": len(tools), "answer": _answer(), "runs": [asdict(r) for r in runs]}


def render(results: dict[str, Any]) -> str:
    """A Markdown table of the results."""
    lines = [
        f"{results['tools']} MCP tools; answer: {results['answer']}",
        "",
        "| mode | requests | tool calls | first request | input tokens | output tokens | correct |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results["runs"]:
        lines.append(
            f"| {r['mode']} | {r['requests']} | {r['tool_calls']} | {r['first_request_tokens']:,}"
            f" | {r['input_tokens']:,} | {r['output_tokens']:,} | {r['correct']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ptcbox bench mcp-catalog``; exit code 1 if a run was wrong."""
    parser = argparse.ArgumentParser(prog="ptcbox bench mcp-catalog", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    results = asyncio.run(measure())
    print(json.dumps(results, indent=2) if args.json else render(results))
    return 0 if all(r["correct"] for r in results["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())

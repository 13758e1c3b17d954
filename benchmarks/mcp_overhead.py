"""Per-call cost of an MCP tool call from a snippet vs calling the MCP tool from the host.

``ptcbox bench mcp-overhead`` (or ``python benchmarks/mcp_overhead.py [--json]``) starts
``examples/mcp_inventory_server.py`` over stdio and times one tool, ``get-stock``:

- ``host: mcp.Client.call_tool``: the SDK call, awaited one after another;
- ``host: MCPToolProjection``: the same through ptcbox's projection (argument mapping,
  result decoding), still from the host;
- ``snippet: ThreadRuntime`` / ``snippet: SubprocessRuntime``: a snippet that calls
  ``get_stock(sku=...)`` ``--calls`` times in a loop, minus the same loop without the
  call, divided by the number of calls.

Each figure is the median over ``--rounds`` rounds (the runners take turns, in a
shuffled order each round), in
microseconds per call. The round trip to the server process dominates; the difference
between the rows is what ptcbox adds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from ptcbox.mcp import mcp_tools
from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime

SERVER = Path(__file__).resolve().parents[1] / "examples" / "mcp_inventory_server.py"


async def _per_call(fn: Callable[[], Awaitable[Any]], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await fn()
    return (time.perf_counter() - start) / calls


async def measure(calls: int, rounds: int) -> dict[str, Any]:
    """Time each way of calling; returns medians in µs per call and the overheads."""
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    loop = f"for _ in range({calls}):\n    get_stock(sku='A1')\n"
    empty = f"for _ in range({calls}):\n    pass\n"
    samples: dict[str, list[float]] = {}
    async with (
        mcp_tools(params) as tools,
        ThreadRuntime() as thread,
        SubprocessRuntime() as subprocess,
    ):
        projection = tools["get_stock"]
        client = projection.client  # the projection's own client, for the direct row

        async def direct() -> Any:
            return await client.call_tool("get-stock", {"sku": "A1"})

        async def projected() -> Any:
            return await projection.call({"sku": "A1"})

        runtimes = {"snippet: ThreadRuntime": thread, "snippet: SubprocessRuntime": subprocess}

        def host(fn: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[float]]:
            return lambda: _per_call(fn, calls)

        def snippet(runtime: Any) -> Callable[[], Awaitable[float]]:
            async def timed() -> float:
                start = time.perf_counter()
                result = await runtime.execute(loop, tools)
                with_calls = time.perf_counter() - start
                assert result.ok, result.render()
                start = time.perf_counter()
                await runtime.execute(empty, tools)
                return (with_calls - (time.perf_counter() - start)) / calls

            return timed

        runners = {
            "host: mcp.Client.call_tool": host(direct),
            "host: MCPToolProjection": host(projected),
            **{label: snippet(runtime) for label, runtime in runtimes.items()},
        }
        for run in runners.values():  # warm up every path once
            await run()
        order = list(runners)
        shuffle = random.Random(14)
        for _ in range(rounds):
            shuffle.shuffle(order)  # no runner always follows the same one
            for label in order:
                samples.setdefault(label, []).append(await runners[label]())
        samples = {label: samples[label] for label in runners}
    medians = {k: statistics.median(v) * 1e6 for k, v in samples.items()}
    base = medians["host: mcp.Client.call_tool"]
    return {
        "calls_per_round": calls,
        "rounds": rounds,
        "median_us_per_call": medians,
        "overhead_us_vs_direct": {k: v - base for k, v in medians.items()},
    }


def render(results: dict[str, Any]) -> str:
    """A Markdown table of the results."""
    lines = [
        f"{results['calls_per_round']} calls per round, {results['rounds']} rounds, medians",
        "",
        "| how `get-stock` is called | µs per call | added vs direct |",
        "|---|---|---|",
    ]
    for label, value in results["median_us_per_call"].items():
        added = results["overhead_us_vs_direct"][label]
        lines.append(f"| {label} | {value:.0f} | {added:+.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``ptcbox bench mcp-overhead``."""
    parser = argparse.ArgumentParser(prog="ptcbox bench mcp-overhead", description=__doc__)
    parser.add_argument("--calls", type=int, default=200, help="tool calls per round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (median over them)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    results = asyncio.run(measure(args.calls, args.rounds))
    print(json.dumps(results, indent=2) if args.json else render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

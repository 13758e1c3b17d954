"""Async tools, and a snippet that fans tool calls out with ``await asyncio.gather``.

    .venv/bin/python examples/async_gather.py

Async tools run on the caller's event loop. A snippet with top-level ``await`` gets
awaitable tools, so ``asyncio.gather`` runs the calls concurrently on the host (bounded
by ``SandboxPolicy.max_concurrent_tool_calls``).
"""

from __future__ import annotations

import asyncio

import ptcbox

QUOTES = {"ACME": 101.5, "GLOBEX": 58.25, "INITECH": 12.0, "UMBRELLA": 230.75}
in_flight = 0
peak_in_flight = 0


async def get_quote(symbol: str) -> float:
    """Latest price of a stock symbol, in US dollars (a slow remote call)."""
    global in_flight, peak_in_flight
    in_flight += 1
    peak_in_flight = max(peak_in_flight, in_flight)
    try:
        await asyncio.sleep(0.05)
        return QUOTES[symbol]
    finally:
        in_flight -= 1


SNIPPET = """
import asyncio

symbols = ["ACME", "GLOBEX", "INITECH", "UMBRELLA"]
prices = await asyncio.gather(*[get_quote(symbol=s) for s in symbols])
for symbol, price in zip(symbols, prices):
    print(f"{symbol}: {price:.2f}")
max(zip(prices, symbols))[1]
"""


async def main() -> None:
    result = await ptcbox.aexecute(SNIPPET, tools=[get_quote])
    print(result.stdout, end="")
    print("most expensive:", result.value)
    print("tool calls:", len(result.tool_calls), "peak in flight:", peak_in_flight)


if __name__ == "__main__":
    asyncio.run(main())

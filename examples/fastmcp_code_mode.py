"""FastMCP's CodeMode with ptcbox as its sandbox: full CPython instead of Monty, one line.

``python examples/fastmcp_code_mode.py`` runs a model-style ``execute`` call through
FastMCP's in-memory client; ``--serve`` serves the server over stdio instead. Needs the
``fastmcp`` extra.
"""

from __future__ import annotations

import asyncio
import sys

from fastmcp import Client, FastMCP
from fastmcp.experimental.transforms.code_mode import CodeMode

from ptcbox.integrations.fastmcp import PtcboxSandboxProvider

mcp = FastMCP("shop")


@mcp.tool
def get_price(sku: str) -> float:
    """Price of one SKU in EUR."""
    return {"A1": 12.5, "B2": 3.0, "C3": 20.0}[sku]


@mcp.tool
def list_skus() -> list[str]:
    """Every SKU in the catalog."""
    return ["A1", "B2", "C3"]


# The one line: CodeMode() alone would run the code on pydantic-monty.
mcp.add_transform(CodeMode(sandbox_provider=PtcboxSandboxProvider("subprocess")))

CODE = """
import statistics
skus = (await call_tool("list_skus", {}))["result"]
prices = {s: (await call_tool("get_price", {"sku": s}))["result"] for s in skus}
return {"most_expensive": max(prices, key=prices.get), "median": statistics.median(prices.values())}
"""


async def main() -> None:
    async with Client(mcp) as client:
        print("tools the model sees:", sorted(t.name for t in await client.list_tools()))
        result = await client.call_tool("execute", {"code": CODE})
    print("result:", result.structured_content)


if __name__ == "__main__":
    if "--serve" in sys.argv:
        mcp.run()
    else:
        asyncio.run(main())

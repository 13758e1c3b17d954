"""A 48-tool MCP server (the SDK's ``MCPServer``) for the catalog token benchmark.

Eight business domains (CRM, billing, inventory, purchasing, HR, support, shipping,
marketing) with six tools each, typed the way real servers declare them: pydantic
models as output schemas, enums, optional arguments with defaults, descriptions on every
argument. The data is deterministic (``mcp_catalog_data.py``, seeded), so the task's
answer is known: ``mcp_catalog_data.restock_plan()`` computes it from the data alone.

Run: ``python benchmarks/mcp_catalog_server.py`` (stdio).
"""

from __future__ import annotations

import inspect
import sys
import zlib
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mcp_catalog_data import QUOTES, STOCK, WAREHOUSES, StockLevel, SupplierQuote
from mcp_catalog_domains import DOMAINS
from pydantic import BaseModel, Field

server = MCPServer("company-ops", log_level="WARNING")

# -- the tools the task needs ----------------------------------------------------------


@server.tool(name="inventory.list_warehouses")
def list_warehouses() -> list[str]:
    """List the codes of all warehouses."""
    return list(WAREHOUSES)


@server.tool(name="inventory.get_stock_levels")
def get_stock_levels(
    warehouse: Annotated[str, Field(description="Warehouse code from list_warehouses.")],
    include_zero: Annotated[bool, Field(description="Include SKUs with nothing on hand.")] = True,
) -> list[StockLevel]:
    """Stock levels of every SKU in one warehouse, with reorder points and targets."""
    if warehouse not in STOCK:
        raise ToolError(f"unknown warehouse {warehouse!r}; known: {', '.join(WAREHOUSES)}")
    return [r for r in STOCK[warehouse] if include_zero or r.on_hand > 0]


@server.tool(name="purchasing.get_supplier_quote")
def get_supplier_quote(
    sku: Annotated[str, Field(description="The SKU to price.")],
) -> SupplierQuote:
    """The current supplier quote (unit cost in EUR, minimum order, lead time) for a SKU."""
    if sku not in QUOTES:
        raise ToolError(f"no quote for {sku!r}")
    return QUOTES[sku]


# -- the rest of the catalog -------------------------------------------------------------


class Record(BaseModel):
    """A generic business record."""

    id: str
    kind: str
    status: Literal["open", "closed", "pending"]
    owner: str
    created_at: str
    summary: str
    amount_eur: float | None = None


def _make(domain: str, name: str, doc: str, params: list[tuple[str, Any, Any, str]]) -> None:
    def tool(**kwargs: Any) -> Record:
        return Record(
            id=f"{domain.upper()}-{zlib.crc32(repr(sorted(kwargs.items())).encode()) % 10_000}",
            kind=name,
            status="open",
            owner="ops",
            created_at="2025-11-02T09:00:00Z",
            summary=f"{name} with {kwargs}",
        )

    signature = inspect.Signature(
        [
            inspect.Parameter(
                p,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if default is ... else default,
                annotation=Annotated[kind, Field(description=text)],
            )
            for p, kind, default, text in params
        ],
        return_annotation=Record,
    )
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {p: Annotated[k, Field(description=t)] for p, k, _, t in params}
    tool.__annotations__["return"] = Record
    tool.__name__ = f"{domain}_{name}"
    tool.__doc__ = doc
    server.add_tool(tool, name=f"{domain}.{name}", description=doc)


for _domain, _tools in DOMAINS.items():
    for _name, _doc, _params in _tools:
        _make(_domain, _name, _doc, _params)

TOOL_COUNT = 3 + sum(len(v) for v in DOMAINS.values())

if __name__ == "__main__":
    server.run()

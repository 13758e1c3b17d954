"""The deterministic data behind ``mcp_catalog_server.py``, and the task's answer."""

from __future__ import annotations

import random

from pydantic import BaseModel, Field

WAREHOUSES = ("BER", "LYS", "RTM")
_rng = random.Random(48)


class StockLevel(BaseModel):
    """Stock of one SKU in one warehouse."""

    sku: str
    name: str
    on_hand: int = Field(description="Units physically in the warehouse.")
    reserved: int = Field(description="Units promised to open orders.")
    reorder_point: int = Field(description="Reorder when on_hand - reserved falls below this.")
    target_level: int = Field(description="Restock up to this many available units.")
    bin: str
    last_counted: str


class SupplierQuote(BaseModel):
    """A supplier's price for one SKU."""

    sku: str
    supplier_id: str
    unit_cost_eur: float
    min_order_qty: int
    lead_time_days: int
    valid_until: str


STOCK: dict[str, list[StockLevel]] = {}
QUOTES: dict[str, SupplierQuote] = {}
for _w in WAREHOUSES:
    rows = []
    for _n in range(14):
        sku = f"SKU-{_w[0]}{100 + _n * 7}"
        point = _rng.randint(10, 60)
        rows.append(
            StockLevel(
                sku=sku,
                name=f"part {sku.lower()}",
                on_hand=_rng.randint(0, 140),
                reserved=_rng.randint(0, 25),
                reorder_point=point,
                target_level=point * 3,
                bin=f"{_w}-{_rng.randint(1, 40):02d}-{_rng.choice('ABCD')}",
                last_counted=f"2025-0{_rng.randint(1, 9)}-{_rng.randint(10, 28)}",
            )
        )
        QUOTES[sku] = SupplierQuote(
            sku=sku,
            supplier_id=f"SUP-{_rng.randint(1, 9)}",
            unit_cost_eur=round(_rng.uniform(1.5, 80.0), 2),
            min_order_qty=_rng.choice([1, 5, 10]),
            lead_time_days=_rng.randint(2, 30),
            valid_until="2026-03-31",
        )
    STOCK[_w] = rows


def restock_plan() -> tuple[int, float]:
    """The task's answer from the data: (SKUs below their reorder point, restock cost EUR)."""
    count, cost = 0, 0.0
    for rows in STOCK.values():
        for row in rows:
            available = row.on_hand - row.reserved
            if available < row.reorder_point:
                count += 1
                cost += (row.target_level - available) * QUOTES[row.sku].unit_cost_eur
    return count, round(cost, 2)

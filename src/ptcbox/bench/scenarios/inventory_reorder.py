"""Inventory reorder list.

Which SKUs need a purchase order, and how many units, given stock in three warehouses,
sales velocity and supplier terms? Classic: list warehouses, fetch each one's stock, the
sales velocity and the supplier terms (five calls in parallel), answer. PTC: one snippet.
"""

from __future__ import annotations

import math
import random
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn

SAFETY_DAYS = 14
COVER_DAYS = 30
_WAREHOUSES = [
    ("wh-rtm", "Rotterdam DC", "Rotterdam", 5200, "Sanne de Vries"),
    ("wh-lyo", "Lyon DC", "Lyon", 3100, "Julien Marchand"),
    ("wh-poz", "Poznan DC", "Poznan", 4400, "Marta Nowak"),
]
_ITEMS = [
    "Stainless bolt M8x40 (box of 100)",
    "Nylon lock nut M8 (box of 200)",
    "Cable tie 300 mm (bag of 500)",
    "Safety gloves size L (pair)",
    "Hi-vis vest, orange",
    "Pallet wrap 500 mm x 300 m",
    "Packing tape 48 mm x 66 m",
    "Corrugated box 40x30x30",
    "Label roll 100x150 (1000)",
    "Barcode scanner battery",
    "Hand pallet truck wheel",
    "LED shop light 120 cm",
    "Extension cord 10 m",
    "Cordless drill 18 V",
    "Drill bit set HSS 19 pcs",
    "Ear defenders SNR 30",
    "Safety glasses clear",
    "First-aid kit refill",
    "Floor marking tape yellow",
    "Shelf label holder 39 mm",
    "Zip bag 200x300 (1000)",
    "Bubble wrap roll 1 m x 50 m",
]


def _build() -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(777)
    skus = [f"SKU-{4100 + 13 * n}" for n in range(len(_ITEMS))]
    velocity, terms = [], []
    daily: dict[str, float] = {}
    for sku in skus:
        sold = rng.randint(20, 900)
        daily[sku] = round(sold / 28, 2)
        velocity.append(
            {
                "sku": sku,
                "units_sold": sold,
                "days": 28,
                "avg_daily_units": daily[sku],
                "trend": rng.choice(["flat", "up", "down"]),
                "returns": rng.randint(0, 12),
            }
        )
        pack = rng.choice([1, 6, 10, 12, 24, 50])
        terms.append(
            {
                "sku": sku,
                "supplier": rng.choice(["Wurth", "RS Components", "Manutan", "Raja", "Fastenal"]),
                "lead_time_days": rng.randint(3, 35),
                "min_order_qty": pack * rng.randint(2, 10),
                "pack_size": pack,
                "unit_cost": round(rng.uniform(0.8, 140), 2),
                "currency": "EUR",
            }
        )
    stock: dict[str, list[dict[str, Any]]] = {}
    for wh_id, *_rest in _WAREHOUSES:
        rows = []
        for n, sku in enumerate(skus):
            on_hand = int(daily[sku] * rng.uniform(2, 24))
            rows.append(
                {
                    "sku": sku,
                    "description": _ITEMS[n],
                    "on_hand": on_hand,
                    "reserved": int(on_hand * rng.uniform(0, 0.4)),
                    "bin": f"{wh_id[3:].upper()}-{rng.randint(1, 40):02d}-{rng.choice('ABCDEF')}",
                    "last_counted": f"2025-04-{rng.randint(1, 30):02d}",
                }
            )
        stock[wh_id] = rows
    return stock, velocity, terms


_STOCK, _VELOCITY, _TERMS = _build()


def list_warehouses() -> list[dict[str, Any]]:
    """List the distribution centres.

    Returns:
        One dict per warehouse: ``warehouse_id``, ``name``, ``city``,
        ``capacity_pallets``, ``manager``.
    """
    return [
        {"warehouse_id": w, "name": n, "city": c, "capacity_pallets": cap, "manager": m}
        for w, n, c, cap, m in _WAREHOUSES
    ]


def get_stock_levels(warehouse_id: str) -> list[dict[str, Any]]:
    """Return the stock of every SKU in one warehouse.

    Args:
        warehouse_id: A warehouse id from ``list_warehouses``.

    Returns:
        One dict per SKU: ``sku``, ``description``, ``on_hand`` (units), ``reserved``
        (units promised to open orders), ``bin``, ``last_counted``.

    Raises:
        KeyError: If the warehouse does not exist.
    """
    return [dict(row) for row in _STOCK[warehouse_id]]


def get_sales_velocity(days: int = 28) -> list[dict[str, Any]]:
    """Return units sold per SKU over the trailing window (all warehouses).

    Args:
        days: Window length; only 28 is available.

    Returns:
        One dict per SKU: ``sku``, ``units_sold``, ``days``, ``avg_daily_units``,
        ``trend``, ``returns``.

    Raises:
        ValueError: If ``days`` is not 28.
    """
    if days != 28:
        raise ValueError("only a 28-day window is available")
    return [dict(row) for row in _VELOCITY]


def get_supplier_terms() -> list[dict[str, Any]]:
    """Return the purchasing terms of every SKU.

    Returns:
        One dict per SKU: ``sku``, ``supplier``, ``lead_time_days``, ``min_order_qty``,
        ``pack_size`` (orders are whole packs), ``unit_cost``, ``currency``.
    """
    return [dict(row) for row in _TERMS]


def _reorder(
    stock: list[list[dict[str, Any]]], velocity: list[dict[str, Any]], terms: list[dict[str, Any]]
) -> list[tuple[str, int]]:
    available: dict[str, int] = {}
    for rows in stock:
        for row in rows:
            available[row["sku"]] = available.get(row["sku"], 0) + row["on_hand"] - row["reserved"]
    daily = {row["sku"]: row["avg_daily_units"] for row in velocity}
    orders = []
    for term in terms:
        sku, lead = term["sku"], term["lead_time_days"]
        if available[sku] < daily[sku] * (lead + SAFETY_DAYS):
            shortfall = daily[sku] * (lead + COVER_DAYS) - available[sku]
            packs = math.ceil(shortfall / term["pack_size"])
            orders.append((sku, max(term["min_order_qty"], packs * term["pack_size"])))
    return sorted(orders)


def reference() -> list[tuple[str, int]]:
    """The reorder list as ``(sku, units to order)``, sorted by SKU."""
    return _reorder(list(_STOCK.values()), _VELOCITY, _TERMS)


def solve(fetch: Fetch) -> list[tuple[str, int]]:
    """The answer from tool results: every warehouse's stock, velocity, supplier terms."""
    stock = [
        fetch("get_stock_levels", warehouse_id=w["warehouse_id"]) for w in fetch("list_warehouses")
    ]
    return _reorder(stock, fetch("get_sales_velocity", days=28), fetch("get_supplier_terms"))


EXPECTED = [
    ("SKU-4100", 180),
    ("SKU-4113", 144),
    ("SKU-4178", 24),
    ("SKU-4191", 1114),
    ("SKU-4243", 500),
    ("SKU-4256", 73),
    ("SKU-4269", 200),
    ("SKU-4295", 456),
    ("SKU-4308", 570),
    ("SKU-4334", 683),
    ("SKU-4373", 102),
]

PROMPT = (
    "Build this week's reorder list. Available stock of a SKU = on_hand - reserved, "
    "summed over all warehouses. Reorder a SKU when available < avg_daily_units * "
    "(lead_time_days + 14). Order enough to cover avg_daily_units * (lead_time_days + 30) "
    "minus what is available, rounded up to whole packs, and at least the supplier's "
    "min_order_qty. List SKU, description and units to order."
)

CLASSIC = (
    turn(call("list_warehouses"), call("get_sales_velocity", days=28), call("get_supplier_terms")),
    turn(*(call("get_stock_levels", warehouse_id=w[0]) for w in _WAREHOUSES)),
)
PTC = run_code(
    """
    import math
    available = {}
    names = {}
    for wh in list_warehouses():
        for row in get_stock_levels(warehouse_id=wh["warehouse_id"]):
            available[row["sku"]] = available.get(row["sku"], 0) + row["on_hand"] - row["reserved"]
            names[row["sku"]] = row["description"]
    daily = {v["sku"]: v["avg_daily_units"] for v in get_sales_velocity(days=28)}
    for t in sorted(get_supplier_terms(), key=lambda t: t["sku"]):
        sku, lead = t["sku"], t["lead_time_days"]
        if available[sku] < daily[sku] * (lead + 14):
            short = daily[sku] * (lead + 30) - available[sku]
            qty = max(t["min_order_qty"], math.ceil(short / t["pack_size"]) * t["pack_size"])
            print(f"{sku} ({names[sku]}): order {qty} units")
    """
)


def _answer() -> str:
    names = {row["sku"]: row["description"] for row in _STOCK["wh-rtm"]}
    lines = [f"- {sku} ({names[sku]}): order {qty} units" for sku, qty in EXPECTED]
    return "These SKUs need a purchase order this week:\n\n" + "\n".join(lines)


SCENARIO = Scenario(
    name="inventory_reorder",
    title="Inventory reorder list",
    prompt=PROMPT,
    tools=(list_warehouses, get_stock_levels, get_sales_velocity, get_supplier_terms),
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=tuple(f"{sku} " for sku, _ in EXPECTED) + tuple(f"order {q} units" for _, q in EXPECTED),
    absent=tuple(t["sku"] for t in _TERMS if t["sku"] not in dict(EXPECTED)),
    classic=(*CLASSIC, final(_answer())),
    ptc=(turn(PTC), final(_answer())),
    # Five large tables to join: the snippet is cheaper than the direct calls.
    hybrid=(turn(PTC), final(_answer())),
)

"""Top products by margin across categories.

Which five in-stock products have the highest gross margin across the catalogue?
Classic: list categories, then every category's product list and cost sheet (ten calls in
parallel), answer. PTC: one snippet joins prices and costs and prints the top five.
"""

from __future__ import annotations

import random
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn

_CATEGORIES = [
    ("c-audio", "Audio", "Headphones, speakers and microphones"),
    ("c-cameras", "Cameras", "Mirrorless, action and instant cameras"),
    ("c-home", "Smart home", "Thermostats, plugs, locks and hubs"),
    ("c-laptops", "Laptops", "Ultrabooks, workstations and Chromebooks"),
    ("c-wearables", "Wearables", "Watches, rings and fitness bands"),
]
_BRANDS = ["Acme", "Nordlys", "Kestrel", "Vantage", "Orbit", "Lumen", "Tessera", "Halcyon"]
_NOUNS = {
    "c-audio": ["Headphones", "Earbuds", "Soundbar", "Speaker", "Microphone", "DAC"],
    "c-cameras": ["Mirrorless Body", "Action Cam", "Instant Camera", "Zoom Lens", "Gimbal"],
    "c-home": ["Thermostat", "Smart Plug", "Door Lock", "Hub", "Video Doorbell", "Sensor"],
    "c-laptops": ["Ultrabook 13", "Ultrabook 15", "Workstation 16", "Chromebook", "Dock"],
    "c-wearables": ["Smartwatch", "Fitness Band", "Smart Ring", "Sport Watch", "Strap"],
}
_PRICE_RANGE = {
    "c-audio": (39, 499),
    "c-cameras": (149, 2199),
    "c-home": (19, 329),
    "c-laptops": (299, 2899),
    "c-wearables": (29, 799),
}


def _build() -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    rng = random.Random(4242)
    products: dict[str, list[dict[str, Any]]] = {}
    costs: dict[str, list[dict[str, Any]]] = {}
    for cat_id, _name, _desc in _CATEGORIES:
        low, high = _PRICE_RANGE[cat_id]
        rows, cost_rows = [], []
        for n in range(14):
            sku = f"{cat_id[2:5].upper()}-{1000 + n * 7}"
            price = round(rng.uniform(low, high), 0) - 0.01
            margin = rng.uniform(0.08, 0.52)
            unit_cost = round(price * (1 - margin) * 0.85, 2)
            rows.append(
                {
                    "sku": sku,
                    "name": f"{rng.choice(_BRANDS)} {rng.choice(_NOUNS[cat_id])} {n + 1}",
                    "brand": rng.choice(_BRANDS),
                    "price": price,
                    "currency": "USD",
                    "rating": round(rng.uniform(3.1, 4.9), 1),
                    "review_count": rng.randint(3, 4800),
                    "in_stock": rng.random() > 0.2,
                    "updated_at": f"2025-05-{rng.randint(1, 28):02d}T09:00:00Z",
                }
            )
            cost_rows.append(
                {
                    "sku": sku,
                    "unit_cost": unit_cost,
                    "freight_per_unit": round(price * rng.uniform(0.02, 0.08), 2),
                    "duty_rate": rng.choice([0.0, 0.025, 0.04, 0.06]),
                    "supplier": f"SUP-{rng.randint(10, 99)}",
                    "valid_from": "2025-04-01",
                }
            )
        products[cat_id] = rows
        costs[cat_id] = cost_rows
    return products, costs


_PRODUCTS, _COSTS = _build()


def list_categories() -> list[dict[str, Any]]:
    """List the catalogue's product categories.

    Returns:
        One dict per category: ``category_id``, ``name``, ``description``,
        ``product_count``.
    """
    return [
        {
            "category_id": cat_id,
            "name": name,
            "description": desc,
            "product_count": len(_PRODUCTS[cat_id]),
        }
        for cat_id, name, desc in _CATEGORIES
    ]


def list_products(category_id: str) -> list[dict[str, Any]]:
    """List the products of a category with their current list price.

    Args:
        category_id: A category id from ``list_categories``.

    Returns:
        One dict per product: ``sku``, ``name``, ``brand``, ``price`` (USD),
        ``currency``, ``rating``, ``review_count``, ``in_stock``, ``updated_at``.

    Raises:
        KeyError: If the category does not exist.
    """
    if category_id not in _PRODUCTS:
        raise KeyError(f"unknown category {category_id!r}")
    return [dict(row) for row in _PRODUCTS[category_id]]


def get_cost_sheet(category_id: str) -> list[dict[str, Any]]:
    """Return the landed-cost inputs of every product in a category.

    Landed cost per unit = ``unit_cost * (1 + duty_rate) + freight_per_unit``.

    Args:
        category_id: A category id from ``list_categories``.

    Returns:
        One dict per product: ``sku``, ``unit_cost`` (USD), ``freight_per_unit`` (USD),
        ``duty_rate`` (fraction of unit cost), ``supplier``, ``valid_from``.

    Raises:
        KeyError: If the category does not exist.
    """
    if category_id not in _COSTS:
        raise KeyError(f"unknown category {category_id!r}")
    return [dict(row) for row in _COSTS[category_id]]


def _top_five(
    tables: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]],
) -> list[tuple[str, float]]:
    ranked = []
    for products, costs in tables:
        cost_by_sku = {row["sku"]: row for row in costs}
        for product in products:
            if not product["in_stock"]:
                continue
            c = cost_by_sku[product["sku"]]
            landed = c["unit_cost"] * (1 + c["duty_rate"]) + c["freight_per_unit"]
            margin = (product["price"] - landed) / product["price"] * 100
            ranked.append((round(margin, 1), product["sku"]))
    ranked.sort(reverse=True)
    return [(sku, margin) for margin, sku in ranked[:5]]


def reference() -> list[tuple[str, float]]:
    """The five in-stock SKUs with the highest gross margin, as ``(sku, margin %)``."""
    return _top_five([(_PRODUCTS[cat], _COSTS[cat]) for cat, _name, _desc in _CATEGORIES])


def solve(fetch: Fetch) -> list[tuple[str, float]]:
    """The answer from tool results: every category's products and cost sheet."""
    return _top_five(
        [
            (
                fetch("list_products", category_id=cat["category_id"]),
                fetch("get_cost_sheet", category_id=cat["category_id"]),
            )
            for cat in fetch("list_categories")
        ]
    )


EXPECTED = [
    ("WEA-1021", 53.5),
    ("AUD-1063", 52.1),
    ("WEA-1049", 51.5),
    ("WEA-1007", 50.6),
    ("HOM-1063", 50.4),
]

PROMPT = (
    "Which five in-stock products have the highest gross margin across all categories? "
    "Gross margin = (price - landed cost) / price, with landed cost = unit_cost * "
    "(1 + duty_rate) + freight_per_unit. List SKU, name and margin in percent with one "
    "decimal, best first."
)

_CAT_IDS = [cat[0] for cat in _CATEGORIES]

CLASSIC = (
    turn(call("list_categories")),
    turn(
        *(call("list_products", category_id=cat) for cat in _CAT_IDS),
        *(call("get_cost_sheet", category_id=cat) for cat in _CAT_IDS),
        text="Fetching products and cost sheets for all five categories.",
    ),
)
PTC = run_code(
    """
    ranked = []
    for cat in list_categories():
        costs = {c["sku"]: c for c in get_cost_sheet(category_id=cat["category_id"])}
        for p in list_products(category_id=cat["category_id"]):
            if not p["in_stock"]:
                continue
            c = costs[p["sku"]]
            landed = c["unit_cost"] * (1 + c["duty_rate"]) + c["freight_per_unit"]
            ranked.append(((p["price"] - landed) / p["price"] * 100, p["sku"], p["name"]))
    for margin, sku, name in sorted(ranked, reverse=True)[:5]:
        print(f"{sku} {name}: {margin:.1f}%")
    """
)


def _answer() -> str:
    names = {p["sku"]: p["name"] for rows in _PRODUCTS.values() for p in rows}
    lines = [f"- {sku} {names[sku]}: {m:.1f}%" for sku, m in EXPECTED]
    return "The five in-stock products with the highest gross margin:\n\n" + "\n".join(lines)


SCENARIO = Scenario(
    name="top_margin",
    title="Top products by margin across categories",
    prompt=PROMPT,
    tools=(list_categories, list_products, get_cost_sheet),
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=tuple(f"{sku} " for sku, _ in EXPECTED) + tuple(f"{m:.1f}%" for _, m in EXPECTED),
    absent=("AUD-1070", "LAP-1028"),  # best margin but out of stock; sixth place
    classic=(*CLASSIC, final(_answer())),
    ptc=(turn(PTC), final(_answer())),
    # Ten large lists to join: the snippet is cheaper than any direct call.
    hybrid=(turn(PTC), final(_answer())),
)

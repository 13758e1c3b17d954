"""Quarterly revenue by region over a paginated orders API.

Which region had the highest Q2 net revenue, and by how much did it beat the runner-up?
Page 1 of a region reports ``total_pages``, so the classic trajectory fetches page 1 of
every region in one parallel turn and all remaining pages in the next; the PTC snippet
loops over the pages.
"""

from __future__ import annotations

import random
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn

PAGE_SIZE = 50
_REGIONS = [
    ("NA", "North America", 161, 1.0),
    ("EMEA", "Europe, Middle East & Africa", 138, 1.22),
    ("APAC", "Asia-Pacific", 104, 1.1),
    ("LATAM", "Latin America", 72, 0.9),
]
_CHANNELS = ["web", "web", "partner", "sales", "marketplace"]
_REPS = ["avery", "blake", "casey", "devon", "emery", "finley", "harper"]


def _build() -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(2025)
    orders: dict[str, list[dict[str, Any]]] = {}
    for code, _name, count, scale in _REGIONS:
        rows = []
        for n in range(count):
            subtotal = round(rng.lognormvariate(6.2, 0.9) * scale, 2)
            status = rng.choices(["completed", "refunded", "cancelled"], [0.86, 0.08, 0.06])[0]
            month = 4 + n * 3 // count
            rows.append(
                {
                    "order_id": f"{code}-{250000 + n * 37}",
                    "created_at": f"2025-{month:02d}-{rng.randint(1, 28):02d}T"
                    f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z",
                    "customer_id": f"cus_{rng.getrandbits(40):010x}",
                    "status": status,
                    "items": rng.randint(1, 9),
                    "subtotal": subtotal,
                    "tax": round(subtotal * rng.choice([0.0, 0.07, 0.19, 0.2]), 2),
                    "shipping": rng.choice([0.0, 9.9, 14.5, 25.0]),
                    "currency": "USD",
                    "channel": rng.choice(_CHANNELS),
                    "sales_rep": rng.choice(_REPS),
                }
            )
        orders[code] = rows
    return orders


_ORDERS = _build()


def list_regions() -> list[dict[str, Any]]:
    """List the sales regions.

    Returns:
        One dict per region: ``code``, ``name``, ``currency``.
    """
    return [{"code": code, "name": name, "currency": "USD"} for code, name, _, _ in _REGIONS]


def list_orders(region: str, quarter: str, page: int = 1) -> dict[str, Any]:
    """List one page of a region's orders in a quarter of 2025 (50 per page).

    Args:
        region: Region code from ``list_regions``.
        quarter: ``"Q1"`` .. ``"Q4"``.
        page: 1-based page number.

    Returns:
        A dict with ``orders`` (the page's orders), ``page``, ``total_pages`` and
        ``next_page`` (``None`` on the last page). Each order: ``order_id``, ``created_at``,
        ``customer_id``, ``status`` (``completed``, ``refunded``, ``cancelled``),
        ``items``, ``subtotal``, ``tax``, ``shipping`` (USD), ``currency``, ``channel``,
        ``sales_rep``.

    Raises:
        ValueError: If the page is out of range.
    """
    rows = _ORDERS.get(region, []) if quarter == "Q2" else []
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    if not 1 <= page <= pages:
        raise ValueError(f"page must be between 1 and {pages}, got {page}")
    chunk = rows[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    return {
        "orders": [dict(row) for row in chunk],
        "page": page,
        "total_pages": pages,
        "next_page": page + 1 if page < pages else None,
    }


def _ranked(revenue: dict[str, float]) -> tuple[str, float, str, float, float]:
    (top, first), (second, runner) = sorted(revenue.items(), key=lambda kv: -kv[1])[:2]
    return top, first, second, runner, round(first - runner, 2)


def reference() -> tuple[str, float, str, float, float]:
    """``(top region, its net revenue, runner-up, its net revenue, lead)``, USD."""
    return _ranked(
        {
            code: round(sum(o["subtotal"] for o in rows if o["status"] == "completed"), 2)
            for code, rows in _ORDERS.items()
        }
    )


def solve(fetch: Fetch) -> tuple[str, float, str, float, float]:
    """The answer from tool results: every page of every region's Q2 orders."""
    revenue = {}
    for region in fetch("list_regions"):
        first = fetch("list_orders", region=region["code"], quarter="Q2", page=1)
        orders = list(first["orders"])
        for page in range(2, first["total_pages"] + 1):
            orders += fetch("list_orders", region=region["code"], quarter="Q2", page=page)["orders"]
        revenue[region["code"]] = round(
            sum(o["subtotal"] for o in orders if o["status"] == "completed"), 2
        )
    return _ranked(revenue)


EXPECTED = ("EMEA", 110895.37, "NA", 108634.11, 2261.26)

PROMPT = (
    "Which region had the highest net revenue in Q2 2025, and by how much did it beat "
    "the runner-up? Net revenue is the sum of `subtotal` over completed orders (no tax, "
    "no shipping; refunded and cancelled orders do not count). Amounts in USD to the cent."
)


def _pages(code: str) -> int:
    return -(-len(_ORDERS[code]) // PAGE_SIZE)


_CODES = [region[0] for region in _REGIONS]
CLASSIC = (
    turn(call("list_regions")),
    turn(*(call("list_orders", region=code, quarter="Q2", page=1) for code in _CODES)),
    turn(
        *(
            call("list_orders", region=code, quarter="Q2", page=page)
            for code in _CODES
            for page in range(2, _pages(code) + 1)
        ),
        text="Page 1 gives each region's total_pages; fetching all remaining pages at once.",
    ),
)
PTC = run_code(
    """
    revenue = {}
    for region in list_regions():
        page, total = 1, 0.0
        while page is not None:
            result = list_orders(region=region["code"], quarter="Q2", page=page)
            total += sum(o["subtotal"] for o in result["orders"] if o["status"] == "completed")
            page = result["next_page"]
        revenue[region["code"]] = round(total, 2)
    ranked = sorted(revenue.items(), key=lambda kv: -kv[1])
    for code, amount in ranked:
        print(f"{code}: {amount:.2f}")
    print(f"lead of {ranked[0][0]} over {ranked[1][0]}: {ranked[0][1] - ranked[1][1]:.2f}")
    """
)


def _answer() -> str:
    top, first, second, runner, lead = EXPECTED
    return (
        f"{top} had the highest Q2 2025 net revenue: {first:,.2f} USD. The runner-up was "
        f"{second} with {runner:,.2f} USD, so {top} led by {lead:,.2f} USD."
    )


SCENARIO = Scenario(
    name="regional_revenue",
    title="Regional revenue over a paginated API",
    prompt=PROMPT,
    tools=(list_regions, list_orders),
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=(
        f"{EXPECTED[0]} had the highest",
        f"{EXPECTED[1]:.2f}",
        f"{EXPECTED[3]:.2f}",
        f"led by {EXPECTED[4]:.2f}",
    ),
    classic=(*CLASSIC, final(_answer())),
    ptc=(turn(PTC), final(_answer())),
    # Fan-out over 14 pages: the snippet is cheaper than any direct call.
    hybrid=(turn(PTC), final(_answer())),
)

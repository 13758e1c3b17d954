"""A single small lookup: the status, delivery date and charge of one order.

The shape where ``run_code`` has nothing to save: classic makes one call whose result
is a few hundred tokens; a snippet costs its own code, the stubs in the ``run_code``
description, and still prints the same facts. Hybrid calls the tool directly.
"""

from __future__ import annotations

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn
from ptcbox.bench.scenarios import _shop

ORDER = "ORD-58213"

PROMPT = (
    f"What is the status of order {ORDER}, when is it expected to arrive, and how much "
    "was the customer charged in total?"
)


def reference() -> tuple[str, str, float]:
    """``(status, estimated delivery, total charged)`` straight from the data."""
    order = _shop._ORDERS[ORDER]
    return order["status"], order["estimated_delivery"], order["total"]


def solve(fetch: Fetch) -> tuple[str, str, float]:
    """The answer from tool results: the order."""
    order = fetch("get_order", order_id=ORDER)
    return order["status"], order["estimated_delivery"], order["total"]


EXPECTED = ("shipped", "2025-06-12", 129.9)

ANSWER = f"""
Order {ORDER} has shipped (DHL Express, tracking JD014600006281) and is expected to
arrive on 2025-06-12. The customer was charged 129.90 USD in total (items plus shipping).
"""
PTC = run_code(
    f"""
    o = get_order(order_id="{ORDER}")
    print(o["status"], o["carrier"], o["tracking_number"], o["estimated_delivery"],
          f"{{o['total']:.2f}}", o["currency"])
    """
)

SCENARIO = Scenario(
    name="order_status",
    title="One order's status (a single small lookup)",
    prompt=PROMPT,
    tools=_shop.TOOLS,
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=("shipped", "2025-06-12", "129.90"),
    classic=(turn(call("get_order", order_id=ORDER)), final(ANSWER)),
    ptc=(turn(PTC), final(ANSWER)),
    # One small result: a direct call is cheaper than writing a snippet.
    hybrid=(turn(call("get_order", order_id=ORDER)), final(ANSWER)),
    shape="single lookup",
)

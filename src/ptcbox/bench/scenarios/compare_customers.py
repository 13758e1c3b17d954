"""Two small lookups compared: which of two customers has spent more, and by how much.

Classic fetches both customers in one parallel turn; a snippet fetches both and prints
the comparison. Both results are small, so code saves little or nothing; hybrid makes
the two direct calls.
"""

from __future__ import annotations

from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn
from ptcbox.bench.scenarios import _shop

CUSTOMERS = ("C-1042", "C-2077")

PROMPT = (
    f"Which of our customers {CUSTOMERS[0]} and {CUSTOMERS[1]} has the higher lifetime "
    "spend, and by how much? Give both names and amounts."
)


def _compare(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, float, str, float, float]:
    high, low = sorted((a, b), key=lambda c: -c["lifetime_spend"])
    return (
        high["name"],
        high["lifetime_spend"],
        low["name"],
        low["lifetime_spend"],
        round(high["lifetime_spend"] - low["lifetime_spend"], 2),
    )


def reference() -> tuple[str, float, str, float, float]:
    """``(higher spender, spend, other, spend, difference)`` straight from the data."""
    return _compare(*(_shop._CUSTOMERS[c] for c in CUSTOMERS))


def solve(fetch: Fetch) -> tuple[str, float, str, float, float]:
    """The answer from tool results: both customers."""
    return _compare(*(fetch("get_customer", customer_id=c) for c in CUSTOMERS))


EXPECTED = ("Jonas Weber", 5290.1, "Marta Ilic", 4812.35, 477.75)

ANSWER = """
Jonas Weber (C-2077) has the higher lifetime spend: 5,290.10 USD, against 4,812.35 USD
for Marta Ilic (C-1042), a difference of 477.75 USD.
"""
PTC = run_code(
    f"""
    a, b = (get_customer(customer_id=c) for c in {CUSTOMERS!r})
    for c in sorted((a, b), key=lambda c: -c["lifetime_spend"]):
        print(c["customer_id"], c["name"], f"{{c['lifetime_spend']:.2f}}", c["currency"])
    print(f"difference: {{abs(a['lifetime_spend'] - b['lifetime_spend']):.2f}}")
    """
)
_DIRECT = turn(*(call("get_customer", customer_id=c) for c in CUSTOMERS))

SCENARIO = Scenario(
    name="compare_customers",
    title="Two customers compared (two small lookups)",
    prompt=PROMPT,
    tools=_shop.TOOLS,
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=("Jonas Weber (C-2077) has the higher", "5290.10", "4812.35", "477.75"),
    classic=(_DIRECT, final(ANSWER)),
    ptc=(turn(PTC), final(ANSWER)),
    # Two small results in one parallel turn: direct calls are cheaper than a snippet.
    hybrid=(_DIRECT, final(ANSWER)),
    shape="two lookups",
)

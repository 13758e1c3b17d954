"""Short chained lookups: the account manager of the customer behind an order.

Three small lookups, each needing the previous result (order -> customer -> employee):
classic spends three turns, each re-sending the history; one snippet does the chain.
Hybrid writes the snippet too, since it saves two turns.
"""

from __future__ import annotations

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn
from ptcbox.bench.scenarios import _shop

ORDER = "ORD-58213"

PROMPT = (
    f"Who is the account manager of the customer who placed order {ORDER}? Give the "
    "customer's name and the account manager's name, title and email address."
)


def reference() -> tuple[str, str, str]:
    """``(customer, account manager, their email)`` straight from the data."""
    customer = _shop._CUSTOMERS[_shop._ORDERS[ORDER]["customer_id"]]
    manager = _shop._EMPLOYEES[customer["account_manager_id"]]
    return customer["name"], manager["name"], manager["email"]


def solve(fetch: Fetch) -> tuple[str, str, str]:
    """The answer from tool results: the order, its customer, their account manager."""
    order = fetch("get_order", order_id=ORDER)
    customer = fetch("get_customer", customer_id=order["customer_id"])
    manager = fetch("get_employee", employee_id=customer["account_manager_id"])
    return customer["name"], manager["name"], manager["email"]


EXPECTED = ("Marta Ilic", "Priya Raman", "priya.raman@example.com")

ANSWER = f"""
Order {ORDER} was placed by Marta Ilic (C-1042). Her account manager is Priya Raman,
Account Manager, Central Europe: priya.raman@example.com.
"""
PTC = run_code(
    f"""
    order = get_order(order_id="{ORDER}")
    customer = get_customer(customer_id=order["customer_id"])
    manager = get_employee(employee_id=customer["account_manager_id"])
    print(customer["customer_id"], customer["name"])
    print(manager["name"], "|", manager["title"], "|", manager["email"])
    """
)

SCENARIO = Scenario(
    name="account_manager",
    title="An order's account manager (three chained lookups)",
    prompt=PROMPT,
    tools=_shop.TOOLS,
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=("Marta Ilic", "Priya Raman", "Central Europe", "priya.raman@example.com"),
    classic=(
        turn(call("get_order", order_id=ORDER)),
        turn(call("get_customer", customer_id="C-1042")),
        turn(call("get_employee", employee_id="E-310")),
        final(ANSWER),
    ),
    ptc=(turn(PTC), final(ANSWER)),
    # A chain of three: one snippet saves two turns of re-sent history.
    hybrid=(turn(PTC), final(ANSWER)),
    shape="chained lookups",
)

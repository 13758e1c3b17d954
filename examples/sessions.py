"""Sessions: keep a snippet's variables across several executions.

    .venv/bin/python examples/sessions.py

An agent often builds on what an earlier snippet computed. ``runtime.session()`` keeps
the globals between ``execute`` calls; leaving the ``async with`` frees them.
"""

from __future__ import annotations

import asyncio

from ptcbox import resolve_tools
from ptcbox.runtimes import ThreadRuntime

ORDERS = [
    {"id": 1, "customer": "c1", "amount": 40.0},
    {"id": 2, "customer": "c2", "amount": 15.5},
    {"id": 3, "customer": "c1", "amount": 22.0},
]


def search_orders(customer: str) -> list[dict[str, object]]:
    """Orders of one customer, oldest first."""
    return [order for order in ORDERS if order["customer"] == customer]


async def main() -> None:
    tools = resolve_tools([search_orders])
    async with ThreadRuntime() as runtime, runtime.session() as session:
        first = await session.execute("orders = search_orders(customer='c1')", tools)
        print("first call ok:", first.ok)
        second = await session.execute(
            "print(len(orders), 'orders')\nsum(o['amount'] for o in orders)", tools
        )
        print(second.stdout, end="")
        print("total:", second.value)
    fresh = await ThreadRuntime().execute("print(orders)", tools)
    print("outside the session:", fresh.error_type)


if __name__ == "__main__":
    asyncio.run(main())

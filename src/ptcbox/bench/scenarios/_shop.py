"""The small-lookup toolset of the low-advantage scenarios: a shop's support desk.

Four tools over a handful of records, each result a few hundred tokens: an order, a
customer, an employee, a support ticket with its message thread. The scenarios that use
it are the shapes where code has little to save: one lookup, two lookups compared, a
thread the model must read, a short chain of lookups.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TOOLS", "get_customer", "get_employee", "get_order", "get_ticket"]

_ORDERS: dict[str, dict[str, Any]] = {
    "ORD-58213": {
        "order_id": "ORD-58213",
        "customer_id": "C-1042",
        "status": "shipped",
        "placed_at": "2025-06-07T10:14:00Z",
        "shipped_at": "2025-06-09T16:02:00Z",
        "carrier": "DHL Express",
        "tracking_number": "JD014600006281",
        "estimated_delivery": "2025-06-12",
        "items": [
            {"sku": "LMP-220", "name": "Arc floor lamp", "quantity": 1, "unit_price": 89.9},
            {"sku": "BLB-E27", "name": "LED bulb E27, two-pack", "quantity": 2, "unit_price": 12.5},
        ],
        "subtotal": 114.9,
        "shipping": 15.0,
        "total": 129.9,
        "currency": "USD",
        "ship_to": "Marta Ilic, Kastanienallee 12, Berlin, DE",
    },
}
_CUSTOMERS: dict[str, dict[str, Any]] = {
    "C-1042": {
        "customer_id": "C-1042",
        "name": "Marta Ilic",
        "email": "marta.ilic@example.org",
        "tier": "gold",
        "country": "DE",
        "created_at": "2021-03-18",
        "orders_count": 37,
        "lifetime_spend": 4812.35,
        "currency": "USD",
        "account_manager_id": "E-310",
    },
    "C-2077": {
        "customer_id": "C-2077",
        "name": "Jonas Weber",
        "email": "jonas.weber@example.net",
        "tier": "gold",
        "country": "AT",
        "created_at": "2020-11-02",
        "orders_count": 29,
        "lifetime_spend": 5290.1,
        "currency": "USD",
        "account_manager_id": "E-322",
    },
}
_EMPLOYEES: dict[str, dict[str, Any]] = {
    "E-310": {
        "employee_id": "E-310",
        "name": "Priya Raman",
        "title": "Account Manager, Central Europe",
        "email": "priya.raman@example.com",
        "phone": "+49 30 5557 0310",
        "team": "key-accounts",
        "manager_id": "E-301",
    },
    "E-322": {
        "employee_id": "E-322",
        "name": "Tomas Novak",
        "title": "Account Manager, DACH",
        "email": "tomas.novak@example.com",
        "phone": "+43 1 5557 0322",
        "team": "key-accounts",
        "manager_id": "E-301",
    },
}
_TICKETS: dict[str, dict[str, Any]] = {
    "T-7781": {
        "ticket_id": "T-7781",
        "subject": "Lamp arrived damaged",
        "status": "pending customer",
        "customer_id": "C-1042",
        "order_id": "ORD-58213",
        "messages": [
            {
                "from": "Marta Ilic (customer)",
                "at": "2025-06-12T18:40:00Z",
                "body": "Hi, the Arc floor lamp from my order arrived today and the glass "
                "shade is cracked right through; the box had a dent on that corner. The "
                "bulbs are fine. I'd rather not wait for a replacement since I need it for "
                "a flat viewing next week, so I would like my money back for the lamp. "
                "Photos attached. Do I have to send the whole thing back?",
            },
            {
                "from": "Lena Hoffmann (support)",
                "at": "2025-06-13T08:05:00Z",
                "body": "Hello Marta, I am sorry the lamp arrived like this, and thank you "
                "for the photos, they show the damage clearly. I have forwarded them to "
                "our carrier claims team. Let me check the options with my team lead and "
                "come back to you today.",
            },
            {
                "from": "Marta Ilic (customer)",
                "at": "2025-06-13T09:12:00Z",
                "body": "Thanks. To be clear: I do not want a replacement or a voucher, "
                "just the refund for the lamp. The bulbs I'll keep.",
            },
            {
                "from": "Lena Hoffmann (support)",
                "at": "2025-06-13T14:30:00Z",
                "body": "Understood. I have approved a refund of 89.90 USD for the lamp to "
                "your original card; it will reach you within 5 business days. You do not "
                "need to pay for the return: a prepaid DHL label is attached, please drop "
                "the lamp off within 14 days. Shipping is not refunded since the bulbs "
                "were delivered fine. Sorry again for the trouble.",
            },
        ],
    },
}


def get_order(order_id: str) -> dict[str, Any]:
    """Look up one order.

    Args:
        order_id: The order's id, e.g. ``"ORD-58213"``.

    Returns:
        ``order_id``, ``customer_id``, ``status`` (``placed``, ``shipped``,
        ``delivered``, ``cancelled``), ``placed_at``, ``shipped_at``, ``carrier``,
        ``tracking_number``, ``estimated_delivery`` (``YYYY-MM-DD``), ``items`` (each:
        ``sku``, ``name``, ``quantity``, ``unit_price``), ``subtotal``, ``shipping``,
        ``total``, ``currency``, ``ship_to``.

    Raises:
        KeyError: If there is no such order.
    """
    return dict(_ORDERS[order_id])


def get_customer(customer_id: str) -> dict[str, Any]:
    """Look up one customer.

    Args:
        customer_id: The customer's id, e.g. ``"C-1042"``.

    Returns:
        ``customer_id``, ``name``, ``email``, ``tier``, ``country``, ``created_at``,
        ``orders_count``, ``lifetime_spend`` (all orders, in ``currency``),
        ``currency``, ``account_manager_id`` (an employee id).

    Raises:
        KeyError: If there is no such customer.
    """
    return dict(_CUSTOMERS[customer_id])


def get_employee(employee_id: str) -> dict[str, Any]:
    """Look up one employee.

    Args:
        employee_id: The employee's id, e.g. ``"E-310"``.

    Returns:
        ``employee_id``, ``name``, ``title``, ``email``, ``phone``, ``team``,
        ``manager_id``.

    Raises:
        KeyError: If there is no such employee.
    """
    return dict(_EMPLOYEES[employee_id])


def get_ticket(ticket_id: str) -> dict[str, Any]:
    """Fetch a support ticket with its whole message thread.

    Args:
        ticket_id: The ticket's id, e.g. ``"T-7781"``.

    Returns:
        ``ticket_id``, ``subject``, ``status``, ``customer_id``, ``order_id``,
        ``messages`` (oldest first; each: ``from``, ``at``, ``body`` as free text).

    Raises:
        KeyError: If there is no such ticket.
    """
    ticket = dict(_TICKETS[ticket_id])
    ticket["messages"] = [dict(m) for m in ticket["messages"]]
    return ticket


TOOLS = (get_order, get_customer, get_employee, get_ticket)
"""Every scenario on this desk offers all four tools, as a support agent would have."""

"""Budget overruns across a team (the example of Anthropic's programmatic tool calling post).

Which members of the platform team spent more on travel in Q3 2025 than their budget?
Classic: list the team, then every member's expense report and budget in one parallel
turn (sixteen calls: a later turn just for the budgets would re-send every expense
report), answer. PTC: one snippet that fetches a budget only where it matters.
"""

from __future__ import annotations

import random
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn

STANDARD_TRAVEL_BUDGET = 5000.0
TRAVEL_CATEGORIES = ("airfare", "lodging", "ground_transport")

_MEMBERS = [
    ("e101", "Alice Moreau", "Staff Engineer", "Paris"),
    ("e102", "Bilal Khan", "Senior Engineer", "London"),
    ("e103", "Chen Wei", "Engineering Manager", "Singapore"),
    ("e104", "Dana Okafor", "Senior Engineer", "Lagos"),
    ("e105", "Erik Lindqvist", "Engineer", "Stockholm"),
    ("e106", "Fatima Haddad", "Principal Engineer", "Dubai"),
    ("e107", "Gabriel Souza", "Engineer", "Sao Paulo"),
    ("e108", "Hana Sato", "Senior Engineer", "Tokyo"),
]
_TRAVEL_SPEND = {  # target travel spend per member, so the answer is not an accident
    "e101": 6210.0,
    "e102": 3890.0,
    "e103": 8120.0,
    "e104": 5480.0,
    "e105": 2150.0,
    "e106": 7340.0,
    "e107": 4720.0,
    "e108": 5060.0,
}
_CUSTOM_BUDGETS = {
    "e103": (9000.0, "Regional lead: quarterly APAC site visits", "vp-eng"),
    "e106": (7000.0, "Customer escalations, Middle East", "vp-eng"),
    "e108": (6000.0, "Conference speaker, KubeCon EU", "director-platform"),
}
_MERCHANTS = {
    "airfare": ["Air France", "Lufthansa", "Emirates", "Singapore Airlines", "United"],
    "lodging": ["Marriott", "Hilton", "Hyatt", "Accor", "Airbnb"],
    "ground_transport": ["Uber", "Bolt", "Hertz", "SNCF", "Heathrow Express"],
    "meals": ["Pret A Manger", "Starbucks", "local restaurant", "hotel restaurant"],
    "software": ["JetBrains", "GitHub", "Figma", "1Password"],
    "training": ["O'Reilly", "Coursera", "Linux Foundation"],
}


def _split(rng: random.Random, total: float, parts: int) -> list[float]:
    weights = [rng.uniform(0.5, 1.5) for _ in range(parts)]
    scale = total / sum(weights)
    amounts = [round(w * scale, 2) for w in weights]
    amounts[-1] = round(total - sum(amounts[:-1]), 2)
    return amounts


def _build_expenses() -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(20250930)
    expenses: dict[str, list[dict[str, Any]]] = {}
    for emp_id, _name, _role, _city in _MEMBERS:
        items: list[tuple[str, float, str]] = []
        travel = _split(rng, _TRAVEL_SPEND[emp_id], rng.randint(7, 11))
        for amount in travel:
            items.append((rng.choice(TRAVEL_CATEGORIES), amount, "approved"))
        for _ in range(rng.randint(6, 10)):
            category = rng.choice(["meals", "software", "training"])
            items.append((category, round(rng.uniform(8, 420), 2), "approved"))
        # a rejected travel claim that must not count
        items.append(("airfare", round(rng.uniform(600, 1400), 2), "rejected"))
        rng.shuffle(items)
        rows = []
        for n, (category, amount, status) in enumerate(items, start=1):
            month = rng.choice([7, 8, 9])
            day = rng.randint(1, 28)
            rows.append(
                {
                    "expense_id": f"{emp_id}-q3-{n:03d}",
                    "date": f"2025-{month:02d}-{day:02d}",
                    "category": category,
                    "merchant": rng.choice(_MERCHANTS[category]),
                    "amount": amount,
                    "currency": "USD",
                    "description": f"{category.replace('_', ' ')} - {rng.choice(_PURPOSES)}",
                    "status": status,
                    "receipt_url": f"https://receipts.example.com/{emp_id}/{n:03d}.pdf",
                    "submitted_by": emp_id,
                }
            )
        rows.sort(key=lambda row: (row["date"], row["expense_id"]))
        expenses[emp_id] = rows
    return expenses


_PURPOSES = [
    "customer onsite",
    "team offsite",
    "conference",
    "hiring loop",
    "incident review",
    "quarterly planning",
]
_EXPENSES = _build_expenses()


def get_team_members(department: str) -> list[dict[str, Any]]:
    """List the members of a department.

    Args:
        department: Department slug, e.g. ``"platform"``.

    Returns:
        One dict per member: ``employee_id``, ``name``, ``title``, ``location``,
        ``email``, ``manager_id``, ``start_date``.
    """
    if department != "platform":
        return []
    return [
        {
            "employee_id": emp_id,
            "name": name,
            "title": title,
            "location": city,
            "email": name.lower().replace(" ", ".") + "@example.com",
            "manager_id": "e103" if emp_id != "e103" else "e001",
            "start_date": f"20{18 + int(emp_id[-1]) % 6}-0{1 + int(emp_id[-1]) % 9}-15",
        }
        for emp_id, name, title, city in _MEMBERS
    ]


def get_expenses(employee_id: str, quarter: str) -> list[dict[str, Any]]:
    """Return an employee's expense line items for a quarter of 2025.

    Args:
        employee_id: The employee's id, e.g. ``"e101"``.
        quarter: ``"Q1"`` .. ``"Q4"``.

    Returns:
        Line items: ``expense_id``, ``date``, ``category`` (``airfare``, ``lodging``,
        ``ground_transport``, ``meals``, ``software``, ``training``), ``merchant``,
        ``amount`` (USD), ``currency``, ``description``, ``status`` (``approved`` or
        ``rejected``), ``receipt_url``, ``submitted_by``.

    Raises:
        ValueError: If the quarter is not one of Q1..Q4.
    """
    if quarter not in ("Q1", "Q2", "Q3", "Q4"):
        raise ValueError(f"quarter must be Q1..Q4, got {quarter!r}")
    if quarter != "Q3":
        return []
    return [dict(row) for row in _EXPENSES.get(employee_id, [])]


def get_custom_budget(employee_id: str) -> dict[str, Any]:
    """Return an employee's quarterly travel budget when it differs from the standard.

    The standard travel budget is 5000 USD per quarter.

    Args:
        employee_id: The employee's id.

    Returns:
        ``employee_id``, ``has_custom_budget`` (bool), ``travel_budget`` (USD per quarter),
        ``reason``, ``approved_by``.
    """
    custom = _CUSTOM_BUDGETS.get(employee_id)
    if custom is None:
        return {
            "employee_id": employee_id,
            "has_custom_budget": False,
            "travel_budget": STANDARD_TRAVEL_BUDGET,
            "reason": "standard budget",
            "approved_by": None,
        }
    budget, reason, approver = custom
    return {
        "employee_id": employee_id,
        "has_custom_budget": True,
        "travel_budget": budget,
        "reason": reason,
        "approved_by": approver,
    }


def reference() -> list[tuple[str, float, float]]:
    """The members over budget as ``(name, travel spend, budget)``, most over first."""
    over = []
    for emp_id, name, _title, _city in _MEMBERS:
        spent = sum(
            row["amount"]
            for row in _EXPENSES[emp_id]
            if row["category"] in TRAVEL_CATEGORIES and row["status"] == "approved"
        )
        budget = _CUSTOM_BUDGETS.get(emp_id, (STANDARD_TRAVEL_BUDGET,))[0]
        if spent > budget:
            over.append((name, round(spent, 2), budget))
    return sorted(over, key=lambda item: item[1] - item[2], reverse=True)


def solve(fetch: Fetch) -> list[tuple[str, float, float]]:
    """The answer from tool results: the team, their expenses, budgets of big spenders."""
    over = []
    for member in fetch("get_team_members", department="platform"):
        items = fetch("get_expenses", employee_id=member["employee_id"], quarter="Q3")
        spent = round(
            sum(
                e["amount"]
                for e in items
                if e["category"] in TRAVEL_CATEGORIES and e["status"] == "approved"
            ),
            2,
        )
        if spent > STANDARD_TRAVEL_BUDGET:
            budget = fetch("get_custom_budget", employee_id=member["employee_id"])
            if spent > budget["travel_budget"]:
                over.append((member["name"], spent, budget["travel_budget"]))
    return sorted(over, key=lambda item: item[1] - item[2], reverse=True)


EXPECTED = [
    ("Alice Moreau", 6210.0, 5000.0),
    ("Dana Okafor", 5480.0, 5000.0),
    ("Fatima Haddad", 7340.0, 7000.0),
]

PROMPT = (
    "Which members of the platform team exceeded their Q3 travel budget? Travel means "
    "airfare, lodging and ground transport; only approved expenses count. The standard "
    "budget is 5000 USD a quarter, but some people have a custom budget. For each person "
    "over budget give their travel spend and their budget."
)

_IDS = [member[0] for member in _MEMBERS]

CLASSIC = (
    turn(call("get_team_members", department="platform"), text="Let me get the team first."),
    turn(
        *(call("get_expenses", employee_id=emp_id, quarter="Q3") for emp_id in _IDS),
        *(call("get_custom_budget", employee_id=emp_id) for emp_id in _IDS),
        text="Fetching every member's Q3 expenses and travel budget.",
    ),
)
PTC = (
    run_code(
        """
        members = get_team_members(department="platform")
        travel = {"airfare", "lodging", "ground_transport"}
        over = []
        for m in members:
            items = get_expenses(employee_id=m["employee_id"], quarter="Q3")
            spent = sum(e["amount"] for e in items
                        if e["category"] in travel and e["status"] == "approved")
            if spent > 5000:
                budget = get_custom_budget(employee_id=m["employee_id"])["travel_budget"]
                if spent > budget:
                    over.append((spent - budget, m["name"], spent, budget))
                else:
                    print(f"within budget: {m['name']} ({spent:.2f} of {budget:.2f})")
        for excess, name, spent, budget in sorted(over, reverse=True):
            print(f"OVER: {name}: spent {spent:.2f} of {budget:.2f} (+{excess:.2f})")
        """
    ),
)
ANSWER = """
Three platform team members exceeded their Q3 travel budget:

- Alice Moreau: 6210.00 USD spent against the standard 5000.00 budget
- Dana Okafor: 5480.00 USD against 5000.00
- Fatima Haddad: 7340.00 USD against her custom 7000.00 budget

Chen Wei and Hana Sato also spent more than 5000 USD, but within their custom budgets.
"""

SCENARIO = Scenario(
    name="budget_overruns",
    title="Budget overruns across a team",
    prompt=PROMPT,
    tools=(get_team_members, get_expenses, get_custom_budget),
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=(
        "Alice Moreau: 6210.00",
        "Dana Okafor: 5480.00",
        "Fatima Haddad: 7340.00",
        "7000.00",
    ),
    absent=("Bilal Khan", "Erik Lindqvist", "Gabriel Souza"),
    classic=(*CLASSIC, final(ANSWER)),
    ptc=(turn(PTC[0]), final(ANSWER)),
    # Fan-out with large results: the snippet is cheaper than any direct call.
    hybrid=(turn(PTC[0]), final(ANSWER)),
)

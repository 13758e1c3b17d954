"""Customer churn signals.

Which enterprise accounts show churn risk (usage falling, or open urgent tickets)?
Classic: list the accounts, then each account's weekly usage and open tickets (24 calls in
parallel), answer. PTC: one snippet computes the signals and prints the flagged accounts.
"""

from __future__ import annotations

import random
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn

_ACCOUNTS = [
    ("acc-1001", "Northwind Traders"),
    ("acc-1002", "Contoso Pharma"),
    ("acc-1003", "Globex Logistics"),
    ("acc-1004", "Initech Finance"),
    ("acc-1005", "Umbrella Health"),
    ("acc-1006", "Stark Components"),
    ("acc-1007", "Wayne Retail Group"),
    ("acc-1008", "Tyrell Biotech"),
    ("acc-1009", "Soylent Foods"),
    ("acc-1010", "Cyberdyne Robotics"),
    ("acc-1011", "Oscorp Materials"),
    ("acc-1012", "Hooli Cloud"),
]
_DECLINING = {"acc-1003": 0.45, "acc-1008": 0.6, "acc-1011": 0.72}  # last-4 / prior-4
_URGENT_OPEN = {"acc-1005": 3, "acc-1008": 2, "acc-1012": 1}
_SUBJECTS = [
    "SSO login loops for some users",
    "Export to CSV times out",
    "Invoice shows wrong seat count",
    "Webhook deliveries delayed",
    "Need help with API rate limits",
    "Dashboard slow for large workspaces",
    "Audit log missing entries",
    "Request: bulk user import",
]


def _build() -> tuple[
    list[dict[str, Any]], dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]
]:
    rng = random.Random(1212)
    accounts, usage, tickets = [], {}, {}
    for n, (acc_id, name) in enumerate(_ACCOUNTS):
        seats = rng.choice([150, 250, 400, 800, 1200, 2500])
        accounts.append(
            {
                "account_id": acc_id,
                "name": name,
                "plan": "enterprise",
                "mrr": float(seats * rng.choice([28, 32, 36])),
                "seats": seats,
                "renewal_date": f"2025-{rng.randint(7, 12):02d}-01",
                "csm": rng.choice(["J. Park", "M. Rossi", "A. Dubois", "K. Mensah"]),
                "region": rng.choice(["NA", "EMEA", "APAC"]),
                "created_at": f"20{19 + n % 5}-0{1 + n % 9}-10",
            }
        )
        base = seats * rng.uniform(0.55, 0.8)
        ratio = _DECLINING.get(acc_id, rng.uniform(0.9, 1.1))
        rows = []
        for week in range(8):
            level = base if week < 4 else base * ratio
            active = int(level * rng.uniform(0.96, 1.04))
            rows.append(
                {
                    "week_start": f"2025-{4 + (week + 1) // 5:02d}-{1 + 7 * ((week + 1) % 5):02d}",
                    "active_users": active,
                    "sessions": active * rng.randint(6, 14),
                    "api_calls": active * rng.randint(40, 300),
                    "seats": seats,
                }
            )
        usage[acc_id] = rows
        open_urgent = _URGENT_OPEN.get(acc_id, 0)
        items = []
        for t in range(rng.randint(2, 6) + open_urgent):
            urgent = t < open_urgent
            items.append(
                {
                    "ticket_id": f"T-{acc_id[-4:]}-{t + 1:02d}",
                    "subject": rng.choice(_SUBJECTS),
                    "priority": rng.choice(["high", "urgent"])
                    if urgent
                    else rng.choice(["low", "normal", "normal", "high"]),
                    "status": "open" if urgent else rng.choice(["open", "closed", "closed"]),
                    "opened_at": f"2025-05-{rng.randint(1, 28):02d}",
                    "assignee": rng.choice(["support-l1", "support-l2", "solutions"]),
                }
            )
        # a closed urgent ticket is history, not a signal
        items.append(
            {
                "ticket_id": f"T-{acc_id[-4:]}-99",
                "subject": "Outage follow-up",
                "priority": "urgent",
                "status": "closed",
                "opened_at": "2025-03-02",
                "assignee": "solutions",
            }
        )
        tickets[acc_id] = items
    return accounts, usage, tickets


_ACCOUNT_ROWS, _USAGE, _TICKETS = _build()


def list_accounts(plan: str) -> list[dict[str, Any]]:
    """List customer accounts on a plan.

    Args:
        plan: ``"starter"``, ``"business"`` or ``"enterprise"``.

    Returns:
        One dict per account: ``account_id``, ``name``, ``plan``, ``mrr`` (USD per
        month), ``seats``, ``renewal_date``, ``csm``, ``region``, ``created_at``.
    """
    return [dict(row) for row in _ACCOUNT_ROWS if row["plan"] == plan]


def get_usage(account_id: str, weeks: int = 8) -> list[dict[str, Any]]:
    """Return an account's weekly usage, oldest week first.

    Args:
        account_id: The account's id.
        weeks: How many trailing weeks (at most 8).

    Returns:
        One dict per week: ``week_start``, ``active_users``, ``sessions``, ``api_calls``,
        ``seats``.
    """
    return [dict(row) for row in _USAGE.get(account_id, [])[-weeks:]]


def get_tickets(account_id: str) -> list[dict[str, Any]]:
    """Return an account's support tickets of the last 90 days.

    Args:
        account_id: The account's id.

    Returns:
        One dict per ticket: ``ticket_id``, ``subject``, ``priority`` (``low``,
        ``normal``, ``high``, ``urgent``), ``status`` (``open``/``closed``),
        ``opened_at``, ``assignee``.
    """
    return [dict(row) for row in _TICKETS.get(account_id, [])]


def _flag(
    accounts: list[dict[str, Any]],
    usage: dict[str, list[dict[str, Any]]],
    tickets: dict[str, list[dict[str, Any]]],
) -> list[tuple[str, float, str]]:
    flagged = []
    for account in accounts:
        weeks = [row["active_users"] for row in usage[account["account_id"]]]
        change = sum(weeks[4:]) / sum(weeks[:4]) - 1
        urgent = [
            t
            for t in tickets[account["account_id"]]
            if t["status"] == "open" and t["priority"] in ("high", "urgent")
        ]
        reasons = []
        if change < -0.2:
            reasons.append(f"active users {change:+.0%}")
        if len(urgent) >= 2:
            reasons.append(f"{len(urgent)} open high/urgent tickets")
        if reasons:
            flagged.append((account["name"], account["mrr"], "; ".join(reasons)))
    return sorted(flagged, key=lambda item: item[1], reverse=True)


def reference() -> list[tuple[str, float, str]]:
    """Flagged accounts as ``(name, mrr, reason)``, highest MRR first."""
    return _flag(_ACCOUNT_ROWS, _USAGE, _TICKETS)


def solve(fetch: Fetch) -> list[tuple[str, float, str]]:
    """The answer from tool results: the accounts, each one's usage and tickets."""
    accounts = fetch("list_accounts", plan="enterprise")
    ids = [a["account_id"] for a in accounts]
    return _flag(
        accounts,
        {i: fetch("get_usage", account_id=i, weeks=8) for i in ids},
        {i: fetch("get_tickets", account_id=i) for i in ids},
    )


EXPECTED = [
    ("Globex Logistics", 14400.0, "active users -55%"),
    ("Tyrell Biotech", 9000.0, "active users -41%; 4 open high/urgent tickets"),
    ("Oscorp Materials", 5400.0, "active users -29%"),
    ("Umbrella Health", 4200.0, "4 open high/urgent tickets"),
]

PROMPT = (
    "Which enterprise accounts show churn risk? Flag an account if its weekly active "
    "users over the last 4 weeks fell more than 20% versus the 4 weeks before, or if it "
    "has 2 or more open tickets of priority high or urgent. Sort the flagged accounts by "
    "MRR, highest first, and give the reason for each."
)

_IDS = [acc_id for acc_id, _ in _ACCOUNTS]

CLASSIC = (
    turn(call("list_accounts", plan="enterprise")),
    turn(
        *(call("get_usage", account_id=acc_id, weeks=8) for acc_id in _IDS),
        *(call("get_tickets", account_id=acc_id) for acc_id in _IDS),
        text="Pulling 8 weeks of usage and the tickets of all 12 accounts.",
    ),
)
PTC = run_code(
    """
    flagged = []
    for a in list_accounts(plan="enterprise"):
        weeks = [w["active_users"] for w in get_usage(account_id=a["account_id"], weeks=8)]
        change = sum(weeks[4:]) / sum(weeks[:4]) - 1
        urgent = [t for t in get_tickets(account_id=a["account_id"])
                  if t["status"] == "open" and t["priority"] in ("high", "urgent")]
        reasons = []
        if change < -0.2:
            reasons.append(f"active users {change:+.0%}")
        if len(urgent) >= 2:
            reasons.append(f"{len(urgent)} open high/urgent tickets")
        if reasons:
            flagged.append((a["mrr"], a["name"], "; ".join(reasons)))
    for mrr, name, why in sorted(flagged, reverse=True):
        print(f"{name} (MRR {mrr:.0f}): {why}")
    """
)


def _answer() -> str:
    lines = [f"- {name} (MRR {mrr:.0f}): {why}" for name, mrr, why in EXPECTED]
    return (
        "These enterprise accounts show churn risk, by MRR:\n\n"
        + "\n".join(lines)
        + "\n\nI'd start outreach with the top one."
    )


SCENARIO = Scenario(
    name="churn_signals",
    title="Customer churn signals",
    prompt=PROMPT,
    tools=(list_accounts, get_usage, get_tickets),
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=tuple(f"{name} (MRR {mrr:.0f}): {why}" for name, mrr, why in EXPECTED),
    absent=tuple(name for _, name in _ACCOUNTS if name not in {e[0] for e in EXPECTED}),
    classic=(*CLASSIC, final(_answer())),
    ptc=(turn(PTC), final(_answer())),
    # 24 per-account calls: the snippet is cheaper than the direct calls.
    hybrid=(turn(PTC), final(_answer())),
)

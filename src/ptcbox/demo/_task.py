"""The demo task, the snippets a model writes for it, and the answer checked in SQL.

The snippets are what a capable model sends to ``run_code`` for :data:`TASK`: one loops
over the engineers with plain tool calls; the other fans the calls out with
``await asyncio.gather(...)``. Both end with the list of over-budget engineers as a
trailing expression, so it comes back as ``CodeResult.value``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

__all__ = [
    "GATHER_SNIPPET",
    "SEQUENTIAL_SNIPPET",
    "TASK",
    "AnswerCheck",
    "check_answer",
    "expected_answer",
]

TASK = "Which engineers went over their Q3 travel budget, and by how much?"
"""The question the demo answers."""

SEQUENTIAL_SNIPPET = """\
engineers = list_team_members(department="Engineering")
over = []
for person in engineers:
    expenses = get_expenses(employee_id=person["id"], quarter="Q3", category="travel")
    spent = round(sum(e["amount"] for e in expenses), 2)
    try:
        budget = get_budget(employee_id=person["id"], quarter="Q3", category="travel")
    except ToolError as err:
        print(f"skipped {person['name']}: {err}")
        continue
    if spent > budget["amount"]:
        over.append({
            "id": person["id"],
            "name": person["name"],
            "spent": spent,
            "budget": budget["amount"],
            "over_by": round(spent - budget["amount"], 2),
        })

over.sort(key=lambda row: row["over_by"], reverse=True)
print(f"{len(over)} of {len(engineers)} engineers went over their Q3 travel budget:")
for row in over:
    print(f"  {row['name']} ({row['id']}): ${row['spent']:,.2f} spent, "
          f"${row['budget']:,.2f} budget, ${row['over_by']:,.2f} over")
over
"""
"""The task as a model writes it with sequential tool calls (1 + 2 per engineer)."""

GATHER_SNIPPET = """\
import asyncio

engineers = await list_team_members(department="Engineering")

async def check(person):
    try:
        expenses, budget = await asyncio.gather(
            get_expenses(employee_id=person["id"], quarter="Q3", category="travel"),
            get_budget(employee_id=person["id"], quarter="Q3", category="travel"),
        )
    except ToolError as err:
        print(f"skipped {person['name']}: {err}")
        return None
    spent = round(sum(e["amount"] for e in expenses), 2)
    if spent <= budget["amount"]:
        return None
    return {
        "id": person["id"],
        "name": person["name"],
        "spent": spent,
        "budget": budget["amount"],
        "over_by": round(spent - budget["amount"], 2),
    }

rows = await asyncio.gather(*[check(person) for person in engineers])
over = sorted([row for row in rows if row is not None], key=lambda row: row["over_by"],
              reverse=True)
print(f"{len(over)} of {len(engineers)} engineers went over their Q3 travel budget:")
for row in over:
    print(f"  {row['name']} ({row['id']}): ${row['spent']:,.2f} spent, "
          f"${row['budget']:,.2f} budget, ${row['over_by']:,.2f} over")
over
"""
"""The same task with the tool calls run concurrently through ``asyncio.gather``."""

_EXPECTED_SQL = """
SELECT m.id, m.name, SUM(e.amount_cents) AS spent, b.amount_cents AS budget
FROM team_members AS m
JOIN budgets AS b
  ON b.employee_id = m.id AND b.quarter = 'Q3' AND b.category = 'travel'
JOIN expenses AS e
  ON e.employee_id = m.id AND e.quarter = 'Q3' AND e.category = 'travel'
WHERE m.department = 'Engineering'
GROUP BY m.id, m.name, b.amount_cents
HAVING SUM(e.amount_cents) > b.amount_cents
ORDER BY SUM(e.amount_cents) - b.amount_cents DESC, m.id
"""


def expected_answer(db_path: str | Path) -> list[dict[str, Any]]:
    """Answer :data:`TASK` with one SQL query, independently of the tools.

    Args:
        db_path: Path of a demo database.

    Returns:
        Rows like the snippets' value, ordered by ``over_by`` (largest first): ``id``,
        ``name``, and ``spent``, ``budget``, ``over_by`` in US dollars.
    """
    connection = sqlite3.connect(Path(db_path).resolve().as_uri() + "?mode=ro", uri=True)
    try:
        rows = connection.execute(_EXPECTED_SQL).fetchall()
    finally:
        connection.close()
    return [
        {
            "id": row[0],
            "name": row[1],
            "spent": row[2] / 100,
            "budget": row[3] / 100,
            "over_by": (row[2] - row[3]) / 100,
        }
        for row in rows
    ]


class AnswerCheck:
    """The outcome of comparing a snippet's answer with :func:`expected_answer`.

    Attributes:
        ok: ``True`` when the answer matches (same people, same order, same amounts to
            the cent).
        problems: What differs, one line each; empty when ``ok``.
    """

    __slots__ = ("ok", "problems")

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        self.ok = not problems


def check_answer(value: Any, expected: list[dict[str, Any]]) -> AnswerCheck:
    """Compare a snippet's trailing value with the expected rows.

    Args:
        value: ``CodeResult.value`` of a demo snippet (a list of dicts).
        expected: :func:`expected_answer`'s rows.

    Returns:
        An :class:`AnswerCheck`; amounts are compared in whole cents.
    """
    if not isinstance(value, list) or not all(isinstance(row, dict) for row in value):
        return AnswerCheck([f"expected a list of rows, got {type(value).__name__}"])
    problems: list[str] = []
    got_ids = [row.get("id") for row in value]
    want_ids = [row["id"] for row in expected]
    if got_ids != want_ids:
        problems.append(f"people differ: got {got_ids}, expected {want_ids}")
        return AnswerCheck(problems)
    for got, want in zip(value, expected, strict=True):
        for key in ("spent", "budget", "over_by"):
            if not _same_cents(got.get(key), want[key]):
                problems.append(f"{want['id']} {key}: got {got.get(key)!r}, expected {want[key]}")
    return AnswerCheck(problems)


def _same_cents(got: Any, want: float) -> bool:
    if isinstance(got, bool) or not isinstance(got, int | float):
        return False
    return round(got * 100) == round(want * 100)

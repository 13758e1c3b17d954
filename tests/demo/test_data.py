"""The demo database: deterministic, the documented size, and the answer is unambiguous."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from ptcbox.demo import (
    CATEGORIES,
    DEPARTMENTS,
    QUARTERS,
    create_database,
    expected_answer,
    generate_data,
)


def _dump(path: Path) -> list[tuple[object, ...]]:
    connection = sqlite3.connect(path)
    try:
        rows: list[tuple[object, ...]] = []
        for table in ("team_members", "expenses", "budgets"):
            rows += [(table, *row) for row in connection.execute(f"SELECT * FROM {table}")]
        return rows
    finally:
        connection.close()


def test_generate_data_is_deterministic() -> None:
    assert generate_data() == generate_data()
    assert generate_data(seed=1) != generate_data()


def test_two_databases_hold_identical_rows(tmp_path: Path) -> None:
    first = create_database(tmp_path / "a.db")
    second = create_database(tmp_path / "b.db")
    assert _dump(first) == _dump(second)


def test_sizes_match_the_documentation() -> None:
    data = generate_data()
    assert len(data.members) == 36
    assert 300 <= len(data.expenses) <= 600
    # one budget per member, category and quarter, except the one never entered
    assert len(data.budgets) == 36 * len(CATEGORIES) * len(QUARTERS) - 1
    assert set(Counter(m.department for m in data.members)) == set(DEPARTMENTS)
    assert len({m.id for m in data.members}) == 36
    assert len({e.id for e in data.expenses}) == len(data.expenses)
    assert all(e.quarter in QUARTERS and e.category in CATEGORIES for e in data.expenses)
    assert all(e.amount_cents > 0 for e in data.expenses)


def test_totals_never_sit_within_a_dollar_of_a_budget() -> None:
    """Over budget never depends on float rounding of the dollar amounts."""
    data = generate_data()
    spent: Counter[tuple[str, str, str]] = Counter()
    for e in data.expenses:
        spent[(e.employee_id, e.quarter, e.category)] += e.amount_cents
    for b in data.budgets:
        key = (b.employee_id, b.quarter, b.category)
        if key in spent:
            assert abs(spent[key] - b.amount_cents) >= 100, key


def test_expected_answer_agrees_with_a_pure_python_computation(tmp_path: Path) -> None:
    data = generate_data()
    db = create_database(tmp_path / "x.db", data)
    budgets = {(b.employee_id, b.quarter, b.category): b.amount_cents for b in data.budgets}
    rows = []
    for m in data.members:
        if m.department != "Engineering":
            continue
        spent = sum(
            e.amount_cents
            for e in data.expenses
            if e.employee_id == m.id and e.quarter == "Q3" and e.category == "travel"
        )
        budget = budgets.get((m.id, "Q3", "travel"))
        if budget is not None and spent > budget:
            rows.append((m.id, spent - budget))
    rows.sort(key=lambda r: (-r[1], r[0]))
    answer = expected_answer(db)
    assert [r["id"] for r in answer] == [r[0] for r in rows]
    assert [round(r["over_by"] * 100) for r in answer] == [r[1] for r in rows]


def test_the_default_answer_is_pinned(tmp_path: Path) -> None:
    """Guards the documented demo output against an accidental change of the data."""
    answer = expected_answer(create_database(tmp_path / "x.db"))
    assert sorted(r["id"] for r in answer) == [
        "e001",
        "e002",
        "e003",
        "e004",
        "e010",
        "e012",
        "e013",
    ]


def test_create_database_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    path.write_text("precious")
    with pytest.raises(FileExistsError):
        create_database(path)
    assert path.read_text() == "precious"

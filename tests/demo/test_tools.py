"""The demo tools: correct against the data, clear errors, read-only, thread-safe."""

from __future__ import annotations

import inspect
import sqlite3
import threading
from pathlib import Path

import docstring_parser
import pytest

from ptcbox.demo import (
    AnswerCheck,
    ExpenseTools,
    check_answer,
    create_database,
    expected_answer,
    generate_data,
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return create_database(tmp_path_factory.mktemp("demo") / "expenses.db")


@pytest.fixture(scope="module")
def tools(db: Path) -> ExpenseTools:
    return ExpenseTools(db)


def test_list_team_members_is_case_insensitive_and_complete(tools: ExpenseTools) -> None:
    people = tools.list_team_members(department="engineering")
    data = generate_data()
    assert [p["id"] for p in people] == [
        m.id for m in data.members if m.department == "Engineering"
    ]
    assert set(people[0]) == {"id", "name", "role", "department", "email"}
    assert tools.list_team_members("  SALES ") == tools.list_team_members("Sales")


def test_list_departments(tools: ExpenseTools) -> None:
    assert tools.list_departments() == [
        "Engineering",
        "Finance",
        "Marketing",
        "Operations",
        "Sales",
    ]


def test_get_expenses_matches_the_data(tools: ExpenseTools) -> None:
    data = generate_data()
    for member in data.members[:5]:
        for quarter in ("Q1", "Q3"):
            got = tools.get_expenses(employee_id=member.id, quarter=quarter)
            want = [e for e in data.expenses if e.employee_id == member.id and e.quarter == quarter]
            assert sorted(g["id"] for g in got) == sorted(e.id for e in want)
            assert round(sum(g["amount"] for g in got) * 100) == sum(e.amount_cents for e in want)
            dates = [g["date"] for g in got]
            assert dates == sorted(dates)


def test_get_expenses_filters_by_category(tools: ExpenseTools) -> None:
    travel = tools.get_expenses("e002", "Q3", category="Travel")
    everything = tools.get_expenses("e002", "Q3")
    assert travel and all(e["category"] == "travel" for e in travel)
    assert travel == [e for e in everything if e["category"] == "travel"]
    assert len(everything) > len(travel)


def test_get_budget(tools: ExpenseTools) -> None:
    data = generate_data()
    want = next(
        b
        for b in data.budgets
        if (b.employee_id, b.quarter, b.category) == ("e002", "Q3", "travel")
    )
    got = tools.get_budget(employee_id="e002", quarter="q3", category="travel")
    assert got == {
        "employee_id": "e002",
        "quarter": "Q3",
        "category": "travel",
        "amount": want.amount_cents / 100,
    }


@pytest.mark.parametrize(
    ("call", "error", "text"),
    [
        (lambda t: t.list_team_members("Legal"), ValueError, "unknown department 'Legal'"),
        (lambda t: t.get_expenses("e002", "Q5"), ValueError, "unknown quarter 'Q5'"),
        (lambda t: t.get_expenses("e002", "Q1", "golf"), ValueError, "unknown category"),
        (lambda t: t.get_expenses("e999", "Q1"), LookupError, "no employee with id 'e999'"),
        (lambda t: t.get_budget("e999", "Q1", "travel"), LookupError, "no employee"),
        (lambda t: t.get_budget("e014", "Q3", "travel"), LookupError, "no travel budget set"),
        (lambda t: t.get_expenses(42, "Q1"), LookupError, "no employee with id 42"),
    ],
)
def test_bad_input_gets_a_clear_error(
    tools: ExpenseTools, call: object, error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):
        call(tools)  # type: ignore[operator]


def test_tools_cannot_write_to_the_database(tools: ExpenseTools) -> None:
    with tools._connect() as connection, pytest.raises(sqlite3.OperationalError, match="readonly"):
        connection.execute("DELETE FROM budgets")


def test_missing_database_is_reported(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no demo database"):
        ExpenseTools(tmp_path / "nope.db")


def test_tools_are_safe_to_call_from_many_threads(tools: ExpenseTools) -> None:
    want = tools.get_expenses("e003", "Q3")
    results: list[object] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(30):
                results.append(tools.get_expenses("e003", "Q3"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 240 and all(r == want for r in results)


def test_every_tool_documents_every_parameter(tools: ExpenseTools) -> None:
    """The docstrings become the stubs a model reads, so they must be complete."""
    for fn in tools.as_list():
        doc = docstring_parser.parse(inspect.getdoc(fn) or "")
        assert doc.short_description, fn.__name__
        assert doc.returns is not None, fn.__name__
        params = [p for p in inspect.signature(fn).parameters]
        assert [p.arg_name for p in doc.params] == params, fn.__name__
        hints = inspect.get_annotations(fn, eval_str=True)
        assert set(hints) == {*params, "return"}, fn.__name__


def test_check_answer(db: Path) -> None:
    expected = expected_answer(db)
    assert check_answer(expected, expected).ok
    assert check_answer([dict(r) for r in reversed(expected)], expected).problems
    bad = [dict(r) for r in expected]
    bad[0]["spent"] += 0.01
    verdict = check_answer(bad, expected)
    assert isinstance(verdict, AnswerCheck) and not verdict.ok
    assert "spent" in verdict.problems[0]
    assert not check_answer(None, expected).ok
    first = {**expected[0], "spent": True}  # a bool is not an amount
    assert check_answer([expected[0]], expected[:1]).ok
    assert not check_answer([first], expected[:1]).ok

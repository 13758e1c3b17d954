"""The demo's tools: read-only queries against the expense database.

Each tool opens its own read-only SQLite connection per call, so the tools are safe to
call from any thread (ThreadRuntime workers, SubprocessRuntime's host threads) and can
never change the data. Amounts come back in US dollars (two decimals).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ptcbox.demo._data import CATEGORIES, DEPARTMENTS, QUARTERS

__all__ = ["ExpenseTools"]


class ExpenseTools:
    """Tools over one demo database (see :func:`ptcbox.demo.create_database`).

    Pass :meth:`as_list` as ``tools=`` to :func:`ptcbox.execute`; each method's name,
    signature and docstring become the tool's.

    Args:
        db_path: Path of an existing demo database file.

    Raises:
        FileNotFoundError: If ``db_path`` does not exist.
    """

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = Path(db_path)
        if not self.db_path.is_file():
            raise FileNotFoundError(f"no demo database at {self.db_path}")
        self._uri = self.db_path.resolve().as_uri() + "?mode=ro"

    def as_list(self) -> list[Callable[..., Any]]:
        """Return the tools as bound methods, ready for ``tools=``."""
        return [
            self.list_departments,
            self.list_team_members,
            self.get_expenses,
            self.get_budget,
        ]

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        connection = sqlite3.connect(self._uri, uri=True)
        try:
            yield connection
        finally:
            connection.close()

    def list_departments(self) -> list[str]:
        """List the company's departments.

        Returns:
            Department names, sorted, e.g. ``["Engineering", "Finance", ...]``.
        """
        with self._connect() as db:
            rows = db.execute("SELECT DISTINCT department FROM team_members ORDER BY 1")
            return [row[0] for row in rows]

    def list_team_members(self, department: str) -> list[dict[str, str]]:
        """List the members of one department.

        Args:
            department: Department name, case-insensitive (e.g. ``"engineering"``).

        Returns:
            One dict per person, sorted by id, with keys ``id`` (e.g. ``"e007"``),
            ``name``, ``role``, ``department`` and ``email``.

        Raises:
            ValueError: If the department does not exist.
        """
        wanted = _match(department, DEPARTMENTS, "department")
        with self._connect() as db:
            rows = db.execute(
                "SELECT id, name, role, department, email FROM team_members "
                "WHERE department = ? ORDER BY id",
                (wanted,),
            ).fetchall()
        keys = ("id", "name", "role", "department", "email")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def get_expenses(
        self, employee_id: str, quarter: str, category: str | None = None
    ) -> list[dict[str, Any]]:
        """List one person's expenses in a quarter.

        Args:
            employee_id: The person's id, e.g. ``"e007"``.
            quarter: ``"Q1"`` to ``"Q4"``.
            category: Only this category (``"travel"``, ``"meals"``, ``"software"``,
                ``"equipment"``, ``"training"``); ``None`` for all.

        Returns:
            One dict per expense, in date order, with keys ``id`` (int), ``date``
            (ISO 8601), ``category``, ``description`` and ``amount`` (US dollars, float).

        Raises:
            ValueError: If the quarter or category is unknown.
            LookupError: If there is no such employee.
        """
        quarter = _match(quarter, QUARTERS, "quarter")
        sql = (
            "SELECT id, date, category, description, amount_cents FROM expenses "
            "WHERE employee_id = ? AND quarter = ?"
        )
        params: list[str] = [employee_id, quarter]
        if category is not None:
            sql += " AND category = ?"
            params.append(_match(category, CATEGORIES, "category"))
        with self._connect() as db:
            self._require_member(db, employee_id)
            rows = db.execute(sql + " ORDER BY date, id", params).fetchall()
        return [
            {"id": r[0], "date": r[1], "category": r[2], "description": r[3], "amount": r[4] / 100}
            for r in rows
        ]

    def get_budget(self, employee_id: str, quarter: str, category: str) -> dict[str, Any]:
        """Get one person's budget for a category in a quarter.

        Args:
            employee_id: The person's id, e.g. ``"e007"``.
            quarter: ``"Q1"`` to ``"Q4"``.
            category: ``"travel"``, ``"meals"``, ``"software"``, ``"equipment"`` or
                ``"training"``.

        Returns:
            ``{"employee_id", "quarter", "category", "amount"}`` with ``amount`` in US
            dollars (float).

        Raises:
            ValueError: If the quarter or category is unknown.
            LookupError: If there is no such employee, or no budget was set.
        """
        quarter = _match(quarter, QUARTERS, "quarter")
        category = _match(category, CATEGORIES, "category")
        with self._connect() as db:
            self._require_member(db, employee_id)
            row = db.execute(
                "SELECT amount_cents FROM budgets "
                "WHERE employee_id = ? AND quarter = ? AND category = ?",
                (employee_id, quarter, category),
            ).fetchone()
        if row is None:
            raise LookupError(f"no {category} budget set for {employee_id} in {quarter}")
        return {
            "employee_id": employee_id,
            "quarter": quarter,
            "category": category,
            "amount": row[0] / 100,
        }

    @staticmethod
    def _require_member(db: sqlite3.Connection, employee_id: str) -> None:
        found = db.execute("SELECT 1 FROM team_members WHERE id = ?", (employee_id,)).fetchone()
        if found is None:
            raise LookupError(f"no employee with id {employee_id!r}")


def _match(value: object, choices: tuple[str, ...], what: str) -> str:
    if isinstance(value, str):
        for choice in choices:
            if choice.lower() == value.strip().lower():
                return choice
    raise ValueError(f"unknown {what} {value!r}; expected one of {', '.join(choices)}")

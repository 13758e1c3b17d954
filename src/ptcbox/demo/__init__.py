"""The ``ptcbox demo`` toolset: an expense database in SQLite and the tools over it.

Build the database with :func:`create_database`, hand :meth:`ExpenseTools.as_list` to
:func:`ptcbox.execute`, and check answers with :func:`expected_answer`::

    import tempfile, pathlib, ptcbox
    from ptcbox.demo import ExpenseTools, SEQUENTIAL_SNIPPET, create_database

    db = create_database(pathlib.Path(tempfile.mkdtemp()) / "expenses.db")
    result = ptcbox.execute(SEQUENTIAL_SNIPPET, tools=ExpenseTools(db).as_list())
"""

from ptcbox._console import Output
from ptcbox.demo._context import DemoContext, DemoSection
from ptcbox.demo._data import (
    CATEGORIES,
    DEPARTMENTS,
    QUARTERS,
    Budget,
    DemoData,
    Expense,
    TeamMember,
    create_database,
    generate_data,
)
from ptcbox.demo._run import SECTIONS, run_demo
from ptcbox.demo._task import (
    GATHER_SNIPPET,
    SEQUENTIAL_SNIPPET,
    TASK,
    AnswerCheck,
    check_answer,
    expected_answer,
)
from ptcbox.demo._tools import ExpenseTools

__all__ = [
    "CATEGORIES",
    "DEPARTMENTS",
    "GATHER_SNIPPET",
    "QUARTERS",
    "SECTIONS",
    "SEQUENTIAL_SNIPPET",
    "TASK",
    "AnswerCheck",
    "Budget",
    "DemoContext",
    "DemoData",
    "DemoSection",
    "Expense",
    "ExpenseTools",
    "Output",
    "TeamMember",
    "check_answer",
    "create_database",
    "expected_answer",
    "generate_data",
    "run_demo",
]

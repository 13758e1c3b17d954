"""Stubs: deterministic, valid Python, with exact names, parameters and return shapes."""

from __future__ import annotations

import ast
import dataclasses
import enum
from typing import Any, Literal, TypedDict

from pydantic import BaseModel

from ptcbox.agent_glue import Tool, ToolContext, count_tokens, render_stubs
from ptcbox.projections import DirectProjection
from ptcbox.projections._stubs import format_annotation, format_signature


class Expense(TypedDict):
    amount: float
    category: str


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    """A point on a plane."""

    x: float
    y: float


class Report(BaseModel):
    """A summary report."""

    title: str
    points: list[Point]


def get_expenses(
    employee_id: str, quarter: Literal["Q1", "Q2"] = "Q1", *, context: ToolContext
) -> list[Expense]:
    """Return the expenses of one employee in one quarter.

    Args:
        employee_id: The employee's id, e.g. "e1".
        quarter: The quarter.

    Returns:
        One dict per expense.
    """
    return []


def make_report(color: Color, limit: int | None = None) -> Report:
    """Build a report."""
    return Report(title="", points=[])


def tricky(text: str = 'say """hi""" \\ "quoted"') -> dict[str, Any]:
    '''Docstring with """ triple quotes, a backslash \\ and a trailing quote "'''
    return {}


def _namespace() -> dict[str, Any]:
    tools = [Tool(get_expenses), Tool(make_report), Tool(tricky)]
    return {t.name: t.projection() for t in tools}


def test_render_stubs_is_valid_python_with_exact_signatures() -> None:
    text = render_stubs(_namespace())
    tree = ast.parse(text)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert sorted(functions) == ["get_expenses", "make_report", "tricky"]
    assert (
        "def get_expenses(employee_id: str, quarter: Literal['Q1', 'Q2'] = 'Q1') "
        "-> list[Expense]:" in text
    )
    assert "context" not in text  # the injected parameter is not part of the stub
    assert "def make_report(color: Color, limit: int | None = None) -> Report:" in text
    assert ast.get_docstring(functions["get_expenses"]).startswith(
        "Return the expenses of one employee in one quarter."
    )
    assert "employee_id: The employee's id" in ast.get_docstring(functions["get_expenses"])
    tricky_doc = ast.get_docstring(functions["tricky"])
    assert '"""' in tricky_doc and "\\" in tricky_doc and tricky_doc.endswith('"')


def test_referenced_classes_are_rendered_once_before_use() -> None:
    text = render_stubs(_namespace())
    classes = [n.name for n in ast.parse(text).body if isinstance(n, ast.ClassDef)]
    assert sorted(classes) == ["Color", "Expense", "Point", "Report"]
    assert text.index("class Point") < text.index("class Report")  # dependency first
    assert text.index("class Report") < text.index("def make_report")
    assert "class Expense(TypedDict):\n    amount: float\n    category: str" in text
    assert "class Color(Enum):\n    RED = 'red'\n    BLUE = 'blue'" in text
    assert "@dataclass\nclass Point:" in text
    assert "points: list[Point]" in text


def test_render_stubs_is_deterministic_and_sorted() -> None:
    first = render_stubs(_namespace())
    reordered = dict(reversed(list(_namespace().items())))
    assert render_stubs(reordered) == first
    assert render_stubs({}) == ""


def test_direct_projection_and_unannotated_functions() -> None:
    def add(a, b=2):  # type: ignore[no-untyped-def]
        return a + b

    async def fetch(url: str) -> bytes:
        """Fetch a URL."""
        return b""

    namespace = {
        "add": DirectProjection("add", add),
        "fetch": DirectProjection("fetch", fetch),
    }
    text = render_stubs(namespace)
    ast.parse(text)
    assert "def add(a, b=2) -> Any:\n    ..." in text
    assert 'def fetch(url: str) -> bytes:\n    """Fetch a URL."""' in text


def test_format_helpers() -> None:
    assert format_annotation(dict[str, list[int]]) == "dict[str, list[int]]"
    assert format_annotation(int | None) == "int | None"
    assert format_annotation("Forward") == "Forward"
    assert format_signature("f", None) == "f(**kwargs)"


def test_count_tokens_uses_o200k_base() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("<|endoftext|>") > 1  # special tokens count as plain text
    text = render_stubs(_namespace())
    assert 50 < count_tokens(text) < len(text)

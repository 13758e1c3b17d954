"""What every section of ``ptcbox demo`` gets, and what a section is."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptcbox._console import Output
from ptcbox.demo._tools import ExpenseTools
from ptcbox.runtimes import CodeRuntime

__all__ = ["DemoContext", "DemoSection"]


@dataclass(frozen=True, slots=True)
class DemoContext:
    """What every demo section gets.

    Attributes:
        out: Where to print.
        db_path: The demo database (deleted when the demo ends).
        tools: The toolset over that database.
        runtime: The open runtime to run snippets in (closed by the demo).
        runtime_name: ``"thread"`` or ``"subprocess"``.
        expected: :func:`~ptcbox.demo.expected_answer` for the database.
    """

    out: Output
    db_path: Path
    tools: ExpenseTools
    runtime: CodeRuntime
    runtime_name: str
    expected: list[dict[str, Any]]


DemoSection = Callable[[DemoContext], Awaitable[bool]]
"""A demo step: prints its part and returns ``False`` when its answer is wrong."""

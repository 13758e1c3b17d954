"""``ptcbox demo``: answer :data:`~ptcbox.demo.TASK` with model-style snippets, and check it.

The demo is a list of sections run in order against one fresh database and one runtime;
each prints what it did and returns whether its answer was right. Adding a section (the
token comparison of issue 5, for instance) means appending to :data:`SECTIONS`.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path

from ptcbox._console import Output, fmt_seconds
from ptcbox._execute import DEFAULT_RUNTIME, aclose_runtime, make_runtime
from ptcbox._toolset import resolve_tools
from ptcbox.demo._context import DemoContext, DemoSection
from ptcbox.demo._data import create_database
from ptcbox.demo._task import (
    GATHER_SNIPPET,
    SEQUENTIAL_SNIPPET,
    TASK,
    check_answer,
    expected_answer,
)
from ptcbox.demo._tokens import token_comparison_section
from ptcbox.demo._tools import ExpenseTools

__all__ = ["SECTIONS", "run_demo"]


def snippet_section(title: str, snippet: str) -> DemoSection:
    """Build a section that runs one snippet and checks its value against SQL.

    Args:
        title: Heading of the section.
        snippet: Code that ends with the answer rows as a trailing expression.

    Returns:
        The section.
    """

    async def section(ctx: DemoContext) -> bool:
        out = ctx.out
        out.heading(title)
        out.code(snippet)
        namespace = resolve_tools(ctx.tools.as_list())
        started = time.perf_counter()
        result = await ctx.runtime.execute(snippet, namespace)
        wall = time.perf_counter() - started
        out.line("output:", "[bold]output:[/]")
        out.raw(result.stdout)
        out.result_summary(result)
        tool_time = sum(call.duration_s for call in result.tool_calls)
        out.line(
            f"timing: {fmt_seconds(wall)} wall, {fmt_seconds(result.duration_s)} in the "
            f"runtime, {fmt_seconds(tool_time)} summed over tool calls"
        )
        verdict = check_answer(result.value, ctx.expected) if result.ok else None
        if verdict is not None and verdict.ok:
            out.line(
                f"check against a direct SQL query: OK ({len(ctx.expected)} engineers)",
                f"check against a direct SQL query: [bold green]OK[/] "
                f"({len(ctx.expected)} engineers)",
            )
            return True
        problems = verdict.problems if verdict is not None else ("the snippet failed",)
        out.line(
            "check against a direct SQL query: MISMATCH",
            "check against a direct SQL query: [bold red]MISMATCH[/]",
        )
        for problem in problems:
            out.line(f"  {problem}")
        return False

    return section


SECTIONS: list[DemoSection] = [
    snippet_section("1. sequential tool calls", SEQUENTIAL_SNIPPET),
    snippet_section("2. concurrent tool calls with asyncio.gather", GATHER_SNIPPET),
    # Issue 5: the task run both ways (classic tool calling and run_code) through the
    # scripted agent, with the token comparison; it gets the same DemoContext.
    token_comparison_section,
]
"""The demo's steps, in order."""


async def run_demo(runtime: str | None = None, *, out: Output | None = None) -> int:
    """Run every section of :data:`SECTIONS` against a fresh demo database.

    Args:
        runtime: ``"thread"``, ``"subprocess"`` or ``None`` for the default runtime.
        out: Where to print; defaults to stdout (rich on a terminal).

    Returns:
        ``0`` when every section's answer matched the SQL check, else ``1``.

    Raises:
        ValueError: If ``runtime`` is not a known runtime name.
    """
    out = out if out is not None else Output()
    name = runtime or DEFAULT_RUNTIME
    code_runtime = make_runtime(name)
    try:
        with tempfile.TemporaryDirectory(prefix="ptcbox-demo-") as tmp:
            db_path = create_database(Path(tmp) / "expenses.db")
            _header(out, db_path, name)
            ctx = DemoContext(
                out=out,
                db_path=db_path,
                tools=ExpenseTools(db_path),
                runtime=code_runtime,
                runtime_name=name,
                expected=expected_answer(db_path),
            )
            results = [await section(ctx) for section in SECTIONS]
    finally:
        await aclose_runtime(code_runtime)
    if all(results):
        out.line("demo: every answer OK", "[bold green]demo: every answer OK[/]")
        return 0
    out.line("demo: MISMATCH (see above)", "[bold red]demo: MISMATCH (see above)[/]")
    return 1


def _header(out: Output, db_path: Path, runtime_name: str) -> None:
    connection = sqlite3.connect(db_path)
    try:
        counts = {
            table: connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("team_members", "expenses", "budgets")
        }
    finally:
        connection.close()
    out.line(f"ptcbox demo: {TASK}", f"[bold]ptcbox demo:[/] {TASK}")
    out.line(
        f"database: {db_path} (SQLite; {counts['team_members']} team members, "
        f"{counts['expenses']} expenses, {counts['budgets']} budgets)"
    )
    out.line(f"runtime: {runtime_name} (default sandbox policy)")

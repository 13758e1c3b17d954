"""The demo's token-comparison section (``ptcbox.demo._tokens``), on a real runtime."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ptcbox._console import Output
from ptcbox._execute import aclose_runtime, make_runtime
from ptcbox.bench import live_fetch
from ptcbox.demo import DemoContext
from ptcbox.demo._data import create_database
from ptcbox.demo._task import expected_answer
from ptcbox.demo._tokens import SUITE_HEADLINE, demo_scenario, token_comparison_section
from ptcbox.demo._tools import ExpenseTools

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def context(tmp_path: Path) -> AsyncIterator[tuple[DemoContext, io.StringIO]]:
    db = create_database(tmp_path / "expenses.db")
    sink = io.StringIO()
    runtime = make_runtime("thread")
    try:
        yield (
            DemoContext(
                out=Output(sink, rich=False),
                db_path=db,
                tools=ExpenseTools(db),
                runtime=runtime,
                runtime_name="thread",
                expected=expected_answer(db),
            ),
            sink,
        )
    finally:
        await aclose_runtime(runtime)


async def test_the_section_runs_the_task_both_ways_and_prints_the_saving(
    context: tuple[DemoContext, io.StringIO],
) -> None:
    ctx, sink = context
    assert await token_comparison_section(ctx)
    text = sink.getvalue()
    assert "token cost: classic tool calling vs run_code vs hybrid" in text
    assert text.count("answer OK") == 3
    assert "fewer tokens for the same answer" in text
    assert f"across the benchmark suite (ptcbox bench tokens): {SUITE_HEADLINE}" in text
    assert "98.7% saved" in text


async def test_the_section_fails_when_the_answer_is_wrong(
    context: tuple[DemoContext, io.StringIO],
) -> None:
    ctx, sink = context
    wrong = [dict(row, over_by=row["over_by"] + 1) for row in ctx.expected]
    tampered = DemoContext(ctx.out, ctx.db_path, ctx.tools, ctx.runtime, ctx.runtime_name, wrong)
    assert not await token_comparison_section(tampered)
    assert "answer WRONG" in sink.getvalue()


def test_the_demo_scenario_is_checked_against_sql(tmp_path: Path) -> None:
    db = create_database(tmp_path / "expenses.db")
    expected = expected_answer(db)
    scenario = demo_scenario(ExpenseTools(db), expected)
    assert expected and scenario.reference() == expected
    assert scenario.solve(live_fetch(scenario.tools)) == expected
    assert scenario.check(scenario.classic[-1].text)
    assert not scenario.check(scenario.classic[-1].text.replace(expected[0]["name"], "x"))

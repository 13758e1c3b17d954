"""The demo's closing section: its task run both ways through the scripted agent.

``ptcbox demo`` answers "which engineers went over their Q3 travel budget?" with
snippets; this section then runs the same task as an agent would, twice (classic tool
calls turn by turn, then one ``run_code`` call), through the real agent loop, the demo's
tools and its runtime, and prints the token comparison.
"""

from __future__ import annotations

from typing import Any

from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ptcbox.bench._results import REFERENCE_POINTS, ScenarioComparison, TrajectoryRun
from ptcbox.bench._runner import run_scenario
from ptcbox.bench._scenario import Scenario, call, final, run_code, turn
from ptcbox.demo._context import DemoContext
from ptcbox.demo._task import SEQUENTIAL_SNIPPET, TASK
from ptcbox.projections._stubs import count_tokens

__all__ = ["demo_scenario", "token_comparison_section"]


def _money(amount: float) -> str:
    return f"${amount:,.2f}"


def demo_scenario(tools: Any, expected: list[dict[str, Any]]) -> Scenario:
    """Build the demo task as a benchmark scenario over the demo database.

    Args:
        tools: The demo's :class:`~ptcbox.demo.ExpenseTools`.
        expected: The SQL-checked answer (:func:`~ptcbox.demo.expected_answer`).

    Returns:
        A scenario whose classic trajectory lists the engineers, then fetches every
        engineer's travel expenses and budget in one parallel turn; whose PTC trajectory
        runs the demo's sequential snippet; both end with the same answer.
    """
    engineers = tools.list_team_members(department="Engineering")
    per_person = [
        call(name, employee_id=person["id"], quarter="Q3", category="travel")
        for person in engineers
        for name in ("get_expenses", "get_budget")
    ]
    failures = 0
    for person in engineers:
        try:
            tools.get_budget(employee_id=person["id"], quarter="Q3", category="travel")
        except LookupError:
            failures += 1
    lines = [
        f"- {row['name']} ({row['id']}): {_money(row['spent'])} spent, "
        f"{_money(row['budget'])} budget, {_money(row['over_by'])} over"
        for row in expected
    ]
    answer = (
        f"{len(expected)} of {len(engineers)} engineers went over their Q3 travel budget:\n"
        + "\n".join(lines)
    )
    facts = tuple(f"{row['name']} ({row['id']}): {_money(row['spent'])}" for row in expected)
    over = tuple(f"{_money(row['over_by'])} over" for row in expected)
    return Scenario(
        name="demo_travel_budget",
        title=TASK,
        prompt=TASK,
        tools=tuple(tools.as_list()),
        reference=lambda: expected,
        expected=expected,
        facts=facts + over,
        classic=(
            turn(call("list_team_members", department="Engineering")),
            turn(*per_person, text="Fetching every engineer's Q3 travel expenses and budget."),
            final(answer),
        ),
        ptc=(turn(run_code(SEQUENTIAL_SNIPPET)), final(answer)),
        code_facts=facts + over,
        expected_tool_errors=failures,
    )


def _describe(run: TrajectoryRun) -> str:
    calls = f"{run.tool_calls} tool call{'s' * (run.tool_calls != 1)}"
    if run.code_tool_calls:
        calls += f" ({run.code_tool_calls} made by the code)"
    verdict = "answer OK" if run.correct else f"answer WRONG {run.error or ''}".rstrip()
    return (
        f"{run.mode:8} {run.turns} turns, {calls}: {run.input_tokens:,} input + "
        f"{run.output_tokens:,} output = {run.total_tokens:,} tokens, "
        f"{run.wall_time_s:.2f} s, {verdict}"
    )


async def token_comparison_section(ctx: DemoContext) -> bool:
    """Demo section: the task through the scripted agent, classic vs ``run_code``.

    Args:
        ctx: The demo's context (tools, runtime, expected answer, output).

    Returns:
        ``True`` when both runs answered correctly.
    """
    out = ctx.out
    out.heading("3. token cost: classic tool calling vs run_code (scripted agent)")
    scenario = demo_scenario(ctx.tools, ctx.expected)
    count_tokens("load the encoding before the timed runs")
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=out.console,
        transient=True,
        disable=not out.rich,
    )
    with progress:
        task = progress.add_task("classic: one turn per round of tool calls ...", total=2)

        def on_run(run: TrajectoryRun) -> None:
            progress.update(task, advance=1, description="run_code: one snippet ...")

        comparison: ScenarioComparison = await run_scenario(scenario, ctx.runtime, on_run=on_run)
    for run in (comparison.classic, comparison.ptc):
        out.line(_describe(run))
    saving = comparison.saving_percent
    out.line(
        f"run_code used {saving:.1f}% fewer tokens for the same answer "
        f"(o200k_base; every request counted as sent: system prompt, tools, history)",
        f"[bold green]run_code used {saving:.1f}% fewer tokens[/] for the same answer "
        f"(o200k_base; every request counted as sent: system prompt, tools, history)",
    )
    for source, result in REFERENCE_POINTS:
        out.line(f"  for reference - {source}: {result}")
    out.line("more scenarios: ptcbox bench tokens")
    return comparison.classic.correct and comparison.ptc.correct

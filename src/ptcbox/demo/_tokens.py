"""The demo's closing section: its task run both ways through the scripted agent.

``ptcbox demo`` answers "which engineers went over their Q3 travel budget?" with
snippets; this section then runs the same task as an agent would, three ways (classic
tool calls turn by turn, one ``run_code`` call, and hybrid with both offered), through
the real agent loop, the demo's tools and its runtime, prints the token comparison and
quotes the suite's headline (:data:`SUITE_HEADLINE`, checked against a fresh run by the
tests).
"""

from __future__ import annotations

from typing import Any

from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ptcbox.bench._results import MODES, REFERENCE_POINTS, ScenarioComparison, TrajectoryRun
from ptcbox.bench._runner import run_scenario
from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn
from ptcbox.demo._context import DemoContext
from ptcbox.demo._task import SEQUENTIAL_SNIPPET, TASK
from ptcbox.projections._stubs import count_tokens

__all__ = ["SUITE_HEADLINE", "demo_scenario", "token_comparison_section"]

SUITE_HEADLINE = (
    "run_code (PTC): median 73% fewer tokens than classic (range 33% more to 97% fewer, "
    "n=13 scenarios); pooled 82% fewer, 73% fewer without regional_revenue; with prompt "
    "caching, median 55% lower cost (range 63% higher to 96% lower)"
)
"""What ``ptcbox bench tokens`` reports for the whole suite (the README quotes it too)."""


def _money(amount: float) -> str:
    return f"${amount:,.2f}"


def demo_scenario(tools: Any, expected: list[dict[str, Any]]) -> Scenario:
    """Build the demo task as a benchmark scenario over the demo database.

    Args:
        tools: The demo's :class:`~ptcbox.demo.ExpenseTools`.
        expected: The SQL-checked answer (:func:`~ptcbox.demo.expected_answer`).

    Returns:
        A scenario whose classic trajectory lists the engineers, then fetches every
        engineer's travel expenses and budget in one parallel turn; whose PTC and hybrid
        trajectories run the demo's sequential snippet; all end with the same answer.
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
    answer = "These engineers went over their Q3 travel budget:\n" + "\n".join(lines)

    def solve(fetch: Fetch) -> list[dict[str, Any]]:
        over = []
        for person in fetch("list_team_members", department="Engineering"):
            args = {"employee_id": person["id"], "quarter": "Q3", "category": "travel"}
            spent = round(sum(e["amount"] for e in fetch("get_expenses", **args)), 2)
            try:
                budget = fetch("get_budget", **args)["amount"]
            except LookupError:
                continue
            if spent > budget:
                row = {"id": person["id"], "name": person["name"], "spent": spent}
                over.append(row | {"budget": budget, "over_by": round(spent - budget, 2)})
        return sorted(over, key=lambda row: row["over_by"], reverse=True)

    facts = tuple(f"{row['name']} ({row['id']}): {_money(row['spent'])}" for row in expected)
    over = tuple(f"{_money(row['over_by'])} over" for row in expected)
    return Scenario(
        name="demo_travel_budget",
        title=TASK,
        prompt=TASK,
        tools=tuple(tools.as_list()),
        reference=lambda: expected,
        solve=solve,
        expected=expected,
        facts=facts + over,
        classic=(
            turn(call("list_team_members", department="Engineering")),
            turn(*per_person, text="Fetching every engineer's Q3 travel expenses and budget."),
            final(answer),
        ),
        ptc=(turn(run_code(SEQUENTIAL_SNIPPET)), final(answer)),
        hybrid=(turn(run_code(SEQUENTIAL_SNIPPET)), final(answer)),
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
    """Demo section: the task through the scripted agent, classic vs ``run_code`` vs hybrid.

    Args:
        ctx: The demo's context (tools, runtime, expected answer, output).

    Returns:
        ``True`` when both runs answered correctly.
    """
    out = ctx.out
    out.heading("3. token cost: classic tool calling vs run_code vs hybrid (scripted agent)")
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
        task = progress.add_task("classic: one turn per round of tool calls ...", total=3)

        def on_run(run: TrajectoryRun) -> None:
            progress.update(task, advance=1, description=f"{run.mode} done ...")

        comparison: ScenarioComparison = await run_scenario(scenario, ctx.runtime, on_run=on_run)
    for mode in MODES:
        out.line(_describe(comparison.run(mode)))
    saving = comparison.saving_percent
    out.line(
        f"on this task run_code used {saving:.1f}% fewer tokens for the same answer "
        f"(o200k_base; every request counted as sent: system prompt, tools, history)",
        f"on this task [bold green]run_code used {saving:.1f}% fewer tokens[/] for the same "
        f"answer (o200k_base; every request counted as sent: system prompt, tools, history)",
    )
    out.line(f"across the benchmark suite (ptcbox bench tokens): {SUITE_HEADLINE}")
    for source, result in REFERENCE_POINTS:
        out.line(f"  for reference - {source}: {result}")
    return all(comparison.run(mode).correct for mode in MODES)

"""Rendering a :class:`TokenReport`: a rich table and Markdown tables with the headline."""

from __future__ import annotations

import statistics

from rich.console import Console
from rich.table import Table

from ptcbox.bench._pricing import SONNET
from ptcbox.bench._results import MODES, REFERENCE_POINTS, Mode, TokenReport, TrajectoryRun

__all__ = ["headline_lines", "pricing_note", "print_report", "render_markdown"]

_LABEL = {"classic": "classic", "ptc": "PTC", "hybrid": "hybrid"}


def _mark(run: TrajectoryRun) -> str:
    if run.error:
        return "error"
    return "yes" if run.correct else "NO"


def _calls(run: TrajectoryRun) -> str:
    calls = str(run.tool_calls)
    return calls + (f" (+{run.code_tool_calls} in code)" if run.code_tool_calls else "")


def pricing_note() -> str:
    """One sentence naming the prices and caching multipliers used for costs."""
    return (
        f"Costs at {SONNET.name} list prices (${SONNET.input_per_mtok:g} / "
        f"${SONNET.output_per_mtok:g} per million input / output tokens); cached: every "
        f"request reads the previous prompt from the cache at {SONNET.cache_read:g}x and "
        f"writes the rest at {SONNET.cache_write:g}x the input price (prompts under "
        f"{SONNET.min_cacheable:,} tokens are not cached); source: {SONNET.source}."
    )


def headline_lines(report: TokenReport) -> list[str]:
    """The headline, one line per kind: median with range and n, pooled totals."""
    return [report.headline(mode).sentence() + "." for mode in MODES[1:]]


def _definitions_note(report: TokenReport) -> str:
    medians = {
        mode: statistics.median(c.run(mode).definition_tokens for c in report.comparisons)
        for mode in MODES
    }
    parts = [f"{_LABEL[mode]} {medians[mode]:,.0f}" for mode in MODES]
    return (
        "Tool definitions sent with every request (median over scenarios, tokens): "
        + ", ".join(parts)
        + "; hybrid carries both sets."
    )


def print_report(report: TokenReport, console: Console | None = None) -> None:
    """Print the per-scenario table, the headline, the totals and reference points.

    Args:
        report: The results.
        console: Where to print; default a new :class:`rich.console.Console`.
    """
    console = console or Console()
    api = any(c.classic.api_input_tokens is not None for c in report.comparisons)
    strict = ", strict: every run_code trajectory explores first" if report.strict else ""
    table = Table(
        title=f"Tokens and cost per task: classic tool calls vs run_code vs hybrid (model: "
        f"{report.model}; snippets on {report.runtime}; {report.encoding} tokens{strict})",
        title_justify="left",
    )
    headers = ["scenario", "kind", "turns", "tool calls", "tokens in / out", "total", "peak",
               "$ (cached)", "saving", "correct"]  # fmt: skip
    if api:
        headers.append("API usage in / out")
    for header in headers:
        table.add_column(
            header,
            justify="left" if header in ("scenario", "kind") else "right",
            no_wrap=header in ("scenario", "tool calls"),
        )
    for c in report.comparisons:
        for mode in MODES:
            run = c.run(mode)
            row = [
                {"classic": c.scenario, "ptc": f"({c.shape})"}.get(mode, ""),
                _LABEL[mode],
                str(run.turns),
                _calls(run),
                f"{run.input_tokens:,} / {run.output_tokens:,}",
                f"{run.total_tokens:,}",
                f"{run.peak_context:,}",
                f"{run.cost(cached=False):.4f} ({run.cost(cached=True):.4f})",
                "" if mode == "classic" else f"{c.saving(mode):.1f}%",
                _mark(run) if run.correct or not run.problem else f"NO: {run.problem}",
            ]
            if api:
                row.append(
                    "-"
                    if run.api_input_tokens is None
                    else f"{run.api_input_tokens:,} / {run.api_output_tokens or 0:,}"
                )
            table.add_row(*row, end_section=mode == "hybrid")
    console.print(table)
    n = len(report.comparisons)
    for mode in MODES:
        t = report.totals(mode)
        console.print(
            f"[bold]{_LABEL[mode]}[/] over {n} scenarios: {t['total_tokens']:,} tokens "
            f"({t['input_tokens']:,} in / {t['output_tokens']:,} out), {t['turns']} turns, "
            f"${t['cost_usd']:.4f} (${t['cached_cost_usd']:.4f} cached), "
            f"{t['correct']}/{n} correct"
        )
    if report.comparisons:
        for line in headline_lines(report):
            console.print(f"[bold green]{line}[/]")
        console.print(_definitions_note(report))
    console.print(pricing_note())
    console.print("Reference points (published):")
    for source, result in REFERENCE_POINTS:
        console.print(f"  - {source}: {result}")
    if report.chart_path:
        console.print(f"Chart: {report.chart_path}")


def _cell(report: TokenReport, mode: Mode, index: int) -> str:
    run = report.comparisons[index].run(mode)
    return f"{run.total_tokens:,} ({run.turns}, {run.peak_context:,})"


def render_markdown(report: TokenReport) -> str:
    """Return the results as Markdown: the headline, a token table, a cost table.

    Args:
        report: The results.

    Returns:
        Markdown text.
    """
    lines = [f"- {line}" for line in headline_lines(report)] if report.comparisons else []
    if report.strict:
        lines.append("- Strict mode: every trajectory that uses run_code explores first.")
    lines += [
        "",
        "| scenario | shape | classic tokens (turns, peak) | PTC tokens (turns, peak) "
        "| PTC saving | hybrid tokens (turns, peak) | hybrid saving | correct (c / p / h) |",
        "|---|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for i, c in enumerate(report.comparisons):
        marks = " / ".join(_mark(c.run(mode)) for mode in MODES)
        lines.append(
            f"| {c.title} | {c.shape} | {_cell(report, 'classic', i)} "
            f"| {_cell(report, 'ptc', i)} | {c.saving('ptc'):.1f}% "
            f"| {_cell(report, 'hybrid', i)} | {c.saving('hybrid'):.1f}% | {marks} |"
        )
    totals = {mode: report.totals(mode) for mode in MODES}
    n = len(report.comparisons)
    correct = " / ".join(f"{totals[mode]['correct']}/{n}" for mode in MODES)
    lines.append(
        f"| **total** | | **{totals['classic']['total_tokens']:,}** "
        f"| **{totals['ptc']['total_tokens']:,}** | {report.saving_percent:.1f}% "
        f"| **{totals['hybrid']['total_tokens']:,}** "
        f"| {report.headline('hybrid').pooled if n else 0.0:.1f}% "
        f"| {correct} |"
    )
    lines += [
        "",
        "| scenario | classic $ (cached) | PTC $ (cached) | hybrid $ (cached) "
        "| PTC cost saving (cached) | hybrid cost saving (cached) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for c in report.comparisons:
        cells = [
            f"{c.run(m).cost(cached=False):.4f} ({c.run(m).cost(cached=True):.4f})" for m in MODES
        ]
        savings = [
            f"{c.cost_saving(m, cached=False):.1f}% ({c.cost_saving(m, cached=True):.1f}%)"
            for m in MODES[1:]
        ]
        lines.append(f"| {c.title} | {' | '.join(cells)} | {' | '.join(savings)} |")
    lines.append(
        "| **total** | "
        + " | ".join(
            f"{totals[m]['cost_usd']:.4f} ({totals[m]['cached_cost_usd']:.4f})" for m in MODES
        )
        + " | | |"
    )
    lines += ["", "Tokens: o200k_base, every request counted as sent (system prompt, tool "
              "definitions, history); output = text, tool names and arguments the model "
              "wrote; peak = the largest single request. A run is correct only if the calls "
              "it made cover the data the answer needs, the answer states the right result, "
              "and every figure it states was in the run's own tool results or printed "
              "output (classic: or worked out from raw results it read)."]  # fmt: skip
    if report.comparisons:
        lines.append(_definitions_note(report))
    lines.append(pricing_note())
    return "\n".join(lines) + "\n"

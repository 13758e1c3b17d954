"""Rendering a :class:`TokenReport`: a rich table, a Markdown table, and a PNG chart."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from ptcbox.bench._results import REFERENCE_POINTS, TokenReport, TrajectoryRun

__all__ = ["print_report", "render_markdown", "write_chart"]


def _mark(run: TrajectoryRun) -> str:
    if run.error:
        return "error"
    return "yes" if run.correct else "NO"


def _row(run: TrajectoryRun, api: bool) -> list[str]:
    calls = str(run.tool_calls)
    if run.code_tool_calls:
        calls += f" (+{run.code_tool_calls} in code)"
    row = [
        run.mode,
        str(run.turns),
        calls,
        f"{run.input_tokens:,}",
        f"{run.output_tokens:,}",
        f"{run.total_tokens:,}",
        f"{run.wall_time_s:.3f}",
        _mark(run),
    ]
    if api:
        row.append(
            "-"
            if run.api_input_tokens is None
            else f"{run.api_input_tokens:,} / {run.api_output_tokens or 0:,}"
        )
    return row


_HEADERS = ["scenario", "mode", "turns", "tool calls", "input", "output", "total", "wall s",
            "correct"]  # fmt: skip


def print_report(report: TokenReport, console: Console | None = None) -> None:
    """Print the per-scenario table, the totals with the saving, and reference points.

    Args:
        report: The results.
        console: Where to print; default a new :class:`rich.console.Console`.
    """
    console = console or Console()
    api = any(c.classic.api_input_tokens is not None for c in report.comparisons)
    table = Table(
        title=f"Tokens per task, classic tool calling vs run_code (model: {report.model}; "
        f"snippets on {report.runtime}; {report.encoding} tokens)",
        title_justify="left",
    )
    headers = [*_HEADERS, "saving"] + (["API usage in / out"] if api else [])
    for header in headers:
        table.add_column(
            header,
            justify="left" if header in ("scenario", "mode") else "right",
            no_wrap=header in ("scenario", "tool calls"),
        )
    for c in report.comparisons:
        table.add_row(c.scenario, *_row(c.classic, api)[:8], "", *_row(c.classic, api)[8:])
        table.add_row(
            "",
            *_row(c.ptc, api)[:8],
            f"{c.saving_percent:.1f}%",
            *_row(c.ptc, api)[8:],
            end_section=True,
        )
    console.print(table)
    classic, ptc = report.totals("classic"), report.totals("ptc")
    n = len(report.comparisons)
    console.print(
        f"[bold]Totals[/] over {n} scenarios: classic {classic['total_tokens']:,} tokens "
        f"({classic['input_tokens']:,} in / {classic['output_tokens']:,} out, "
        f"{classic['turns']} turns, {classic['correct']}/{n} correct); "
        f"run_code {ptc['total_tokens']:,} tokens ({ptc['input_tokens']:,} in / "
        f"{ptc['output_tokens']:,} out, {ptc['turns']} turns, {ptc['correct']}/{n} correct)"
    )
    console.print(
        f"[bold green]run_code saves {report.saving_percent:.1f}% of tokens[/] over the suite "
        f"(median per scenario: {report.median_saving_percent:.1f}%)"
    )
    console.print("Reference points (published):")
    for source, result in REFERENCE_POINTS:
        console.print(f"  - {source}: {result}")
    if report.chart_path:
        console.print(f"Chart: {report.chart_path}")


def render_markdown(report: TokenReport) -> str:
    """Return the results as a Markdown table plus a totals line (for the README).

    Args:
        report: The results.

    Returns:
        Markdown text.
    """
    lines = [
        "| scenario | classic turns | classic tokens (in / out) | PTC turns "
        "| PTC tokens (in / out) | saving | correct (classic / PTC) |",
        "|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for c in report.comparisons:
        lines.append(
            f"| {c.title} | {c.classic.turns} | {c.classic.total_tokens:,} "
            f"({c.classic.input_tokens:,} / {c.classic.output_tokens:,}) | {c.ptc.turns} "
            f"| {c.ptc.total_tokens:,} ({c.ptc.input_tokens:,} / {c.ptc.output_tokens:,}) "
            f"| {c.saving_percent:.1f}% | {_mark(c.classic)} / {_mark(c.ptc)} |"
        )
    classic, ptc = report.totals("classic"), report.totals("ptc")
    n = len(report.comparisons)
    lines.append(
        f"| **total** | {classic['turns']} | **{classic['total_tokens']:,}** | {ptc['turns']} "
        f"| **{ptc['total_tokens']:,}** | **{report.saving_percent:.1f}%** "
        f"| {classic['correct']}/{n} / {ptc['correct']}/{n} |"
    )
    lines.append(
        f"\nMedian saving per scenario: {report.median_saving_percent:.1f}%. "
        "Tokens: o200k_base, every request counted as sent (system prompt, tool "
        "definitions, history); output = text, tool names and arguments the model wrote."
    )
    return "\n".join(lines) + "\n"


def write_chart(report: TokenReport, path: str | Path) -> Path:
    """Draw tokens per scenario, classic vs PTC, as a grouped bar chart (PNG).

    Needs matplotlib (``pip install 'ptcbox[bench]'``); uses the non-interactive Agg
    backend.

    Args:
        report: The results.
        path: The PNG file to write; parent directories are created.

    Returns:
        The path written.

    Raises:
        ImportError: If matplotlib is not installed (the message names the extra).
    """
    try:
        import matplotlib  # noqa: PLC0415 - optional dependency

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError("the chart needs matplotlib: pip install 'ptcbox[bench]'") from exc
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    names = [c.scenario for c in report.comparisons]
    classic = [c.classic.total_tokens for c in report.comparisons]
    ptc = [c.ptc.total_tokens for c in report.comparisons]
    positions = range(len(names))
    width = 0.4
    fig, ax = plt.subplots(figsize=(11, 5.5), dpi=110)
    try:
        left = ax.bar(
            [p - width / 2 for p in positions],
            classic,
            width,
            label="classic tool calling",
            color="#c44e52",
        )
        right = ax.bar(
            [p + width / 2 for p in positions], ptc, width, label="run_code (PTC)", color="#4c72b0"
        )
        for bar in (*left, *right):
            ax.annotate(
                _thousands(bar.get_height()),
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=8,
                xytext=(0, 2),
                textcoords="offset points",
            )
        for bar, comparison in zip(right, report.comparisons, strict=True):
            ax.annotate(
                f"-{comparison.saving_percent:.0f}%",
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=9,
                fontweight="bold",
                xytext=(0, 14),
                textcoords="offset points",
            )
        ax.set_yscale("log")
        ax.set_ylim(bottom=300)
        ax.set_xticks(list(positions))
        ax.set_xticklabels(names, rotation=25, ha="right")
        ax.set_ylabel("total tokens per task (o200k_base, log scale)")
        ax.set_title(
            f"Tokens per scenario: classic vs run_code ({report.model}); "
            f"total saving {report.saving_percent:.1f}%"
        )
        ax.legend()
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(out)
    finally:
        plt.close(fig)
    return out


def _thousands(value: float) -> str:
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.0f}"

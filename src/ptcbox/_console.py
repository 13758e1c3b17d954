"""Human-readable output for the CLI and the demo: rich on a terminal, plain text otherwise.

Snippet output is always written verbatim (never interpreted as rich markup); only
ptcbox's own summary lines are styled.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from ptcbox._result import CodeResult, ToolCallRecord

__all__: list[str] = []  # internal to the CLI; Output is public as ptcbox.demo.Output

_MAX_LISTED_FAILURES = 5


@dataclass(frozen=True, slots=True)
class ToolStats:
    """Calls of one tool within one execution."""

    name: str
    calls: int
    errors: int
    total_s: float


def tool_stats(calls: Iterable[ToolCallRecord]) -> list[ToolStats]:
    """Count calls, failures and time per tool, in order of first call."""
    order: dict[str, list[float]] = {}
    for call in calls:
        entry = order.setdefault(call.name, [0, 0, 0.0])
        entry[0] += 1
        entry[1] += 0 if call.ok else 1
        entry[2] += call.duration_s
    return [ToolStats(name, int(c), int(e), t) for name, (c, e, t) in order.items()]


def fmt_seconds(seconds: float) -> str:
    """Format a duration: µs below 1 ms, ms below 10 s, else seconds."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 10:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


class Output:
    """Writes summaries to a stream, styled with rich when the stream is a terminal.

    Used by ``ptcbox run`` and by demo sections (:class:`ptcbox.demo.DemoContext`).

    Args:
        stream: Where to write; defaults to ``sys.stdout``.
        rich: Force styled (``True``) or plain (``False``) output; ``None`` detects a TTY.
    """

    def __init__(self, stream: TextIO | None = None, *, rich: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        isatty = getattr(self.stream, "isatty", None)
        self.rich = rich if rich is not None else bool(isatty and isatty())
        self.console = Console(file=self.stream, highlight=False, soft_wrap=True)

    def raw(self, text: str) -> None:
        """Write text verbatim (snippet output), ending with a newline."""
        if not text:
            return
        self.stream.write(text if text.endswith("\n") else text + "\n")
        self.stream.flush()

    def line(self, plain: str, styled: str | None = None) -> None:
        """Write one line: ``styled`` (rich markup) on a terminal, else ``plain``."""
        if self.rich:
            self.console.print(styled if styled is not None else escape(plain))
        else:
            self.stream.write(plain + "\n")
            self.stream.flush()

    def heading(self, title: str) -> None:
        """Write a section heading."""
        if self.rich:
            self.console.rule(f"[bold]{escape(title)}", align="left")
        else:
            self.line(f"== {title} ==")

    def code(self, source: str) -> None:
        """Show Python source (syntax-highlighted on a terminal)."""
        if self.rich:
            self.console.print(Syntax(source.rstrip("\n"), "python", line_numbers=False))
        else:
            self.raw(source)

    def tool_table(self, calls: Sequence[ToolCallRecord]) -> None:
        """Write calls / errors / total time per tool, then the totals."""
        stats = tool_stats(calls)
        if not stats:
            self.line("tool calls: none")
            return
        total_errors = sum(s.errors for s in stats)
        total_time = sum(s.total_s for s in stats)
        if self.rich:
            table = Table(title=None, show_edge=False, pad_edge=False)
            table.add_column("tool")
            table.add_column("calls", justify="right")
            table.add_column("errors", justify="right")
            table.add_column("time in tool", justify="right")
            for s in stats:
                errors = f"[red]{s.errors}[/]" if s.errors else "0"
                table.add_row(escape(s.name), str(s.calls), errors, fmt_seconds(s.total_s))
            table.add_section()
            table.add_row(
                "[bold]total", f"[bold]{len(calls)}", str(total_errors), fmt_seconds(total_time)
            )
            self.console.print(table)
            return
        width = max(len("total"), *(len(s.name) for s in stats))
        self.line(f"{'tool':<{width}}  {'calls':>5}  {'errors':>6}  {'time in tool':>12}")
        for s in stats:
            self.line(
                f"{s.name:<{width}}  {s.calls:>5}  {s.errors:>6}  {fmt_seconds(s.total_s):>12}"
            )
        self.line(
            f"{'total':<{width}}  {len(calls):>5}  {total_errors:>6}  {fmt_seconds(total_time):>12}"
        )

    def result_summary(self, result: CodeResult) -> None:
        """Write the one-line status, the tool table and, on failure, the error."""
        failed = sum(1 for call in result.tool_calls if not call.ok)
        calls = f"{len(result.tool_calls)} tool call{'s' if len(result.tool_calls) != 1 else ''}"
        if failed:
            calls += f" ({failed} failed)"
        took = fmt_seconds(result.duration_s)
        if result.ok:
            plain = f"ok in {took}, {calls}"
            styled = f"[bold green]ok[/] in {took}, {calls}"
        else:
            kind = result.error_type or "Error"
            what = "timed out" if result.timed_out else f"failed ({kind})"
            plain = f"{what} after {took}, {calls}, return code {result.return_code}"
            styled = (
                f"[bold red]{escape(what)}[/] after {took}, {calls}, "
                f"return code {result.return_code}"
            )
        if result.truncated:
            plain += ", output truncated"
            styled += ", [yellow]output truncated[/]"
        self.line(f"--- {plain}", f"[dim]---[/] {styled}")
        if result.tool_calls:
            self.tool_table(result.tool_calls)
            failures = [call for call in result.tool_calls if not call.ok]
            for call in failures[:_MAX_LISTED_FAILURES]:
                self.line(
                    f"  {call.name} failed: {call.error}",
                    f"  [red]{escape(call.name)} failed:[/] {escape(str(call.error))}",
                )
            if len(failures) > _MAX_LISTED_FAILURES:
                self.line(f"  ... and {len(failures) - _MAX_LISTED_FAILURES} more failed calls")
        if not result.ok and result.error:
            self.line(result.error.rstrip("\n"), f"[red]{escape(result.error.rstrip())}[/]")

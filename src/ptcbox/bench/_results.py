"""Results of the token benchmark: one run per trajectory, one comparison per scenario."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["REFERENCE_POINTS", "Mode", "ScenarioComparison", "TokenReport", "TrajectoryRun"]

Mode = Literal["classic", "ptc"]

REFERENCE_POINTS: tuple[tuple[str, str], ...] = (
    (
        "Anthropic, programmatic tool calling on complex research tasks",
        "37% fewer tokens (43,588 -> 27,297 on average)",
    ),
    (
        "Anthropic, an MCP workflow moved into code execution",
        "150,000 -> 2,000 tokens (98.7% saved)",
    ),
)
"""Published numbers to print beside ours: ``(source, result)``."""


@dataclass(frozen=True, slots=True)
class TrajectoryRun:
    """One trajectory of one scenario, run through the agent loop.

    Attributes:
        scenario: The scenario's name.
        mode: ``"classic"`` (direct tool calls) or ``"ptc"`` (``run_code``).
        turns: Model requests made (assistant turns).
        tool_calls: Tool calls the model made (a ``run_code`` call counts once).
        code_tool_calls: Tool calls made from inside snippets.
        input_tokens: Sum over requests of the tokens each request sent (system prompt,
            tool definitions, history), ``o200k_base``.
        output_tokens: Tokens the model emitted (text and tool-call arguments).
        wall_time_s: Wall-clock time of the whole run, in seconds.
        correct: The final answer states the correct result (and, for PTC, the
            snippets' own output contains it).
        answer: The final answer text.
        tool_errors: Tool calls that came back as errors.
        api_input_tokens: With a real model: the API's own ``prompt_tokens`` sum.
        api_output_tokens: With a real model: the API's own ``completion_tokens`` sum.
        error: Why the run failed before an answer, else ``None``.
    """

    scenario: str
    mode: Mode
    turns: int
    tool_calls: int
    code_tool_calls: int
    input_tokens: int
    output_tokens: int
    wall_time_s: float
    correct: bool
    answer: str = ""
    tool_errors: int = 0
    api_input_tokens: int | None = None
    api_output_tokens: int | None = None
    error: str | None = None

    @property
    def total_tokens(self) -> int:
        """``input_tokens + output_tokens``."""
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        """Return the run as JSON-encodable data (``total_tokens`` included)."""
        return {
            "scenario": self.scenario,
            "mode": self.mode,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "code_tool_calls": self.code_tool_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "wall_time_s": round(self.wall_time_s, 4),
            "correct": self.correct,
            "tool_errors": self.tool_errors,
            "api_input_tokens": self.api_input_tokens,
            "api_output_tokens": self.api_output_tokens,
            "error": self.error,
            "answer": self.answer,
        }


def saving_percent(before: int, after: int) -> float:
    """Percent of ``before`` that ``after`` saves (negative when ``after`` is larger)."""
    return 0.0 if before == 0 else (before - after) / before * 100


@dataclass(frozen=True, slots=True)
class ScenarioComparison:
    """Classic and PTC runs of one scenario.

    Attributes:
        scenario: The scenario's name.
        title: Its one-line title.
        classic: The classic run.
        ptc: The PTC run.
    """

    scenario: str
    title: str
    classic: TrajectoryRun
    ptc: TrajectoryRun

    @property
    def saving_percent(self) -> float:
        """Total tokens PTC saves, in percent of classic's."""
        return saving_percent(self.classic.total_tokens, self.ptc.total_tokens)

    def to_dict(self) -> dict[str, Any]:
        """Return the comparison as JSON-encodable data."""
        return {
            "scenario": self.scenario,
            "title": self.title,
            "classic": self.classic.to_dict(),
            "ptc": self.ptc.to_dict(),
            "saving_percent": round(self.saving_percent, 1),
        }


@dataclass(frozen=True, slots=True)
class TokenReport:
    """The whole token benchmark.

    Attributes:
        model: ``"scripted"`` or the real model's name.
        runtime: The runtime that ran the snippets, e.g. ``"SubprocessRuntime"``.
        encoding: The tokenizer used to count (``"o200k_base"``).
        comparisons: One per scenario, in suite order.
        chart_path: Where the chart was written, if it was.
    """

    model: str
    runtime: str
    comparisons: tuple[ScenarioComparison, ...]
    encoding: str = "o200k_base"
    chart_path: str | None = field(default=None)

    def totals(self, mode: Mode) -> dict[str, int]:
        """Sum ``turns``, ``input_tokens``, ``output_tokens``, ``total_tokens`` of a mode."""
        runs = [getattr(c, mode) for c in self.comparisons]
        return {
            "turns": sum(r.turns for r in runs),
            "input_tokens": sum(r.input_tokens for r in runs),
            "output_tokens": sum(r.output_tokens for r in runs),
            "total_tokens": sum(r.total_tokens for r in runs),
            "correct": sum(r.correct for r in runs),
        }

    @property
    def saving_percent(self) -> float:
        """Total tokens PTC saves over the whole suite, in percent of classic's."""
        return saving_percent(
            self.totals("classic")["total_tokens"], self.totals("ptc")["total_tokens"]
        )

    @property
    def median_saving_percent(self) -> float:
        """Median over scenarios of the per-scenario saving, in percent."""
        return statistics.median(c.saving_percent for c in self.comparisons)

    @property
    def all_correct(self) -> bool:
        """``True`` when every run of every scenario answered correctly."""
        return all(c.classic.correct and c.ptc.correct for c in self.comparisons)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-encodable data."""
        return {
            "model": self.model,
            "runtime": self.runtime,
            "encoding": self.encoding,
            "scenarios": [c.to_dict() for c in self.comparisons],
            "totals": {"classic": self.totals("classic"), "ptc": self.totals("ptc")},
            "saving_percent": round(self.saving_percent, 1),
            "median_saving_percent": round(self.median_saving_percent, 1),
            "all_correct": self.all_correct,
            "reference_points": [
                {"source": source, "result": result} for source, result in REFERENCE_POINTS
            ],
            "chart_path": self.chart_path,
        }

"""Results of the token benchmark: one run per trajectory, one comparison per scenario."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Literal

from ptcbox.bench._pricing import SONNET

__all__ = [
    "MODES",
    "REFERENCE_POINTS",
    "Headline",
    "Mode",
    "ScenarioComparison",
    "TokenReport",
    "TrajectoryRun",
    "saving_percent",
]

Mode = Literal["classic", "ptc", "hybrid"]
"""A trajectory kind: direct tool calls, ``run_code`` only, or both offered."""

MODES: tuple[Mode, ...] = ("classic", "ptc", "hybrid")
"""The trajectory kinds, in table order."""

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
        mode: ``"classic"`` (direct tool calls), ``"ptc"`` (``run_code`` only) or
            ``"hybrid"`` (both offered).
        turns: Model requests made (assistant turns).
        tool_calls: Tool calls the model made (a ``run_code`` call counts once).
        code_tool_calls: Tool calls made from inside snippets.
        input_tokens: Sum over requests of the tokens each request sent (system prompt,
            tool definitions, history), ``o200k_base``.
        output_tokens: Tokens the model emitted (text and tool-call arguments).
        wall_time_s: Wall-clock time of the whole run, in seconds.
        correct: The answer passed every check of :func:`~ptcbox.bench.check_run`.
        answer: The final answer text.
        tool_errors: Tool calls that came back as errors.
        request_inputs: Input tokens of each request, in order.
        definition_tokens: Tokens of the tool definitions, sent with every request.
        problem: Why the answer was not counted correct, else ``None``.
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
    request_inputs: tuple[int, ...] = ()
    definition_tokens: int = 0
    problem: str | None = None
    api_input_tokens: int | None = None
    api_output_tokens: int | None = None
    error: str | None = None

    @property
    def total_tokens(self) -> int:
        """``input_tokens + output_tokens``."""
        return self.input_tokens + self.output_tokens

    @property
    def peak_context(self) -> int:
        """The largest single request, in input tokens (what must fit the context)."""
        return max(self.request_inputs, default=0)

    def cost(self, *, cached: bool) -> float:
        """The run's cost in USD at :data:`~ptcbox.bench.SONNET` prices.

        Args:
            cached: With prompt caching (cache reads 0.1x, writes 1.25x) or without.
        """
        return SONNET.cost(self.request_inputs, self.output_tokens, cached=cached)

    def to_dict(self) -> dict[str, Any]:
        """Return the run as JSON-encodable data (totals and costs included)."""
        return {
            "scenario": self.scenario,
            "mode": self.mode,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "code_tool_calls": self.code_tool_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "peak_context": self.peak_context,
            "definition_tokens": self.definition_tokens,
            "request_inputs": list(self.request_inputs),
            "cost_usd": round(self.cost(cached=False), 6),
            "cached_cost_usd": round(self.cost(cached=True), 6),
            "wall_time_s": round(self.wall_time_s, 4),
            "correct": self.correct,
            "problem": self.problem,
            "tool_errors": self.tool_errors,
            "api_input_tokens": self.api_input_tokens,
            "api_output_tokens": self.api_output_tokens,
            "error": self.error,
            "answer": self.answer,
        }


def saving_percent(before: float, after: float) -> float:
    """Percent of ``before`` that ``after`` saves (negative when ``after`` is larger)."""
    return 0.0 if before == 0 else (before - after) / before * 100


@dataclass(frozen=True, slots=True)
class ScenarioComparison:
    """The classic, PTC and hybrid runs of one scenario.

    Attributes:
        scenario: The scenario's name.
        title: Its one-line title.
        shape: What the task looks like (``"fan-out"``, ``"single lookup"``, ...).
        classic: The classic run.
        ptc: The PTC run.
        hybrid: The hybrid run.
    """

    scenario: str
    title: str
    shape: str
    classic: TrajectoryRun
    ptc: TrajectoryRun
    hybrid: TrajectoryRun

    def run(self, mode: Mode) -> TrajectoryRun:
        """The run of ``mode``."""
        return {"classic": self.classic, "ptc": self.ptc, "hybrid": self.hybrid}[mode]

    def saving(self, mode: Mode) -> float:
        """Total tokens ``mode`` saves, in percent of classic's."""
        return saving_percent(self.classic.total_tokens, self.run(mode).total_tokens)

    def cost_saving(self, mode: Mode, *, cached: bool) -> float:
        """Cost ``mode`` saves, in percent of classic's (with or without caching)."""
        return saving_percent(self.classic.cost(cached=cached), self.run(mode).cost(cached=cached))

    @property
    def saving_percent(self) -> float:
        """Total tokens PTC saves, in percent of classic's."""
        return self.saving("ptc")

    def to_dict(self) -> dict[str, Any]:
        """Return the comparison as JSON-encodable data."""
        data: dict[str, Any] = {"scenario": self.scenario, "title": self.title}
        data["shape"] = self.shape
        for mode in MODES:
            data[mode] = self.run(mode).to_dict()
        for mode in MODES[1:]:
            data[f"{mode}_saving_percent"] = round(self.saving(mode), 1)
            data[f"{mode}_cached_cost_saving_percent"] = round(
                self.cost_saving(mode, cached=True), 1
            )
        return data


_MORE = {"fewer tokens": "more tokens", "fewer": "more", "lower cost": "higher cost",
         "lower": "higher"}  # fmt: skip


def _less(saving: float, word: str) -> str:
    """``"74% fewer"`` for a saving of 74, ``"26% more"`` for -26 (rounded to 1%)."""
    rounded = round(saving)
    return f"{rounded}% {word}" if rounded >= 0 else f"{-rounded}% {_MORE[word]}"


@dataclass(frozen=True, slots=True)
class Headline:
    """The suite's result for one kind against classic.

    Attributes:
        mode: ``"ptc"`` or ``"hybrid"``.
        n: Scenarios.
        median: Median per-scenario token saving, in percent.
        low: Smallest per-scenario saving (negative: the kind cost more).
        high: Largest per-scenario saving.
        pooled: Saving over the summed tokens of the suite.
        largest: The scenario with the most classic tokens.
        pooled_without_largest: Pooled saving without ``largest``.
        cached_cost_median: Median per-scenario cost saving with prompt caching.
        cached_cost_low: Smallest per-scenario cost saving with caching.
        cached_cost_high: Largest per-scenario cost saving with caching.
    """

    mode: Mode
    n: int
    median: float
    low: float
    high: float
    pooled: float
    largest: str
    pooled_without_largest: float
    cached_cost_median: float
    cached_cost_low: float
    cached_cost_high: float

    def sentence(self) -> str:
        """One line: median with range and n, pooled with and without the largest."""
        label = {"ptc": "run_code (PTC)", "hybrid": "hybrid"}.get(self.mode, self.mode)
        return (
            f"{label}: median {_less(self.median, 'fewer tokens')} than classic (range "
            f"{_less(self.low, 'fewer')} to {_less(self.high, 'fewer')}, n={self.n} "
            f"scenarios); pooled {_less(self.pooled, 'fewer')}, "
            f"{_less(self.pooled_without_largest, 'fewer')} without {self.largest}; with "
            f"prompt caching, median {_less(self.cached_cost_median, 'lower cost')} (range "
            f"{_less(self.cached_cost_low, 'lower')} to {_less(self.cached_cost_high, 'lower')})"
        )


@dataclass(frozen=True, slots=True)
class TokenReport:
    """The whole token benchmark.

    Attributes:
        model: ``"scripted"`` or the real model's name.
        runtime: The runtime that ran the snippets, e.g. ``"SubprocessRuntime"``.
        comparisons: One per scenario, in suite order.
        encoding: The tokenizer used to count (``"o200k_base"``).
        strict: Every PTC run explored the data first (``--strict``).
        chart_path: Where the chart was written, if it was.
    """

    model: str
    runtime: str
    comparisons: tuple[ScenarioComparison, ...]
    encoding: str = "o200k_base"
    strict: bool = False
    chart_path: str | None = field(default=None)

    def totals(self, mode: Mode) -> dict[str, Any]:
        """Sums of a mode: turns, tokens (in, out, total), costs, correct runs."""
        runs = [c.run(mode) for c in self.comparisons]
        return {
            "turns": sum(r.turns for r in runs),
            "input_tokens": sum(r.input_tokens for r in runs),
            "output_tokens": sum(r.output_tokens for r in runs),
            "total_tokens": sum(r.total_tokens for r in runs),
            "cost_usd": round(sum(r.cost(cached=False) for r in runs), 6),
            "cached_cost_usd": round(sum(r.cost(cached=True) for r in runs), 6),
            "correct": sum(r.correct for r in runs),
        }

    def _pooled(self, mode: Mode, skip: str | None = None) -> float:
        kept = [c for c in self.comparisons if c.scenario != skip]
        before = sum(c.classic.total_tokens for c in kept)
        return saving_percent(before, sum(c.run(mode).total_tokens for c in kept))

    def headline(self, mode: Mode = "ptc") -> Headline:
        """The headline numbers of ``mode`` (``"ptc"`` or ``"hybrid"``) against classic.

        Raises:
            ValueError: If the report has no scenarios.
        """
        if not self.comparisons:
            raise ValueError("the report has no scenarios")
        savings = [c.saving(mode) for c in self.comparisons]
        costs = [c.cost_saving(mode, cached=True) for c in self.comparisons]
        largest = max(self.comparisons, key=lambda c: c.classic.total_tokens).scenario
        return Headline(
            mode=mode,
            n=len(savings),
            median=statistics.median(savings),
            low=min(savings),
            high=max(savings),
            pooled=self._pooled(mode),
            largest=largest,
            pooled_without_largest=self._pooled(mode, skip=largest)
            if len(self.comparisons) > 1
            else self._pooled(mode),
            cached_cost_median=statistics.median(costs),
            cached_cost_low=min(costs),
            cached_cost_high=max(costs),
        )

    @property
    def saving_percent(self) -> float:
        """PTC's pooled token saving over the whole suite, in percent of classic's."""
        return self._pooled("ptc")

    @property
    def median_saving_percent(self) -> float:
        """Median over scenarios of PTC's per-scenario token saving, in percent."""
        return statistics.median(c.saving("ptc") for c in self.comparisons)

    @property
    def all_correct(self) -> bool:
        """``True`` when every run of every scenario answered correctly."""
        return all(c.run(mode).correct for c in self.comparisons for mode in MODES)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-encodable data."""
        headlines = {}
        if self.comparisons:
            for mode in MODES[1:]:
                h = self.headline(mode)
                headlines[mode] = {
                    key: round(value, 1) if isinstance(value, float) else value
                    for key, value in (
                        (name, getattr(h, name)) for name in Headline.__dataclass_fields__
                    )
                }
                headlines[mode]["sentence"] = h.sentence()
        return {
            "model": self.model,
            "runtime": self.runtime,
            "encoding": self.encoding,
            "strict": self.strict,
            "pricing": {
                "model": SONNET.name,
                "input_per_mtok": SONNET.input_per_mtok,
                "output_per_mtok": SONNET.output_per_mtok,
                "cache_write": SONNET.cache_write,
                "cache_read": SONNET.cache_read,
                "min_cacheable": SONNET.min_cacheable,
                "source": SONNET.source,
            },
            "scenarios": [c.to_dict() for c in self.comparisons],
            "totals": {mode: self.totals(mode) for mode in MODES},
            "headline": headlines,
            "all_correct": self.all_correct,
            "reference_points": [
                {"source": source, "result": result} for source, result in REFERENCE_POINTS
            ],
            "chart_path": self.chart_path,
        }

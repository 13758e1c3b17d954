"""Latency of ptcbox's runtimes against plain ``exec`` in the same process.

Three snippets (issue 2): ``print(1)``; 100 sequential tool calls; a 200k-iteration
pure-Python loop. Each runner executes each snippet after a warmup, ``N`` times, and the
table shows medians, p90s, ratios against plain ``exec`` measured in the same run, the
tool-call overhead per call in microseconds, and the targets each runner must meet.

Run::

    .venv/bin/ptcbox bench latency            # or: .venv/bin/python benchmarks/latency.py
    .venv/bin/ptcbox bench latency --json     # machine-readable
    .venv/bin/ptcbox bench latency --quick    # few repetitions (smoke test)

Runners are objects in :data:`RUNNERS` (factories); a runner that cannot run here is
reported as ``skipped: <reason>``, never dropped. Add a runtime by appending a factory.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["CASES", "RUNNERS", "Case", "Runner", "Target", "main", "run_benchmark"]


@dataclass(frozen=True, slots=True)
class Case:
    """One snippet to time. ``repeat`` and ``warmup`` are the default counts."""

    name: str
    label: str
    code: str
    repeat: int
    warmup: int


CASES: list[Case] = [
    Case("trivial", "print(1)", "print(1)\n", repeat=300, warmup=30),
    Case("tools100", "100 tool calls", "for i in range(100):\n    ping(i=i)\n", 100, 10),
    Case(
        "loop200k",
        "200k-iteration loop",
        "total = 0\nfor i in range(200_000):\n    total += i % 7\n",
        repeat=15,
        warmup=2,
    ),
]
"""The snippets, in table order."""

TOOL_CALLS = 100
ROUNDS = 5
"""Each case's repetitions are split into this many interleaved rounds."""


def ping(i: int) -> int:
    """The benchmark's tool: returns its argument."""
    return i


@dataclass(frozen=True, slots=True)
class Target:
    """A speed target: ``metric <= limit`` (metric names: see :func:`metrics`)."""

    metric: str
    limit: float
    label: str


class Runner:
    """Times snippets one way. Subclasses implement :meth:`time_case`.

    Attributes:
        name: Row label.
        targets: Targets this runner is held to.
        skipped: Why the runner cannot run here, or ``None``.
    """

    def __init__(self, name: str, targets: tuple[Target, ...] = ()) -> None:
        self.name = name
        self.targets = targets
        self.skipped: str | None = None

    def open(self) -> None:
        """Prepare (create runtimes ...). Set :attr:`skipped` instead of raising."""

    def close(self) -> None:
        """Release everything :meth:`open` created."""

    def time_case(self, case: Case, warmup: int, repeat: int) -> list[float]:
        """Return ``repeat`` wall-clock durations in seconds, after ``warmup`` runs."""
        raise NotImplementedError


class ExecRunner(Runner):
    """The baseline: ``exec`` of the precompiled snippet, stdout to a ``StringIO``."""

    def __init__(self) -> None:
        super().__init__("plain exec (baseline)")

    def time_case(self, case: Case, warmup: int, repeat: int) -> list[float]:
        code = compile(case.code, "<snippet>", "exec")
        times: list[float] = []
        for index in range(warmup + repeat):
            sink = io.StringIO()
            started = time.perf_counter()
            with contextlib.redirect_stdout(sink):
                exec(code, {"ping": ping, "__name__": "__main__"})
            elapsed = time.perf_counter() - started
            if index >= warmup:
                times.append(elapsed)
        return times


class RuntimeRunner(Runner):
    """Times ``await runtime.execute(...)`` on one event loop that lives for the run.

    Args:
        name: Row label.
        factory: Creates the runtime; an ``ImportError`` or ``RuntimeError`` here marks
            the runner skipped with the reason.
        targets: Targets for this runner.
        pace_s: Untimed pause before each execution, in seconds (lets a pool of warm
            single-use workers refill, to time the warm path rather than the refill).
    """

    def __init__(
        self,
        name: str,
        factory: Callable[[], Any],
        targets: tuple[Target, ...] = (),
        *,
        pace_s: float = 0.0,
    ) -> None:
        super().__init__(name, targets)
        self._factory = factory
        self._pace_s = pace_s
        self._loop: asyncio.Runner | None = None
        self._runtime: Any = None

    def open(self) -> None:
        try:
            runtime = self._factory()
        except (ImportError, RuntimeError, OSError) as exc:
            self.skipped = f"{type(exc).__name__}: {str(exc).split(' (')[0]}"
            return
        self._loop = asyncio.Runner()
        self._runtime = runtime
        start = getattr(runtime, "start", None)
        if start is not None:  # warm start (SubprocessRuntime's worker pool)
            self._loop.run(start())

    def close(self) -> None:
        if self._loop is None:
            return
        aclose = getattr(self._runtime, "aclose", None)
        if aclose is not None:
            self._loop.run(aclose())
        self._loop.close()
        self._loop = None

    def time_case(self, case: Case, warmup: int, repeat: int) -> list[float]:
        assert self._loop is not None
        return self._loop.run(self._time(case, warmup, repeat))

    async def _time(self, case: Case, warmup: int, repeat: int) -> list[float]:
        from ptcbox import DirectProjection

        namespace = {"ping": DirectProjection(name="ping", fn=ping)}
        execute = self._runtime.execute
        times: list[float] = []
        for index in range(warmup + repeat):
            if self._pace_s:
                await asyncio.sleep(self._pace_s)
            started = time.perf_counter()
            result = await execute(case.code, namespace)
            elapsed = time.perf_counter() - started
            if not result.ok:
                raise RuntimeError(f"{self.name} failed on {case.name}: {result.error}")
            if index >= warmup:
                times.append(elapsed)
        return times


class FacadeRunner(Runner):
    """Times the sync facade ``ptcbox.execute(code, tools=[ping])`` (shared default)."""

    def __init__(self) -> None:
        super().__init__("ptcbox.execute() facade")

    def time_case(self, case: Case, warmup: int, repeat: int) -> list[float]:
        from ptcbox import execute

        times: list[float] = []
        for index in range(warmup + repeat):
            started = time.perf_counter()
            result = execute(case.code, tools=[ping])
            elapsed = time.perf_counter() - started
            if not result.ok:
                raise RuntimeError(f"{self.name} failed on {case.name}: {result.error}")
            if index >= warmup:
                times.append(elapsed)
        return times


def _thread_runtime(trusted: bool) -> Callable[[], Any]:
    def make() -> Any:
        from ptcbox.runtimes import ThreadRuntime
        from ptcbox.sandbox import SandboxPolicy

        return ThreadRuntime(SandboxPolicy.trusted() if trusted else SandboxPolicy())

    return make


def _subprocess_runtime() -> Any:
    from ptcbox.runtimes import SubprocessRuntime

    return SubprocessRuntime()


THREAD_TARGETS = (
    Target("trivial_ms", 0.2, "print(1) <= 0.2 ms"),
    Target("overhead_us_per_call", 5.0, "tool call <= 5 µs"),
    Target("loop_ratio", 1.5, "loop <= 1.5x exec"),
)
TRUSTED_TARGETS = (Target("loop_ratio", 1.1, "loop <= 1.1x exec"),)
SUBPROCESS_TARGETS = (
    Target("trivial_ms", 1.0, "print(1) <= 1 ms"),
    Target("overhead_us_per_call", 50.0, "tool call <= 50 µs"),
    Target("loop_ratio", 1.2, "loop <= 1.2x exec"),
)

RUNNERS: list[Callable[[], Runner]] = [
    ExecRunner,
    lambda: RuntimeRunner("ThreadRuntime, default policy", _thread_runtime(False), THREAD_TARGETS),
    lambda: RuntimeRunner("ThreadRuntime, trusted policy", _thread_runtime(True), TRUSTED_TARGETS),
    lambda: RuntimeRunner(
        "SubprocessRuntime, warm pool", _subprocess_runtime, SUBPROCESS_TARGETS, pace_s=0.02
    ),
    lambda: RuntimeRunner("SubprocessRuntime, back-to-back", _subprocess_runtime),
    FacadeRunner,
]
"""Factories of the table's rows, in order; the first is the baseline."""


@dataclass(slots=True)
class RunnerResult:
    """Timings and derived metrics of one runner."""

    name: str
    skipped: str | None = None
    error: str | None = None
    times: dict[str, list[float]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    targets: list[dict[str, Any]] = field(default_factory=list)


def _median(times: list[float]) -> float:
    return statistics.median(times)


def _p90(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def metrics(
    times: Mapping[str, list[float]], baseline: Mapping[str, list[float]]
) -> dict[str, float]:
    """Derive the metrics targets refer to.

    ``trivial_ms``: median of ``print(1)`` in ms; ``per_call_us``: (median of 100 tool
    calls - median of ``print(1)``) / 100 in µs; ``overhead_us_per_call``: that minus the
    same for plain exec (what the runtime adds to a direct function call);
    ``loop_ratio`` and ``trivial_ratio``: median over the baseline's median.
    """

    def per_call(t: Mapping[str, list[float]]) -> float:
        return (_median(t["tools100"]) - _median(t["trivial"])) / TOOL_CALLS * 1e6

    out = {
        "trivial_ms": _median(times["trivial"]) * 1e3,
        "trivial_ratio": _median(times["trivial"]) / _median(baseline["trivial"]),
        "per_call_us": per_call(times),
        "overhead_us_per_call": per_call(times) - per_call(baseline),
        "loop_ratio": _median(times["loop200k"]) / _median(baseline["loop200k"]),
    }
    return out


def run_benchmark(
    runners: list[Runner],
    *,
    scale: float = 1.0,
    progress: Callable[[str], None] | None = None,
    verify: Callable[[Runner], str | None] | None = None,
) -> list[RunnerResult]:
    """Time every case with every runner; the first runner is the baseline.

    Runners take turns: each case's repetitions are split into :data:`ROUNDS` rounds,
    and in every round each runner times its share, so a change of machine load (other
    processes) hits the baseline and the runtimes alike and the ratios stay fair.

    Args:
        runners: Rows; ``runners[0]`` is the baseline and must not be skipped.
        scale: Multiplies each case's repetitions and warmups (at least 3 and 1).
        progress: Called with a short note before each case.
        verify: Called once with each opened runner before any timing; a string it
            returns (a wrong answer) becomes the runner's error and it is not timed.

    Returns:
        One result per runner, in order, with metrics and target verdicts.
    """
    results = [RunnerResult(runner.name) for runner in runners]
    for runner, result in zip(runners, results, strict=True):
        runner.open()
        result.skipped = runner.skipped
        if verify is not None and not result.skipped:
            try:
                result.error = verify(runner)
            except Exception as exc:
                result.error = f"{type(exc).__name__}: {exc}"
    try:
        for case in CASES:
            if progress:
                progress(case.label)
            repeat = max(3, round(case.repeat * scale))
            warmup = max(1, round(case.warmup * scale))
            rounds = min(ROUNDS, repeat)
            for index in range(rounds):
                share = repeat // rounds + (1 if index < repeat % rounds else 0)
                for runner, result in zip(runners, results, strict=True):
                    if result.skipped or result.error:
                        continue
                    try:
                        times = runner.time_case(case, warmup if index == 0 else 1, share)
                    except Exception as exc:
                        result.error = f"{type(exc).__name__}: {exc}"
                        continue
                    result.times.setdefault(case.name, []).extend(times)
    finally:
        for runner in runners:
            runner.close()
    baseline = results[0].times
    for runner, result in zip(runners, results, strict=True):
        if result.skipped or result.error:
            continue
        result.metrics = metrics(result.times, baseline)
        for target in runner.targets:
            value = result.metrics[target.metric]
            result.targets.append(
                {"label": target.label, "metric": target.metric, "limit": target.limit,
                 "value": value, "ok": value <= target.limit}
            )  # fmt: skip
    return results


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}" if seconds < 0.01 else f"{seconds * 1e3:.1f}"


def _cell(times: list[float]) -> str:
    return f"{_ms(_median(times))} ({_ms(_p90(times))})"


def render_table(results: list[RunnerResult], console: Console) -> None:
    """Print the results as a table (rich on a terminal, plain boxes otherwise)."""
    table = Table(title="ptcbox latency: median (p90) in ms; ratios vs plain exec")
    for column in ("runner", "print(1)", "x exec", "100 tool calls", "µs/call added",
                   "200k loop", "x exec", "targets"):  # fmt: skip
        table.add_column(column, justify="left" if column in {"runner", "targets"} else "right")
    for result in results:
        if result.skipped or result.error:
            note = f"skipped: {result.skipped}" if result.skipped else f"error: {result.error}"
            table.add_row(result.name, note, *[""] * 6)
            continue
        m, t = result.metrics, result.times
        verdicts = "; ".join(
            f"{'ok' if v['ok'] else 'MISSED'} {v['label']}" for v in result.targets
        )
        table.add_row(
            result.name,
            _cell(t["trivial"]),
            f"{m['trivial_ratio']:.1f}",
            _cell(t["tools100"]),
            f"{m['overhead_us_per_call']:.2f}",
            _cell(t["loop200k"]),
            f"{m['loop_ratio']:.2f}",
            verdicts,
        )
    console.print(table)
    console.print(
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs. Baseline: exec of the precompiled snippet in this process. "
        "'µs/call added' = per-call cost minus plain exec's (a direct function call)."
    )


def render_markdown(results: list[RunnerResult]) -> str:
    """The README's latency table as Markdown: medians (p90) in ms, ratios vs plain exec,
    and the machine it was measured on (load average included: a loaded machine is slow)."""
    lines = [
        "| runner | `print(1)` | 100 tool calls | µs added per call | 200k-iteration loop |",
        "|---|---|---|---|---|",
    ]
    for result in results:
        if result.skipped or result.error:
            note = f"{'skipped' if result.skipped else 'error'}: {result.skipped or result.error}"
            lines.append(f"| {result.name} | {note.replace('|', '/')} | | | |")
            continue
        m, t = result.metrics, result.times
        lines.append(
            f"| {result.name} | {_cell(t['trivial'])} | {_ms(_median(t['tools100']))} | "
            f"{m['overhead_us_per_call']:.1f} | {_ms(_median(t['loop200k']))} "
            f"({m['loop_ratio']:.2f}x) |"
        )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines += [
        "",
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {load} when it finished. Written by "
        "`ptcbox bench latency --markdown benchmarks/results/latency.md`.",
    ]
    return "\n".join(lines) + "\n"


def to_json(results: list[RunnerResult]) -> dict[str, Any]:
    """The results as JSON-compatible data (times in seconds)."""
    return {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "cases": {case.name: case.code for case in CASES},
        "runners": [
            {
                "name": r.name,
                "skipped": r.skipped,
                "error": r.error,
                "median_s": {k: _median(v) for k, v in r.times.items()},
                "p90_s": {k: _p90(v) for k, v in r.times.items()},
                "n": {k: len(v) for k, v in r.times.items()},
                "metrics": r.metrics,
                "targets": r.targets,
            }
            for r in results
        ],
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (also ``ptcbox bench latency``).

    Returns:
        ``0`` when every runner that ran finished without error, else ``1``. Missed
        targets are reported in the table, not in the exit code.
    """
    parser = argparse.ArgumentParser(
        prog="ptcbox bench latency", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke test)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply repetitions")
    parser.add_argument(
        "--runner",
        action="append",
        default=[],
        metavar="TEXT",
        help="only runners whose name contains TEXT (the baseline always runs)",
    )
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    args = parser.parse_args(argv)
    runners = [make() for make in RUNNERS]
    if args.runner:
        runners = runners[:1] + [
            r for r in runners[1:] if any(text.lower() in r.name.lower() for text in args.runner)
        ]
    console = Console(stderr=True)
    progress = None if args.json else (lambda what: console.print(f"[dim]timing {what} ...[/]"))
    results = run_benchmark(runners, scale=0.05 if args.quick else args.scale, progress=progress)
    if args.markdown:
        Path(args.markdown).write_text(render_markdown(results), encoding="utf-8")
    if args.json:
        print(json.dumps(to_json(results), indent=2))
    else:
        render_table(results, Console(highlight=False, width=max(140, Console().width)))
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

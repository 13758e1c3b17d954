"""Speed of ptcbox's runtimes against peer code executors, in one process.

The same three snippets as ``benchmarks/latency.py`` (``print(1)``; 100 sequential tool
calls; a 200k-iteration pure-Python loop), timed through:

* plain ``exec`` (the floor; no isolation at all),
* ptcbox ``ThreadRuntime`` (default policy) and ``SubprocessRuntime`` (default),
* smolagents ``LocalPythonExecutor`` (an AST interpreter in the host process),
* pydantic-monty's worker pool (``Monty``: a Rust interpreter in worker processes),
* toolregistry's PTC backend (``registry.ptc`` over codecell ``IpcSubprocessRuntime``:
  a fresh Python process per execution, tools over JSON pipes).

The table shows medians (p90) in milliseconds and, for each, the ratio to ptcbox's
``SubprocessRuntime`` (below 1 = faster than ptcbox's subprocess runtime). A peer that is
not installed or fails is reported as ``skipped: <reason>`` or ``error: <reason>``, never
dropped.

Run::

    pip install -e '.[bench]'          # matplotlib + the peers
    python benchmarks/peers.py         # or: ptcbox bench peers
    python benchmarks/peers.py --json  # machine-readable
    python benchmarks/peers.py --quick # few repetitions (smoke test)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import latency  # noqa: E402 - benchmarks/latency.py: the snippets, the timing loop
from latency import CASES, Case, ExecRunner, Runner, RunnerResult, RuntimeRunner, ping  # noqa: E402

__all__ = [
    "PEERS",
    "MontyRunner",
    "SmolagentsRunner",
    "ToolregistryRunner",
    "main",
    "render_table",
    "run_peers",
    "to_json",
]

REFERENCE = "ptcbox SubprocessRuntime"
"""The row every ratio is taken against."""


def _missing(package: str, exc: ImportError) -> str:
    return f"{package} is not installed ({exc.name or exc}); pip install {package}"


class SmolagentsRunner(Runner):
    """smolagents ``LocalPythonExecutor``: one executor, tools sent once, state kept.

    This is how smolagents' ``CodeAgent`` runs code locally: an AST-walking interpreter
    in the host process with an import allow-list.
    """

    isolation = "in-process AST interpreter"

    def __init__(self) -> None:
        super().__init__("smolagents LocalPythonExecutor")
        self._executor: Any = None

    def open(self) -> None:
        try:
            from smolagents.local_python_executor import LocalPythonExecutor
        except ImportError as exc:
            self.skipped = _missing("smolagents", exc)
            return
        self._executor = LocalPythonExecutor(additional_authorized_imports=[])
        self._executor.send_tools({"ping": ping})

    def run(self, case: Case) -> str:
        output = self._executor(case.code)
        return str(output.logs)

    def time_case(self, case: Case, warmup: int, repeat: int) -> list[float]:
        return _time(self.run, case, warmup, repeat)


class MontyRunner(Runner):
    """pydantic-monty: a warm ``Monty`` worker pool; one checked-out session per run.

    Each execution checks a session out of the pool (``pool.checkout()``), runs the
    snippet with ``feed_run`` (the tool reached through ``external_lookup``, output
    collected with ``CollectString``) and returns the worker, as an agent would per
    code call.
    """

    isolation = "Rust interpreter in worker processes"

    def __init__(self) -> None:
        super().__init__("pydantic-monty worker pool")
        self._pool: Any = None
        self._monty: Any = None

    def open(self) -> None:
        try:
            import pydantic_monty
        except ImportError as exc:
            self.skipped = _missing("pydantic-monty", exc)
            return
        self._monty = pydantic_monty
        try:
            self._pool = pydantic_monty.Monty(min_processes=1)
            self._pool.__enter__()
        except Exception as exc:
            self._pool = None
            self.skipped = f"the monty worker binary did not start: {type(exc).__name__}: {exc}"

    def close(self) -> None:
        if self._pool is not None:
            self._pool.__exit__(None, None, None)
            self._pool = None

    def run(self, case: Case) -> str:
        collector = self._monty.CollectString()
        with self._pool.checkout() as session:
            session.feed_run(case.code, external_lookup={"ping": ping}, print_callback=collector)
        return str(collector.output)

    def time_case(self, case: Case, warmup: int, repeat: int) -> list[float]:
        return _time(self.run, case, warmup, repeat)


class ToolregistryRunner(Runner):
    """toolregistry's PTC backend: ``registry.ptc.enable()``, then the model's call.

    Each execution is ``registry.invoke("programmatic_tool_call", {"code": ...})``, the
    path a model's tool call takes; codecell's ``IpcSubprocessRuntime`` starts a fresh
    Python process per execution and serves tool calls over JSON pipes.
    """

    isolation = "fresh subprocess per run (codecell)"

    def __init__(self) -> None:
        super().__init__("toolregistry PTC (codecell)")
        self._registry: Any = None

    def open(self) -> None:
        try:
            import codecell  # noqa: F401 - toolregistry's PTC needs it
            from toolregistry import ToolRegistry
        except ImportError as exc:
            self.skipped = _missing("toolregistry codecell", exc)
            return
        self._registry = ToolRegistry()
        self._registry.register(ping)
        self._registry.ptc.enable(timeout=60)

    def close(self) -> None:
        if self._registry is not None:
            self._registry.ptc.disable()
            self._registry = None

    def run(self, case: Case) -> str:
        result = self._registry.invoke("programmatic_tool_call", {"code": case.code})
        value = getattr(result, "result", None)
        if value is None or (isinstance(value, str) and value.startswith("Error")):
            raise RuntimeError(f"toolregistry PTC failed: {result!r}")
        return str(value)

    def time_case(self, case: Case, warmup: int, repeat: int) -> list[float]:
        return _time(self.run, case, warmup, repeat)


def _time(run: Callable[[Case], str], case: Case, warmup: int, repeat: int) -> list[float]:
    import time

    times: list[float] = []
    for index in range(warmup + repeat):
        started = time.perf_counter()
        run(case)
        elapsed = time.perf_counter() - started
        if index >= warmup:
            times.append(elapsed)
    return times


class _PlainExec(ExecRunner):
    isolation = "none (same interpreter, same globals)"

    def __init__(self) -> None:
        super().__init__()
        self.name = "plain exec"


def _ptcbox(name: str, factory: Callable[[], Any], isolation: str) -> Runner:
    runner = RuntimeRunner(name, factory)
    runner.isolation = isolation  # type: ignore[attr-defined]
    return runner


PEERS: list[Callable[[], Runner]] = [
    _PlainExec,
    lambda: _ptcbox(
        "ptcbox ThreadRuntime",
        latency._thread_runtime(False),
        "RestrictedPython, worker thread",
    ),
    lambda: _ptcbox(
        REFERENCE,
        latency._subprocess_runtime,
        "RestrictedPython, pre-forked worker process",
    ),
    SmolagentsRunner,
    MontyRunner,
    ToolregistryRunner,
]
"""Row factories, in table order; the first (plain exec) is the timing baseline."""


def run_peers(
    runners: list[Runner], *, scale: float = 1.0, progress: Callable[[str], None] | None = None
) -> list[RunnerResult]:
    """Time every snippet with every runner (``latency.run_benchmark``'s loop).

    Args:
        runners: Rows; ``runners[0]`` is plain exec.
        scale: Multiplies repetitions and warmups.
        progress: Called with each runner's name before it runs.

    Returns:
        One result per runner, in order; skipped and failed runners carry the reason.
    """
    return latency.run_benchmark(runners, scale=scale, progress=progress, verify=verify_answer)


CHECK = Case(
    "check", "check", "total = 0\nfor i in range(10):\n    total += ping(i=i)\nprint(total)\n", 1, 0
)
"""The snippet every peer with a ``run`` method must answer (``45``) before it is timed:
a fast peer that computes the wrong thing is an error row, not a result."""


def verify_answer(runner: Runner) -> str | None:
    """``None`` when ``runner`` answers :data:`CHECK` correctly (or has no ``run``), else
    the error for its row."""
    run = getattr(runner, "run", None)
    if run is None:
        return None
    output = str(run(CHECK)).strip()
    return (
        None
        if output == "45"
        else f"wrong answer to the tool snippet: {output[:80]!r} (expected '45')"
    )


def _median(times: list[float]) -> float:
    return latency._median(times)


def ratios(results: list[RunnerResult]) -> dict[str, dict[str, float]]:
    """Each runner's median over ptcbox ``SubprocessRuntime``'s median, per snippet.

    Returns:
        ``{runner name: {case name: ratio}}``; empty when the reference did not run.
    """
    reference = next((r for r in results if r.name == REFERENCE and r.times), None)
    if reference is None:
        return {}
    return {
        r.name: {
            case: _median(times) / _median(reference.times[case]) for case, times in r.times.items()
        }
        for r in results
        if r.times
    }


def render_table(results: list[RunnerResult], runners: list[Runner], console: Console) -> None:
    """Print medians (p90) in ms and ratios to ptcbox's subprocess runtime."""
    table = Table(
        title="ptcbox vs peers: median (p90) in ms; ratio = median / ptcbox SubprocessRuntime's",
        title_justify="left",
    )
    table.add_column("executor")
    table.add_column("isolation")
    for case in CASES:
        table.add_column(case.label, justify="right")
        table.add_column("ratio", justify="right")
    by_ratio = ratios(results)
    notes: list[str] = []
    for runner, result in zip(runners, results, strict=True):
        isolation = getattr(runner, "isolation", "")
        if result.skipped or result.error:
            kind = "skipped" if result.skipped else "error"
            notes.append(f"{result.name}: {kind}: {result.skipped or result.error}")
            table.add_row(
                result.name, isolation, f"{kind} (see below)", *[""] * (2 * len(CASES) - 1)
            )
            continue
        cells: list[str] = []
        for case in CASES:
            times = result.times.get(case.name)
            if not times:
                cells.extend(["-", "-"])
                continue
            cells.append(latency._cell(times))
            ratio = by_ratio.get(result.name, {}).get(case.name)
            cells.append("n/a" if ratio is None else f"{ratio:.2f}")
        table.add_row(result.name, isolation, *cells)
    console.print(table)
    for note in notes:
        console.print(note)
    console.print(
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs; every executor ran in this process, taking turns in rounds "
        "(latency.run_benchmark), so a change of machine load hits all of them alike."
    )


def render_markdown(results: list[RunnerResult], runners: list[Runner]) -> str:
    """The table as Markdown (for the README): medians in ms, ratios, skip reasons."""
    header = "| executor | isolation | " + " | ".join(
        f"{case.label} (ms) | ratio" for case in CASES
    )
    lines = [header + " |", "|---|---|" + "---:|---:|" * len(CASES)]
    by_ratio = ratios(results)
    for runner, result in zip(runners, results, strict=True):
        isolation = getattr(runner, "isolation", "")
        if result.skipped or result.error:
            kind = "skipped" if result.skipped else "error"
            note = f"{kind}: {result.skipped or result.error}".replace("|", "/")
            lines.append(f"| {result.name} | {isolation} | {note} |" + " |" * (2 * len(CASES) - 1))
            continue
        cells = []
        for case in CASES:
            times = result.times.get(case.name)
            ratio = by_ratio.get(result.name, {}).get(case.name)
            cells.append("-" if not times else latency._ms(_median(times)))
            cells.append("n/a" if ratio is None else f"{ratio:.2f}")
        lines.append(f"| {result.name} | {isolation} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_json(results: list[RunnerResult]) -> dict[str, Any]:
    """The results as JSON data: ``latency.to_json``'s shape plus ``ratio_to_reference``."""
    data = latency.to_json(results)
    data["reference"] = REFERENCE
    by_ratio = ratios(results)
    for runner in data["runners"]:
        runner["ratio_to_reference"] = by_ratio.get(runner["name"], {})
    return data


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (also ``ptcbox bench peers``).

    Returns:
        ``0`` when ptcbox's own runtimes ran without error (peers that were skipped or
        failed are reported in the table), else ``1``.
    """
    parser = argparse.ArgumentParser(prog="ptcbox bench peers", description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke test)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply repetitions")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    args = parser.parse_args(argv)
    runners = [make() for make in PEERS]
    console = Console(stderr=True)
    progress = None if args.json else (lambda name: console.print(f"[dim]timing {name} ...[/]"))
    results = run_peers(runners, scale=0.05 if args.quick else args.scale, progress=progress)
    if args.markdown:
        Path(args.markdown).write_text(render_markdown(results, runners), encoding="utf-8")
    if args.json:
        print(json.dumps(to_json(results), indent=2))
    else:
        render_table(results, runners, Console(highlight=False, width=160, file=sys.stdout))
    ours = [r for r in results if r.name.startswith("ptcbox")]
    return 1 if any(r.error for r in ours) else 0


if __name__ == "__main__":
    sys.exit(main())

"""Throughput and realistic single-execution latency of every runtime (issue 16).

Two tables, every engine measured in the same process, taking turns in rounds, so a
change of machine load hits all of them alike (quote the ratios, not the absolutes):

* **Sustained throughput** (executions/s after a warm-up) of ``print(1)`` and of a
  10-tool-call snippet, with 1 and with 8 executions in flight, for every entry of
  :data:`ENGINES` that runs throughput, plus the **fork reference**: ``fork()`` +
  ``_exit`` + reap, serially, of a process of the worker template's size (the same
  imports and warm-up, heap frozen), measured in a helper process. Sources repeat here
  (one text per cell), as an evaluation harness's retries do.
* **Single-execution latency**, paced 20 ms (pool refilled, caches cold, as between an
  agent's calls): a 13-line snippet with 9 tool calls of the kind the demo runs, and
  ``print(1)``, each with a NEW source every time (literals in most statements change,
  so no whole-source or per-statement cache helps), and ``print(1)`` repeated.

Every row says whether its sources repeat. Ratios are taken against
:data:`REFERENCE` (pydantic-monty's pool, the peer the issue's targets name), or the
first SubprocessRuntime row when monty is not installed.

Add a runtime by appending one :class:`Entry` to :data:`ENGINES` (a factory of an
object with ``async start()``, ``async execute(code, namespace)`` and
``async aclose()``, as every ptcbox runtime has).

Run::

    ptcbox bench throughput                       # about two minutes
    ptcbox bench throughput --quick               # smoke test (seconds)
    ptcbox bench throughput --markdown benchmarks/results/throughput.md
    ptcbox bench throughput --json
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ENGINES", "Entry", "Settings", "main", "render_markdown", "run_throughput"]

TRIVIAL = "print(1)\n"
TOOLS10 = "for i in range(10):\n    ping(i=i)\n"
REALISTIC = """\
ids = ["c{n}", "c{n1}", "c{n2}"]
totals = {{}}
open_counts = {{}}
for cid in ids:
    info = get_customer(customer_id=cid)
    orders = list_orders(customer_id=cid, limit={n} % 7 + 3)
    rate = get_rate(currency=info["currency"])
    totals[info["name"]] = round(sum(o["amount"] for o in orders) * rate, 2)
    open_counts[info["name"]] = len([o for o in orders if o["status"] == "open"])
best = max(totals, key=lambda name: totals[name])
flagged = sorted(name for name, total in totals.items() if total > {n} % 50)
print(f"best {{best}}: {{totals[best]}} ({n})")
{{"best": best, "flagged": flagged, "open": sum(open_counts.values()), "run": {n}}}
"""
"""13 lines, 9 tool calls; ``{n}`` makes every execution's source new."""

REFERENCE = "pydantic-monty pool"


def ping(i: int) -> int:
    """Return ``i`` (the throughput snippet's tool)."""
    return i


def get_customer(customer_id: str) -> dict[str, str]:
    """Return the customer's name, currency and tier."""
    return {"name": "N" + customer_id, "currency": "EUR", "tier": "gold"}


def list_orders(customer_id: str, limit: int = 5) -> list[dict[str, Any]]:
    """Return the customer's latest orders (amount, status)."""
    return [{"amount": 10.5 + i, "status": "open"} for i in range(3)]


def get_rate(currency: str) -> float:
    """Return the exchange rate of ``currency`` to USD."""
    return 1.1


TOOLS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (ping, get_customer, list_orders, get_rate)
}


@dataclass(frozen=True, slots=True)
class Case:
    """One snippet source generator; ``source(k)`` is the text of execution ``k``."""

    name: str
    label: str
    source: Callable[[int], str]
    repeats: bool


THROUGHPUT_CASES = (
    Case("trivial", "print(1)", lambda k: TRIVIAL, True),
    Case("tools10", "10 tool calls", lambda k: TOOLS10, True),
)
LATENCY_CASES = (
    Case(
        "realistic_new",
        "13 lines, 9 tool calls",
        lambda k: REALISTIC.format(n=k, n1=k + 1, n2=k + 2),
        False,
    ),
    Case("trivial_new", "print(1)", lambda k: f"print({k})\n", False),
    Case("trivial_repeat", "print(1)", lambda k: TRIVIAL, True),
)
IN_FLIGHT = (1, 8)


class Engine:
    """Runs snippets one way; set :attr:`skipped` in :meth:`start` instead of raising."""

    skipped: str | None = None

    async def start(self) -> None:
        """Prepare (start pools ...)."""

    async def run(self, code: str) -> None:
        """Execute ``code`` with :data:`TOOLS`; raise when it fails."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release everything :meth:`start` created."""


class RuntimeEngine(Engine):
    """A ptcbox runtime (or anything with its ``start/execute/aclose`` methods)."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._runtime: Any = None
        self._namespace: dict[str, Any] = {}

    async def start(self) -> None:
        from ptcbox import DirectProjection

        try:
            self._runtime = self._factory()
        except (ImportError, RuntimeError, OSError, TypeError) as exc:
            self.skipped = f"{type(exc).__name__}: {exc}"
            return
        self._namespace = {name: DirectProjection(name=name, fn=fn) for name, fn in TOOLS.items()}
        start = getattr(self._runtime, "start", None)
        if start is not None:
            await start()

    async def run(self, code: str) -> None:
        result = await self._runtime.execute(code, self._namespace)
        if not result.ok:
            raise RuntimeError(f"{result.error_type}: {result.error}")

    async def aclose(self) -> None:
        if self._runtime is not None:
            await self._runtime.aclose()


class PlainExecEngine(Engine):
    """``compile`` + ``exec`` in this process, output to a ``StringIO`` (the floor)."""

    async def run(self, code: str) -> None:
        import contextlib

        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "<snippet>", "exec"), {**TOOLS, "__name__": "__main__"})


class MontyEngine(Engine):
    """pydantic-monty's ``Monty`` pool: one checked-out session per execution.

    The sync pool: ``AsyncMonty`` aborts the interpreter at exit (pydantic-monty 1.4).
    With one execution in flight it is called directly (nothing else runs on the loop
    meanwhile); with more, each call runs in a thread (``feed_run`` releases the GIL).
    """

    def __init__(self) -> None:
        self._pool: Any = None
        self._monty: Any = None
        self.in_flight = 1

    async def start(self) -> None:
        try:
            import pydantic_monty
        except ImportError as exc:
            self.skipped = f"pydantic-monty is not installed ({exc.name}); pip install it"
            return
        self._monty = pydantic_monty
        try:
            self._pool = pydantic_monty.Monty(min_processes=2)
            self._pool.__enter__()
        except Exception as exc:
            self._pool = None
            self.skipped = f"the monty worker did not start: {type(exc).__name__}: {exc}"

    def _run(self, code: str) -> None:
        collector = self._monty.CollectString()
        with self._pool.checkout() as session:
            session.feed_run(code, external_lookup=TOOLS, print_callback=collector)

    async def run(self, code: str) -> None:
        if self.in_flight > 1:
            await asyncio.to_thread(self._run, code)
        else:
            self._run(code)

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.__exit__(None, None, None)
            self._pool = None


def _thread() -> Any:
    from ptcbox.runtimes import ThreadRuntime

    return ThreadRuntime()


def _subprocess(**kwargs: Any) -> Callable[[], Any]:
    def make() -> Any:
        from ptcbox.runtimes import SubprocessRuntime

        return SubprocessRuntime(**kwargs)

    return make


@dataclass(frozen=True, slots=True)
class Entry:
    """One row: a name, what isolates an execution, and how to build the engine."""

    name: str
    isolation: str
    make: Callable[[], Engine]
    throughput: bool = True
    """``False``: latency rows only."""


ENGINES: list[Entry] = [
    Entry("plain exec", "none (compile + exec here)", PlainExecEngine, throughput=False),
    Entry("ptcbox ThreadRuntime", "RestrictedPython, host thread", lambda: RuntimeEngine(_thread)),
    Entry(
        "ptcbox SubprocessRuntime (fresh process)",
        "a new process per execution",
        lambda: RuntimeEngine(_subprocess()),
    ),
    Entry(
        "ptcbox SubprocessRuntime (reuse, N=1000)",
        "a process per worker, reset between executions",
        lambda: RuntimeEngine(_subprocess(max_executions_per_worker=1000)),
    ),
    Entry(REFERENCE, "Rust interpreter, worker processes", MontyEngine),
]
"""The rows, in table order. Add a runtime (Ray, a mode) by appending one entry."""


@dataclass(frozen=True, slots=True)
class Settings:
    """How long to measure: ``seconds`` per throughput cell and round, ``warmup_s``
    before it, ``rounds`` interleaved rounds, ``latency_n`` paced executions per
    latency case and round, ``pace_s`` between them."""

    seconds: float = 1.0
    warmup_s: float = 0.3
    rounds: int = 3
    latency_n: int = 40
    pace_s: float = 0.02

    @classmethod
    def quick(cls) -> Settings:
        return cls(seconds=0.05, warmup_s=0.02, rounds=1, latency_n=2, pace_s=0.001)


@dataclass(slots=True)
class Row:
    """One entry's results: rates per throughput cell, latencies per latency case."""

    name: str
    isolation: str
    skipped: str | None = None
    error: str | None = None
    rates: dict[str, list[float]] = field(default_factory=dict)  # "case@inflight"
    latencies: dict[str, list[float]] = field(default_factory=dict)  # seconds


async def _sustained(engine: Engine, case: Case, inflight: int, s: Settings) -> float:
    code = case.source(0)
    count = 0
    if hasattr(engine, "in_flight"):
        engine.in_flight = inflight

    async def lane(until: float, counted: bool) -> None:
        nonlocal count
        while time.perf_counter() < until:
            await engine.run(code)
            if counted:
                count += 1

    warm_until = time.perf_counter() + s.warmup_s
    await asyncio.gather(*(lane(warm_until, False) for _ in range(inflight)))
    started = time.perf_counter()
    await asyncio.gather(*(lane(started + s.seconds, True) for _ in range(inflight)))
    return count / (time.perf_counter() - started)


async def _latency(engine: Engine, case: Case, s: Settings, first: int) -> list[float]:
    times = []
    if hasattr(engine, "in_flight"):
        engine.in_flight = 1
    for k in range(first, first + s.latency_n):
        await asyncio.sleep(s.pace_s)
        code = case.source(k)
        started = time.perf_counter()
        await engine.run(code)
        times.append(time.perf_counter() - started)
    return times


_FORK_PROBE = """
import gc, time
from ptcbox.runtimes.subprocess.worker import _template
from ptcbox.sandbox import SandboxPolicy
_template._warm_up(SandboxPolicy())  # the template of the default policy
gc.collect(); gc.freeze()
seconds = float(sys.argv[2]); count = 0
started = time.perf_counter()
while time.perf_counter() - started < seconds:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    count += 1
print(count / (time.perf_counter() - started))
"""


def fork_rate(seconds: float) -> float:
    """``fork`` + ``_exit`` + reap per second, serially, of a template-sized process (begun
    as the template begins: its modules only, at-fork hooks recorded, not run)."""
    from ptcbox.runtimes.subprocess._launch import TEMPLATE_PRELUDE

    src = str(Path(__import__("ptcbox").__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run(
        [sys.executable, "-c", TEMPLATE_PRELUDE + _FORK_PROBE, src, str(seconds)],
        capture_output=True, text=True, check=False, env=env, timeout=120,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"the fork-rate probe failed:\n{out.stderr}")
    return float(out.stdout.strip().splitlines()[-1])


async def _run_all(entries: list[Entry], s: Settings, progress: Callable[[str], None]) -> Any:
    rows = [Row(e.name, e.isolation) for e in entries]
    engines = [e.make() for e in entries]
    forks: list[float] = []
    for engine, row in zip(engines, rows, strict=True):
        await engine.start()
        row.skipped = engine.skipped
    try:
        for index in range(s.rounds):
            progress(f"round {index + 1}/{s.rounds}: fork reference")
            forks.append(fork_rate(max(s.seconds, 0.05)))
            for position, (entry, engine, row) in enumerate(
                zip(entries, engines, rows, strict=True)
            ):
                if row.skipped or row.error:
                    continue
                progress(f"round {index + 1}/{s.rounds}: {row.name}")
                try:
                    if entry.throughput:
                        for case in THROUGHPUT_CASES:
                            for inflight in IN_FLIGHT:
                                rate = await _sustained(engine, case, inflight, s)
                                row.rates.setdefault(f"{case.name}@{inflight}", []).append(rate)
                    for case in LATENCY_CASES:
                        # sources new to the whole process, not only to this engine: the
                        # host's compile caches are per process (a source another engine
                        # sent is a second sight, which starts a background compile)
                        first = 1000 + (index * len(entries) + position) * s.latency_n
                        times = await _latency(engine, case, s, first)
                        row.latencies.setdefault(case.name, []).extend(times)
                except Exception as exc:
                    row.error = f"{type(exc).__name__}: {exc}"
    finally:
        for engine in engines:
            if not engine.skipped:
                await engine.aclose()
    return rows, forks


def run_throughput(
    entries: list[Entry] | None = None,
    settings: Settings | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[Row], list[float]]:
    """Measure every entry (default :data:`ENGINES`) under ``settings``.

    Returns:
        The rows and the fork reference rate of each round (per second).
    """
    entries = ENGINES if entries is None else entries
    settings = settings or Settings()
    return asyncio.run(_run_all(entries, settings, progress or (lambda text: None)))  # type: ignore[no-any-return]


def _med(values: list[float]) -> float:
    return statistics.median(values)


def _reference(rows: list[Row]) -> Row | None:
    ok = [r for r in rows if not r.skipped and not r.error]
    for row in ok:
        if row.name == REFERENCE:
            return row
    return next((r for r in ok if "SubprocessRuntime" in r.name), None)


def render_markdown(rows: list[Row], forks: list[float], pace_s: float | None = None) -> str:
    """Both tables as Markdown: medians over rounds, ratios to the reference row
    (``pace_s``: the latency rows' pace in seconds, the default Settings' if ``None``)."""
    ref = _reference(rows)
    ref_name = ref.name if ref else "none"
    fork = _med(forks) if forks else float("nan")
    out = [
        f"Sustained executions/s (median of {len(forks)} rounds; sources repeat); "
        f"x = ratio to {ref_name}; fork+exit+reap reference: **{fork:,.0f}/s**.",
        "",
        "| runtime | isolation | " + " | ".join(
            f"{c.label}, {n} in flight | x" for c in THROUGHPUT_CASES for n in IN_FLIGHT
        ) + " | print(1) 1 in flight / fork rate |",
        "|---|---|" + "---:|---:|" * (len(THROUGHPUT_CASES) * len(IN_FLIGHT)) + "---:|",
    ]  # fmt: skip
    for row in rows:
        if row.skipped or row.error:
            out.append(f"| {row.name} | {row.isolation} | {row.skipped or row.error} |")
            continue
        if not row.rates:
            continue
        cells = []
        for case in THROUGHPUT_CASES:
            for n in IN_FLIGHT:
                key = f"{case.name}@{n}"
                rate = _med(row.rates[key])
                base = _med(ref.rates[key]) if ref and key in ref.rates else float("nan")
                cells += [f"{rate:,.0f}", f"{rate / base:.2f}"]
        cells.append(f"{_med(row.rates['trivial@1']) / fork:.0%}")
        out.append(f"| {row.name} | {row.isolation} | " + " | ".join(cells) + " |")
    out += [
        "",
        f"Single-execution latency, paced {(pace_s or Settings().pace_s) * 1e3:.0f} ms, median ms "
        f"(p90); x = median / {ref_name}'s.",
        "",
        "| runtime | " + " | ".join(
            f"{c.label} ({'repeated' if c.repeats else 'new source each time'}) | x"
            for c in LATENCY_CASES
        ) + " |",
        "|---|" + "---:|---:|" * len(LATENCY_CASES),
    ]  # fmt: skip
    for row in rows:
        if row.skipped or row.error:
            continue
        cells = []
        for case in LATENCY_CASES:
            times = row.latencies[case.name]
            p90 = sorted(times)[math.ceil(0.9 * len(times)) - 1]  # nearest rank
            base = _med(ref.latencies[case.name]) if ref else float("nan")
            cells += [f"{_med(times) * 1e3:.3f} ({p90 * 1e3:.3f})", f"{_med(times) / base:.2f}"]
        out.append(f"| {row.name} | " + " | ".join(cells) + " |")
    out += [
        "",
        f"Python {platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end: every "
        "row was measured in this one process, the engines taking turns in each round.",
    ]
    return "\n".join(out) + "\n"


def to_json(rows: list[Row], forks: list[float]) -> dict[str, Any]:
    """Raw data: rates per round (per second) and latencies (seconds)."""
    return {
        "fork_rate_per_s": forks,
        "rows": [
            {"name": r.name, "isolation": r.isolation, "skipped": r.skipped, "error": r.error,
             "rates": r.rates, "latencies_s": r.latencies}
            for r in rows
        ],
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (``ptcbox bench throughput``).

    Returns:
        ``0`` when every ptcbox row ran without error, else ``1``.
    """
    parser = argparse.ArgumentParser(
        prog="ptcbox bench throughput", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="tiny run (smoke test)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (3)")
    parser.add_argument("--seconds", type=float, default=None, help="per cell and round (1.0)")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="only rows whose name contains TEXT")  # fmt: skip
    parser.add_argument("--markdown", metavar="FILE", help="also write the tables as Markdown")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    args = parser.parse_args(argv)
    settings = Settings.quick() if args.quick else Settings()
    if args.rounds or args.seconds:
        settings = Settings(
            seconds=args.seconds or settings.seconds,
            warmup_s=settings.warmup_s,
            rounds=args.rounds or settings.rounds,
            latency_n=settings.latency_n,
            pace_s=settings.pace_s,
        )
    entries = [e for e in ENGINES if not args.only or any(t in e.name for t in args.only)]
    rows, forks = run_throughput(
        entries, settings, None if args.json else lambda text: print(text, file=sys.stderr)
    )
    text = render_markdown(rows, forks, settings.pace_s)
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
    print(json.dumps(to_json(rows, forks), indent=1) if args.json else text)
    return 1 if any(r.error for r in rows if r.name.startswith("ptcbox")) else 0


if __name__ == "__main__":
    sys.exit(main())

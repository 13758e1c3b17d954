"""Where one paced SubprocessRuntime execution of a new source spends its time (issue 16, item 0).

Turns on the opt-in timestamps of :mod:`ptcbox.runtimes.subprocess.worker._timing`
(``PTCBOX_TIMING=1``, set here before ptcbox is imported), runs the throughput
benchmark's 13-line, 9-tool-call snippet (``--snippet realistic``, the default) or
``print(k)`` with a new source each time, paced 20 ms (as an agent calls: the pool is
refilled and idle, the CPU caches cold), in fresh-process mode or reuse mode
(``--reuse N``), and prints the median and p90 of every step in microseconds, from the
caller's ``execute`` to its return: the host's preparation, the hand-out, the worker's
receive, globals, compile, the run (tool calls included), the ``done`` and the host's
result. ``--repeat`` sends one source over and over instead (the host's compile cache
serves it from its third sight).

Run::

    PYTHONPATH=src python benchmarks/latency_breakdown.py                  # fresh, realistic
    PYTHONPATH=src python benchmarks/latency_breakdown.py --reuse 1000
    PYTHONPATH=src python benchmarks/latency_breakdown.py --snippet print -n 200
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

os.environ["PTCBOX_TIMING"] = "1"  # before ptcbox is imported: read once at import
sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import REALISTIC, TOOLS

STEPS = [  # (start mark, end mark, what); "call"/"return" are this script's own
    ("call", "handout", "host: execute() to hand-out (prepare, take a worker)"),
    ("handout", "sent", "host: run frame sent"),
    ("sent", "checked", "host: pre-flight check (overlaps the worker)"),
    ("sent", "w.run_recv", "worker: run message received"),
    ("w.run_recv", "w.globals_ready", "worker: tool stubs, globals"),
    ("w.globals_ready", "w.exec_start", "worker: compile (or decode the host's)"),
    ("w.exec_start", "w.exec_end", "worker: snippet runs (tool calls included)"),
    ("w.exec_end", "w.done_send", "worker: done built (reuse: gc, memory check)"),
    ("w.done_send", "done_recv", "host: done received, checked"),
    ("done_recv", "outcome", "host: outcome to the execution"),
    ("outcome", "return", "host: result built, worker released"),
    ("call", "return", "total (execute() to its return)"),
]
IDLE = [  # the worker before this execution: set up (fresh) or reset (reused)
    ("w.audit", "w.rehearsal", "worker (fresh, before hand-out): rehearsals"),
    ("w.reset", "w.globals", "worker (idle): next globals built"),
    ("w.globals", "w.run_recv", "worker: idle wait"),
]


def _source(kind: str, k: int, repeat: bool) -> str:
    if repeat:
        k = 0
    if kind == "print":
        return f"print({k})\n"
    return REALISTIC.format(n=k, n1=k + 1, n2=k + 2)


async def measure(
    kind: str, count: int, reuse: int, repeat: bool, pace: float = 0.02
) -> list[dict[str, int]]:
    """Per-execution marks (ns) of ``count`` paced executions after a warm-up."""
    from ptcbox import DirectProjection
    from ptcbox.runtimes import SubprocessRuntime
    from ptcbox.runtimes.subprocess.worker import _timing

    namespace = {name: DirectProjection(name, f) for name, f in TOOLS.items()}
    records: list[dict[str, int]] = []
    async with SubprocessRuntime(max_executions_per_worker=reuse) as runtime:
        for k in range(-40, count):
            await asyncio.sleep(pace)
            _timing.HOST.clear()
            started = time.monotonic_ns()
            result = await runtime.execute(_source(kind, k + 1000, repeat), namespace)
            ended = time.monotonic_ns()
            if not result.ok:
                raise RuntimeError(result.error)
            if k < 0:
                continue
            for marks in _timing.HOST.values():
                if "handout" in marks:
                    records.append({**marks, "call": started, "return": ended})
    return records


def _span(records: list[dict[str, int]], start: str, end: str) -> list[float]:
    return sorted((r[end] - r[start]) / 1e3 for r in records if start in r and end in r)


def render(records: list[dict[str, int]], title: str) -> str:
    """Median and p90 of each step (µs), and the CPU a worker step used."""
    lines = [
        f"{title}: {len(records)} executions; load average {os.getloadavg()[0]:.1f}",
        "",
        "| step | median us | p90 us | worker CPU us (median) |",
        "|---|---:|---:|---:|",
    ]
    for start, end, what in STEPS + IDLE:
        values = _span(records, start, end)
        if not values or what == "n/a":
            continue
        p90 = values[int(0.9 * (len(values) - 1))]
        cpu = "-"
        if start.startswith("w.") and end.startswith("w."):
            spent = _span(records, start + "#cpu", end + "#cpu")
            cpu = f"{statistics.median(spent):,.0f}" if spent else "-"
        lines.append(f"| {what} | {statistics.median(values):,.0f} | {p90:,.0f} | {cpu} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--snippet", choices=("realistic", "print"), default="realistic")
    parser.add_argument("--reuse", type=int, default=1, help="max_executions_per_worker (1)")
    parser.add_argument("--repeat", action="store_true", help="one source, repeated")
    parser.add_argument("-n", type=int, default=150, help="measured executions (150)")
    args = parser.parse_args(argv)
    records = asyncio.run(measure(args.snippet, args.n, args.reuse, args.repeat))
    mode = "fresh process" if args.reuse == 1 else f"reuse N={args.reuse}"
    source = "repeated source" if args.repeat else "new source each time"
    print(render(records, f"{args.snippet}, {mode}, {source}, paced 20 ms"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

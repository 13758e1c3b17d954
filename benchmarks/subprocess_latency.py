"""SubprocessRuntime: latency, throughput and memory (issue 3's benchmark section).

``benchmarks/latency.py`` times the three snippets for every runtime; this script adds
what only the process runtime has: the warm path and the on-demand (empty pool) path
side by side, sustained executions per second with many executions in flight, the
memory of an idle worker, and the host's memory over thousands of executions. Plain
``exec`` in this process is the baseline, measured in the same run. The warm rows
pause 20 ms between executions so that the pool refills, which also leaves the CPU
caches cold, as between the calls of a real agent. They repeat one source text, which
the host compiles once, the second time it sees it, and keeps (see
``runtimes/subprocess/_compile.py``); the "new source each time" row shows the cost without
that cache.

Run::

    .venv/bin/python benchmarks/subprocess_latency.py            # full (about a minute)
    .venv/bin/python benchmarks/subprocess_latency.py --quick    # smoke test
    .venv/bin/python benchmarks/subprocess_latency.py --json
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
import time
from typing import Any

import psutil
from rich.console import Console
from rich.table import Table

from ptcbox import DirectProjection, SubprocessRuntime

TRIVIAL = "print(1)\n"
TOOLS100 = "for i in range(100):\n    ping(i=i)\n"
LOOP = "total = 0\nfor i in range(200_000):\n    total += i % 7\n"


def ping(i: int) -> int:
    """The benchmark's tool: returns its argument."""
    return i


NAMESPACE = {"ping": DirectProjection("ping", ping)}


def _exec_times(code: str, repeat: int) -> list[float]:
    compiled = compile(code, "<snippet>", "exec")
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compiled, {"ping": ping})
        times.append(time.perf_counter() - started)
    return times


async def _times(
    runtime: SubprocessRuntime, code: str, repeat: int, pace: float, *, fresh: bool = False
) -> list[float]:
    """``fresh``: a new source text each time (a comment), so no compile cache helps."""
    times = []
    for index in range(repeat):
        if pace:
            await asyncio.sleep(pace)
        source = f"{code}# {index} {time.perf_counter_ns()}\n" if fresh else code
        started = time.perf_counter()
        result = await runtime.execute(source, NAMESPACE)
        times.append(time.perf_counter() - started)
        if not result.ok:
            raise RuntimeError(result.error)
    return times


async def _throughput(runtime: SubprocessRuntime, total: int, in_flight: int) -> float:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(total):
        queue.put_nowait(index)

    async def worker() -> None:
        while not queue.empty():
            queue.get_nowait()
            result = await runtime.execute(TRIVIAL, NAMESPACE)
            if not result.ok:
                raise RuntimeError(result.error)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return total / (time.perf_counter() - started)


def _idle_worker_memory(runtime: SubprocessRuntime) -> dict[str, float]:
    pool = runtime._pool
    rss, uss, pss = [], [], []
    for worker in list(pool._idle):
        info = psutil.Process(worker.pid).memory_full_info()
        rss.append(info.rss)
        uss.append(info.uss)
        pss.append(info.pss)
    return {
        "idle_workers": len(rss),
        "idle_rss_mib": statistics.median(rss) / 2**20,
        "idle_uss_mib": statistics.median(uss) / 2**20,
        "idle_pss_mib": statistics.median(pss) / 2**20,
    }


async def run(scale: float) -> dict[str, Any]:
    """Measure everything; ``scale`` multiplies the repetitions."""
    n = max(5, round(100 * scale))
    out: dict[str, Any] = {}
    base = {
        "trivial": statistics.median(_exec_times(TRIVIAL, n)),
        "tools100": statistics.median(_exec_times(TOOLS100, n)),
    }
    async with SubprocessRuntime(min_idle=4) as runtime:
        await _times(runtime, TRIVIAL, 20, 0.02)  # warm up
        warm = statistics.median(await _times(runtime, TRIVIAL, n, 0.02))
        fresh = statistics.median(await _times(runtime, TRIVIAL, n, 0.02, fresh=True))
        cold = statistics.median(await _times(runtime, TRIVIAL, max(5, n // 4), 0.0))
        tools = statistics.median(await _times(runtime, TOOLS100, max(5, n // 4), 0.02))
        loop_pairs = [
            (_exec_times(LOOP, 1)[0], (await _times(runtime, LOOP, 1, 0.02))[0])
            for _ in range(max(3, n // 10))
        ]  # interleaved, so that a change of machine load hits both alike
        loop = statistics.median(pair[1] for pair in loop_pairs)
        base["loop"] = statistics.median(pair[0] for pair in loop_pairs)
        await asyncio.sleep(0.5)
        out.update(_idle_worker_memory(runtime))
        out["exec_per_s_1_in_flight"] = await _throughput(runtime, max(50, n * 2), 1)
        out["exec_per_s_8_in_flight"] = await _throughput(runtime, max(50, n * 4), 8)
    out.update(
        trivial_warm_ms=warm * 1e3,
        trivial_fresh_ms=fresh * 1e3,
        trivial_back_to_back_ms=cold * 1e3,
        trivial_exec_ms=base["trivial"] * 1e3,
        tools100_ms=tools * 1e3,
        per_call_us=(tools - warm) / 100 * 1e6,
        loop_ms=loop * 1e3,
        loop_exec_ms=base["loop"] * 1e3,
        loop_ratio=statistics.median(pair[1] / pair[0] for pair in loop_pairs),
    )
    total = max(500, round(10_000 * scale))
    async with SubprocessRuntime() as runtime:
        host = psutil.Process()
        await _throughput(runtime, min(1000, total // 5), 4)
        rss_start = host.memory_info().rss
        await _throughput(runtime, total, 4)
        rss_end = host.memory_info().rss
    out.update(
        host_executions=total,
        host_rss_start_mib=rss_start / 2**20,
        host_rss_end_mib=rss_end / 2**20,
        host_rss_growth_mib=(rss_end - rss_start) / 2**20,
    )
    return out


def render(results: dict[str, Any], console: Console) -> None:
    """Print the results as a table."""
    table = Table(title="SubprocessRuntime (medians; baseline: plain exec in this process)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("target / baseline")
    r = results
    rows = [
        ("print(1), warm pool", f"{r['trivial_warm_ms']:.3f} ms", "<= 1 ms"),
        (
            "print(1), warm pool, new source each time",
            f"{r['trivial_fresh_ms']:.3f} ms",
            "no compile-cache hit",
        ),
        ("print(1), back-to-back (pool refilling)", f"{r['trivial_back_to_back_ms']:.3f} ms", ""),
        ("print(1), plain exec", f"{r['trivial_exec_ms']:.4f} ms", "baseline"),
        ("100 sequential tool calls", f"{r['tools100_ms']:.2f} ms", "<= 5 ms"),
        ("per tool call (host round trip)", f"{r['per_call_us']:.1f} µs", "<= 50 µs"),
        ("200k-iteration loop", f"{r['loop_ms']:.1f} ms", f"exec {r['loop_exec_ms']:.1f} ms"),
        ("loop ratio vs exec", f"{r['loop_ratio']:.2f}x", "<= 1.2x"),
        ("executions/s, 1 in flight", f"{r['exec_per_s_1_in_flight']:.0f}", ""),
        (
            "executions/s, 8 in flight",
            f"{r['exec_per_s_8_in_flight']:.0f}",
            f"{os.cpu_count()} CPUs",
        ),
        ("idle worker RSS", f"{r['idle_rss_mib']:.1f} MiB", "shared with the template"),
        ("idle worker USS (private)", f"{r['idle_uss_mib']:.2f} MiB", ""),
        ("idle worker PSS", f"{r['idle_pss_mib']:.2f} MiB", ""),
        (
            f"host RSS over {r['host_executions']:,} executions",
            f"{r['host_rss_start_mib']:.1f} -> {r['host_rss_end_mib']:.1f} MiB",
            f"growth {r['host_rss_growth_mib']:+.1f} MiB",
        ),
    ]
    for row in rows:
        table.add_row(*row)
    console.print(table)
    console.print(
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs."
    )


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    results = asyncio.run(run(0.1 if args.quick else 1.0))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        render(results, Console())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""SandboxPolicy.data() against the default policy in SubprocessRuntime, side by side.

What the data preset costs: the template imports numpy and pandas before it forks, so an
idle worker maps more memory (RSS; shared copy-on-write with the template, so its USS,
private, and PSS, its fair share, are what a worker really adds) and the template takes
longer to start; an execution pays no import. Both runtimes run in this process and the
executions alternate (A/B per round), so machine load hits both alike; medians.

Rows: template start (``start()``), idle worker RSS/USS/PSS (median over the idle
workers), warm ``print(1)``, a groupby over 200 tool-result rows (pandas under the data
preset; the same aggregation as a dict loop under the default policy) and
``import pandas`` in a snippet (data preset; free: pre-imported).

Run::

    .venv/bin/python benchmarks/data_preset.py            # about a minute
    .venv/bin/python benchmarks/data_preset.py --rounds 5 # quicker
    .venv/bin/python benchmarks/data_preset.py --pause 0.05  # back-to-back executions
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

import psutil

from ptcbox import DirectProjection, SandboxPolicy, SubprocessRuntime


def get_rows(n: int) -> list[dict[str, Any]]:
    """``n`` order rows (the tool the snippets call)."""
    regions = ("north", "south", "east", "west")
    return [{"id": i, "region": regions[i % 4], "amount": (i * 37) % 101 + 0.5} for i in range(n)]


TOOLS = {"get_rows": DirectProjection("get_rows", get_rows)}
TRIVIAL = "print(1)\n"
GROUPBY_PANDAS = """\
import pandas as pd
df = pd.DataFrame(get_rows(200))
print(df.groupby("region")["amount"].agg(["count", "sum", "mean"]).round(2).to_string())
"""
GROUPBY_PLAIN = """\
sums, counts = {}, {}
for row in get_rows(200):
    sums[row["region"]] = sums.get(row["region"], 0) + row["amount"]
    counts[row["region"]] = counts.get(row["region"], 0) + 1
for region in sorted(sums):
    print(region, counts[region], round(sums[region], 2), round(sums[region] / counts[region], 2))
"""
PAUSE_S = 0.5
"""Seconds between executions: with 0.05 s a data worker is often not re-forked yet (a
larger template forks and rehearses more slowly), and the execution waits for it."""
IMPORT = "import pandas\nimport numpy\n"


def _idle_memory(runtime: SubprocessRuntime) -> dict[str, float]:
    rss, uss, pss = [], [], []
    for worker in list(runtime._pool._idle):
        info = psutil.Process(worker.pid).memory_full_info()
        rss.append(info.rss)
        uss.append(info.uss)
        pss.append(info.pss)
    if not rss:
        return {"rss": float("nan"), "uss": float("nan"), "pss": float("nan")}
    mib = 2**20
    return {
        "rss": statistics.median(rss) / mib,
        "uss": statistics.median(uss) / mib,
        "pss": statistics.median(pss) / mib,
    }


async def _timed(runtime: SubprocessRuntime, code: str) -> float:
    started = time.perf_counter()
    result = await runtime.execute(code, TOOLS, timeout=60)
    elapsed = time.perf_counter() - started
    if result.error is not None:
        raise RuntimeError(result.error)
    await asyncio.sleep(PAUSE_S)  # let the pool refill, as between an agent's calls
    return elapsed * 1000


async def run(rounds: int) -> dict[str, Any]:
    """Start both runtimes, measure memory, then ``rounds`` interleaved rounds."""
    out: dict[str, Any] = {}
    runtimes: dict[str, SubprocessRuntime] = {}
    for name, policy in (("default", SandboxPolicy()), ("data", SandboxPolicy.data())):
        runtime = SubprocessRuntime(policy, min_idle=2, max_workers=2)
        started = time.perf_counter()
        await runtime.start()
        out[f"{name}_start_s"] = time.perf_counter() - started
        runtimes[name] = runtime
    try:
        await asyncio.sleep(1.0)
        for name, runtime in runtimes.items():
            await _timed(runtime, TRIVIAL)  # every path warm once
            await asyncio.sleep(1.0)
            out[f"{name}_idle_mib"] = _idle_memory(runtime)
        plan = [
            ("default", "print1", TRIVIAL),
            ("data", "print1", TRIVIAL),
            ("default", "groupby", GROUPBY_PLAIN),
            ("data", "groupby", GROUPBY_PANDAS),
            ("data", "import", IMPORT),
        ]
        times: dict[str, list[float]] = {f"{n}_{k}": [] for n, k, _ in plan}
        for _ in range(rounds):
            for name, kind, code in plan:
                times[f"{name}_{kind}"].append(await _timed(runtimes[name], code))
        out["median_ms"] = {key: statistics.median(values) for key, values in times.items()}
        out["rounds"] = rounds
    finally:
        for runtime in runtimes.values():
            await runtime.aclose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--pause", type=float, default=0.5, help="seconds between executions (pool refill)"
    )
    args = parser.parse_args()
    global PAUSE_S
    PAUSE_S = args.pause
    result = asyncio.run(run(args.rounds))
    if args.json:
        print(json.dumps(result, indent=1))
        return
    d, x, m = result["default_idle_mib"], result["data_idle_mib"], result["median_ms"]
    print(
        f"load average {psutil.getloadavg()[0]:.1f}; {result['rounds']} interleaved rounds, "
        f"{PAUSE_S:g} s between executions"
    )
    print(f"{'':32}{'default':>12}{'data':>12}")
    starts = result["default_start_s"], result["data_start_s"]
    print(f"{'template start (s)':32}{starts[0]:>12.2f}{starts[1]:>12.2f}")
    for key in ("rss", "uss", "pss"):
        print(f"{'idle worker ' + key.upper() + ' (MiB)':32}{d[key]:>12.1f}{x[key]:>12.1f}")
    print(f"{'warm print(1) (ms)':32}{m['default_print1']:>12.2f}{m['data_print1']:>12.2f}")
    print(
        f"{'groupby of 200 rows (ms)':32}{m['default_groupby']:>12.2f}{m['data_groupby']:>12.2f}"
        "   (default: a dict loop; data: pandas)"
    )
    print(f"{'import pandas, numpy (ms)':32}{'-':>12}{m['data_import']:>12.2f}")


if __name__ == "__main__":
    main()

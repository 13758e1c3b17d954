"""RayRuntime against SubprocessRuntime: the per-execution overhead, and throughput as
actors are added.

Two measurements, side by side in one process:

1. *Latency* (one execution at a time, back to back, the same source repeated):
   ``print(1)`` and a snippet making 10 sync tool calls, interleaved A/B rounds of
   SubprocessRuntime and RayRuntime (one actor); medians and the overhead
   (RayRuntime - SubprocessRuntime) per execution and per tool call.
2. *Throughput* (executions/s with ``--in-flight`` executions running at once, for
   ``--seconds``): SubprocessRuntime, then RayRuntime with 1 and 2 actors
   (``executions_per_actor`` each), all on this machine's local Ray cluster.

Starts a local Ray cluster (``ray.init(num_cpus=...)``, no dashboard) unless
``RAY_ADDRESS`` names one, and shuts down only one it started. On one machine, actors
share its cores with the caller, so throughput shows the cost of the extra hops, not
the gain of more nodes (see the README's estimate for 10 and 100 nodes).

Run::

    python benchmarks/ray_scaling.py                 # the tables
    python benchmarks/ray_scaling.py --rounds 100 --seconds 10
    python benchmarks/ray_scaling.py --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

from ptcbox import DirectProjection
from ptcbox.runtimes import RayRuntime, SubprocessRuntime

PRINT_1 = "print(1)"
TEN_CALLS = "total = 0\nfor i in range(10):\n    total += add(a=i, b=1)\nprint(total)"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


TOOLS = {"add": DirectProjection("add", add)}


async def _once(runtime: Any, code: str) -> float:
    started = time.perf_counter()
    result = await runtime.execute(code, TOOLS)
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise RuntimeError(f"{type(runtime).__name__}: {result.error}")
    return elapsed


async def latency(runtimes: dict[str, Any], rounds: int) -> dict[str, dict[str, float]]:
    """Median seconds per execution, interleaved A/B rounds, per snippet and runtime."""
    out: dict[str, dict[str, float]] = {}
    for label, code in (("print(1)", PRINT_1), ("10 tool calls", TEN_CALLS)):
        times: dict[str, list[float]] = {name: [] for name in runtimes}
        for runtime in runtimes.values():  # warm-up: workers forked, caches filled
            for _ in range(3):
                await _once(runtime, code)
        for _ in range(rounds):
            for name, runtime in runtimes.items():
                times[name].append(await _once(runtime, code))
        out[label] = {name: statistics.median(values) for name, values in times.items()}
    return out


async def throughput(runtime: Any, code: str, in_flight: int, seconds: float) -> float:
    """Executions per second with ``in_flight`` running at once, for ``seconds``."""
    for _ in range(in_flight):
        await _once(runtime, code)
    done = 0
    stop = time.perf_counter() + seconds

    async def loop() -> None:
        nonlocal done
        while time.perf_counter() < stop:
            await _once(runtime, code)
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(loop() for _ in range(in_flight)))
    return done / (time.perf_counter() - started)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    import ray

    started_ray = False
    if not ray.is_initialized():
        options: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False}
        if not os.environ.get("RAY_ADDRESS"):
            options.update(num_cpus=args.cpus, include_dashboard=False)
        ray.init(**options)
        started_ray = True
    per_actor = args.executions_per_actor
    subprocess_rt = SubprocessRuntime(max_workers=per_actor * 2)
    ray_one = RayRuntime(actors=1, num_cpus=0.5, executions_per_actor=per_actor)
    ray_two = RayRuntime(actors=2, num_cpus=0.5, executions_per_actor=per_actor)
    report: dict[str, Any] = {"rounds": args.rounds, "in_flight": args.in_flight}
    try:
        for runtime in (subprocess_rt, ray_one, ray_two):
            await runtime.start()
        medians = await latency({"subprocess": subprocess_rt, "ray": ray_one}, args.rounds)
        report["latency_s"] = medians
        rates: dict[str, dict[str, float]] = {}
        for label, code in (("print(1)", PRINT_1), ("10 tool calls", TEN_CALLS)):
            rates[label] = {
                name: await throughput(runtime, code, args.in_flight, args.seconds)
                for name, runtime in (
                    ("subprocess", subprocess_rt),
                    ("ray, 1 actor", ray_one),
                    ("ray, 2 actors", ray_two),
                )
            }
        report["throughput_per_s"] = rates
    finally:
        for runtime in (subprocess_rt, ray_one, ray_two):
            await runtime.aclose()
        if started_ray:
            ray.shutdown()
    return report


def render(report: dict[str, Any]) -> str:
    """The report as markdown tables."""
    lines = [
        f"Latency: median of {report['rounds']} interleaved rounds, one execution at a time, "
        "same source repeated",
        "",
        "| snippet | SubprocessRuntime | RayRuntime (1 actor) | overhead | ratio |",
        "|---|---|---|---|---|",
    ]
    for label, medians in report["latency_s"].items():
        sub, ray_s = medians["subprocess"], medians["ray"]
        lines.append(
            f"| `{label}` | {sub * 1e3:.2f} ms | {ray_s * 1e3:.2f} ms | "
            f"+{(ray_s - sub) * 1e3:.2f} ms | {ray_s / sub:.1f}x |"
        )
    ten = report["latency_s"]["10 tool calls"]
    one = report["latency_s"]["print(1)"]
    per_call = ((ten["ray"] - ten["subprocess"]) - (one["ray"] - one["subprocess"])) / 10
    lines += [
        "",
        f"Overhead per tool call (the 10-call overhead less print(1)'s, / 10): "
        f"{per_call * 1e3:.2f} ms",
        "",
        f"Throughput: executions/s, {report['in_flight']} in flight, same source repeated",
        "",
        "| snippet | SubprocessRuntime | RayRuntime, 1 actor | RayRuntime, 2 actors |",
        "|---|---|---|---|",
    ]
    for label, rates in report["throughput_per_s"].items():
        lines.append(
            f"| `{label}` | {rates['subprocess']:.0f} | {rates['ray, 1 actor']:.0f} | "
            f"{rates['ray, 2 actors']:.0f} |"
        )
    return "\n".join(lines)


def cli(argv: list[str] | None = None) -> None:
    """Parse the arguments, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="latency rounds per runtime")
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput cell")
    parser.add_argument("--in-flight", type=int, default=8, help="concurrent executions")
    parser.add_argument("--executions-per-actor", type=int, default=4)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args(argv)
    report = asyncio.run(main(args))
    print(json.dumps(report, indent=2) if args.json else render(report))


if __name__ == "__main__":
    cli()

"""Where one fresh-process SubprocessRuntime execution spends its time (issue 16, item 1).

Turns on the opt-in timestamps of :mod:`ptcbox.runtimes.subprocess.worker._timing`
(``PTCBOX_TIMING=1``, set here before ptcbox is imported; off, the mark sites record
nothing), runs ``print(1)`` in the default fresh-process mode (one new forked worker per
execution) sustained with 1 execution in flight, and prints the median of every step in
microseconds, from the template's fork to the host's exit report, with the step's own
CPU time and minor page faults where one process marked both ends (a worker's faults
are mostly copy-on-write copies of pages it shares with the template, ~3 us each in a
VM), plus the CPU time each process spends per execution (host, template and its
rotations, worker), which bounds sustained throughput on a machine of N cores at about
``N / total CPU``.

Run::

    PYTHONPATH=src python benchmarks/fresh_breakdown.py            # ~10 s
    PYTHONPATH=src python benchmarks/fresh_breakdown.py --seconds 3 --paced

``--paced`` waits 20 ms between executions (an agent's pace: the pool is refilled and
idle when the next execution comes) instead of running them back to back.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import time
from typing import Any

os.environ["PTCBOX_TIMING"] = "1"  # before ptcbox is imported: read once at import

SNIPPET = "print(1)\n"

FORK = [  # the template: fork a worker and hand it to the host
    ("t.spawn", "t.fork", "template: mkdtemp + socketpair"),
    ("t.fork", "t.forked", "template: fork() (parent side)"),
    ("t.forked", "t.handout", "template: pidfd_open, OOM count"),
    ("t.handout", "worker_recv", "host: receives the worker (SCM_RIGHTS, handle)"),
]
SETUP = [  # the worker, after the fork, until it waits for its run
    ("t.fork", "w.child", "worker: fork() to first child instruction"),
    ("w.child", "w.signals", "setsid, pdeathsig, signals"),
    ("w.signals", "w.close_fds", "close inherited fds, /dev/null"),
    ("w.close_fds", "w.chdir_env", "chdir, environment"),
    ("w.chdir_env", "w.netns", "wall: network namespace"),
    ("w.netns", "w.ipc_uts", "wall: IPC/UTS namespaces"),
    ("w.ipc_uts", "w.drop_root", "drop root (no-op unless root)"),
    ("w.drop_root", "w.channel", "socket channel, output flusher"),
    ("w.channel", "w.rlimits", "wall: rlimits, no_new_privs"),
    ("w.rlimits", "w.landlock", "wall: Landlock"),
    ("w.landlock", "w.seccomp", "wall: seccomp"),
    ("w.seccomp", "w.audit", "wall: memory rlimit, audit hook"),
    ("w.audit", "w.rehearsal", "rehearsal (one loopback execution)"),
    ("w.rehearsal", "w.globals", "globals built (ready)"),
]
RUN = [  # one execution, from hand-out to the exit report
    ("handout", "sent", "host: run frame sent"),
    ("sent", "w.run_recv", "worker: run message received"),
    ("w.run_recv", "w.exec_start", "worker: tools, globals, decode"),
    ("w.exec_start", "w.exec_end", "worker: snippet runs"),
    ("w.exec_end", "w.done_send", "worker: done built"),
    ("w.done_send", "done_recv", "host: done received, checked"),
    ("done_recv", "outcome", "host: outcome to the execution"),
    ("outcome", "kill", "host: result built, worker released"),
    ("kill", "t.reaped", "template: worker reaped"),
    ("t.reaped", "t.cleaned", "template: workdir removed"),
    ("t.cleaned", "exit_report", "host: exit report received"),
]
TOTALS = [
    ("t.spawn", "worker_recv", "fork to worker in the host's pool"),
    ("t.fork", "w.globals", "worker: fork to ready (its own CPU, faults)"),
    ("t.fork", "w.done_send", "worker: fork to done sent (its own CPU, faults)"),
    ("handout", "outcome", "execution (hand-out to outcome)"),
    ("outcome", "exit_report", "tear-down (outcome to exit report)"),
]


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and of its reaped children so far."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except FileNotFoundError:  # exited (a rotated template): counted when reaped
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _descendants_cpu(pool: Any) -> dict[int, float]:
    """CPU so far of the pool's live templates (with their reaped workers) by pid, and,
    under pid 0, of the host's reaped children (templates rotated out and reaped, with
    their workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = {0: usage.ru_utime + usage.ru_stime}
    procs = [pool._proc] + [r._proc for r in pool._rotation._retiring]
    for proc in procs:
        if proc is not None and proc.poll() is None:
            out[proc.pid] = _cpu_of(proc.pid)
    return out


async def _measure(seconds: float, paced: bool) -> dict[str, Any]:
    from ptcbox.runtimes import SubprocessRuntime
    from ptcbox.runtimes.subprocess.worker import _timing

    runtime = SubprocessRuntime()
    await runtime.start()
    pool = runtime._pool
    try:
        warm_until = time.perf_counter() + 0.5
        while time.perf_counter() < warm_until:
            await runtime.execute(SNIPPET, {})
        await asyncio.sleep(0.2)
        _timing.HOST.clear()
        host0, desc0 = time.process_time(), _descendants_cpu(pool)
        started, count = time.perf_counter(), 0
        while time.perf_counter() - started < seconds:
            if paced:
                await asyncio.sleep(0.02)
            result = await runtime.execute(SNIPPET, {})
            if not result.ok:
                raise RuntimeError(result.error)
            count += 1
        elapsed = time.perf_counter() - started
        host_cpu = time.process_time() - host0
        await asyncio.sleep(0.3)  # the last exit reports, a rotated template's exit
        desc1 = _descendants_cpu(pool)
        # a template alive at the start and reaped since counts its whole life under
        # pid 0 at the end, less its reading at the start; one started meanwhile (a
        # rotation) counts its start-up too: the cost of rotating, spread over the forks
        desc_cpu = sum(desc1.values()) - sum(desc0.values())
    finally:
        await runtime.aclose()
    records = [steps for steps in _timing.HOST.values() if "handout" in steps]
    worker_cpus = [r["=cpu"] / 1e9 for r in records if "=cpu" in r]
    worker_mean = statistics.fmean(worker_cpus)
    return {
        "count": count,
        "rate": count / elapsed,
        "records": records,
        "cpu_host": host_cpu / count,
        # the templates' own CPU: all descendants' minus the workers' (mean x count)
        "cpu_template": desc_cpu / count - worker_mean,
        "cpu_worker": worker_mean,
        "cpu_worker_median": statistics.median(worker_cpus),
        "rotations": pool._rotation.generation,
    }


def _span(records: list[dict[str, int]], start: str, end: str) -> list[float]:
    return sorted((r[end] - r[start]) / 1e3 for r in records if start in r and end in r)


def _own(records: list[dict[str, int]], start: str, end: str, unit: str) -> str:
    """Median CPU (us, ``unit="#cpu"``) or page faults (``"#flt"``) of a step, when one
    process marked both ends; from the fork to a worker's first mark, its own counts
    (a child's start at zero)."""
    if start == "t.fork" and end.startswith("w."):
        values = sorted(r[end + unit] / (1e3 if unit == "#cpu" else 1) for r in records
                        if end + unit in r)  # fmt: skip
    elif start[:2] == end[:2] and start[:2] in ("w.", "t."):
        values = _span(records, start + unit, end + unit)
        if unit == "#flt":
            values = [v * 1e3 for v in values]  # _span divides by 1e3 (ns to us)
    else:
        return "-"
    return f"{statistics.median(values):,.0f}" if values else "-"


def _rows(records: list[dict[str, int]], spans: list[tuple[str, str, str]]) -> list[str]:
    out = []
    for start, end, what in spans:
        values = _span(records, start, end)
        if not values:
            out.append(f"| {what} | {start} -> {end} | n/a | | | |")
            continue
        p90 = values[int(0.9 * (len(values) - 1))]
        cpu, faults = _own(records, start, end, "#cpu"), _own(records, start, end, "#flt")
        out.append(
            f"| {what} | {start} -> {end} | {statistics.median(values):,.0f} | {p90:,.0f} "
            f"| {cpu} | {faults} |"
        )
    return out


def render(data: dict[str, Any], paced: bool) -> str:
    """The breakdown as Markdown tables (median and p90 per step, microseconds)."""
    records = data["records"]
    head = [
        "| step | marks | median us | p90 us | CPU us (median) | page faults (median) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    cpu = data["cpu_host"] + data["cpu_template"] + data["cpu_worker"]
    lines = [
        f"fresh-process print(1), {'paced 20 ms' if paced else '1 in flight, back to back'}: "
        f"{data['count']} executions, {data['rate']:,.0f}/s, {len(records)} with marks, "
        f"{data['rotations']} template rotations; "
        f"load average {os.getloadavg()[0]:.1f}",
        "",
        "Template: producing a worker",
        *head,
        *_rows(records, FORK),
        "",
        "Worker set-up (after the fork, before it is handed out)",
        *head,
        *_rows(records, SETUP),
        "",
        "One execution and its tear-down",
        *head,
        *_rows(records, RUN),
        "",
        "Totals",
        *head,
        *_rows(records, TOTALS),
        "",
        "CPU per execution (ms): "
        f"host {data['cpu_host'] * 1e3:.2f}, template {data['cpu_template'] * 1e3:.2f}, "
        f"worker {data['cpu_worker'] * 1e3:.2f} (mean; median "
        f"{data['cpu_worker_median'] * 1e3:.2f}), total {cpu * 1e3:.2f} "
        f"-> at most ~{(os.cpu_count() or 1) / cpu:,.0f}/s on {os.cpu_count()} CPUs",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; prints the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time (5)")
    parser.add_argument("--paced", action="store_true", help="20 ms between executions")
    args = parser.parse_args(argv)
    data = asyncio.run(_measure(args.seconds, args.paced))
    print(render(data, args.paced))
    return 0


if __name__ == "__main__":
    sys.exit(main())

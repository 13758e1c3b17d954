"""Guard ablation: which attack tests fail when one guard or OS wall is switched off.

An attack test proves its guard only if it fails without it (issue 18). For each switch
of :mod:`ptcbox.sandbox._ablation` this runs the security tests in a fresh pytest child
with ``PTCBOX_TEST_ABLATE=<switch>`` (the child has an address-space cap, its own session
and a wall-clock bound: with the size guards off the size bombs really run) and prints the
table switch -> tests that failed. A switch no test catches is a finding: write the attack
that catches it. Tests that already fail with nothing switched off are left out of every row.

Run::

    .venv/bin/python benchmarks/guard_ablation.py                    # every switch
    .venv/bin/python benchmarks/guard_ablation.py --only format size
    .venv/bin/python benchmarks/guard_ablation.py --markdown benchmarks/results/ablation.md

It takes a few minutes per switch (the whole attack suite runs each time).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ptcbox.sandbox._ablation import ENV_VAR, GUARDS, WALLS  # noqa: E402

TESTS: tuple[str, ...] = (
    "tests/attacks",
    "tests/runtimes/subprocess/worker/test_walls.py",
    "tests/runtimes/subprocess/worker/test_walls_compromised.py",
)
"""The security tests every switch is run against."""

CRASH_PRONE: dict[str, str] = {"except_star": "subprocess"}
"""Switches whose attacks corrupt the interpreter that runs them: only the tests of this
runtime run (a worker crashes, not pytest)."""

MEMORY_CAP = 8 << 30
"""Address-space cap of each pytest child, bytes."""

_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)


def _limit_child() -> None:  # pragma: no cover - runs in the child
    os.setsid()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_pytest(
    switch: str | None, tests: Sequence[str], timeout: float, maxfail: int = 0
) -> tuple[set[str], str]:
    """Run ``tests`` with ``switch`` off; return the failed test ids and a status word."""
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    args = [
        sys.executable,
        "-m",
        "pytest",
        *tests,
        "-q",
        "-rfE",
        "--tb=no",
        "-p",
        "no:cacheprovider",
    ]
    if switch is not None and maxfail:
        args.append(f"--maxfail={maxfail}")  # a row needs names, not every name
    if switch in WALLS:
        args += ["-k", "not thread"]  # the walls are the worker's: thread tests cannot see them
    if switch is not None:
        env[ENV_VAR] = switch
        if switch in CRASH_PRONE:
            args += ["-k", CRASH_PRONE[switch]]
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_limit_child,  # noqa: PLW1509 - no threads here yet
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return set(_FAILED.findall(out)), f"timed out after {timeout:.0f} s"
    status = "ok" if proc.returncode in (0, 1) else f"pytest exit {proc.returncode}"
    summary = out.strip().splitlines()[-1] if out.strip() else ""
    return set(_FAILED.findall(out)), f"{status}: {summary}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="switches to run (default: all)")
    parser.add_argument("--tests", nargs="*", default=list(TESTS))
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per pytest run")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip the run with nothing off (known green)"
    )
    parser.add_argument(
        "--maxfail", type=int, default=25, help="stop a switch's run after this many failures"
    )
    parser.add_argument("--names", type=int, default=8, help="test names listed per switch")
    ns = parser.parse_args(argv)
    switches = ns.only or [*GUARDS, *WALLS]
    started = time.monotonic()
    baseline: set[str] = set()
    if not ns.no_baseline:
        baseline, status = run_pytest(None, ns.tests, ns.timeout)
        print(f"baseline (nothing off): {len(baseline)} failing ({status})", flush=True)
    rows: list[tuple[str, set[str], str]] = []
    for switch in switches:
        failed, status = run_pytest(switch, ns.tests, ns.timeout, ns.maxfail)
        caught = failed - baseline
        rows.append((switch, caught, status))
        print(f"{switch}: {len(caught)} tests caught it ({status})", flush=True)
    lines = [
        "# Guard ablation",
        "",
        f"`benchmarks/guard_ablation.py` on {', '.join(ns.tests)}; "
        f"baseline failures left out: {len(baseline)}"
        f"{' (no baseline run)' if ns.no_baseline else ''}; "
        f"at most {ns.maxfail} failures per switch; {time.monotonic() - started:.0f} s.",
        "",
        "| switch | what is off | tests that fail | examples |",
        "|---|---|---|---|",
    ]
    for switch, caught, status in rows:
        what = GUARDS.get(switch) or WALLS.get(switch, "")
        names = sorted(caught)
        shown = ", ".join(f"`{n.split('::', 1)[-1]}`" for n in names[: ns.names])
        more = f" (+{len(names) - ns.names} more)" if len(names) > ns.names else ""
        flag = "" if caught else " **NOT CAUGHT**"
        note = "" if status.startswith("ok") else f" ({status})"
        lines.append(f"| {switch} | {what} | {len(names)}{flag}{note} | {shown}{more} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if ns.markdown is not None:
        ns.markdown.write_text(table)
    return 0 if all(caught for _, caught, _ in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""benchmarks/fresh_breakdown.py runs end to end and fills every step (no speed asserted).

The script turns the opt-in timestamps on (``PTCBOX_TIMING=1``) before ptcbox is
imported, so it runs in a fresh interpreter here, as a user runs it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_step_of_the_breakdown_is_measured_on_every_side() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("PTCBOX_TIMING", None)
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fresh_breakdown.py"), "--seconds", "0.5"],
        capture_output=True, text=True, env=env, timeout=180, check=True,
    ).stdout  # fmt: skip
    rows = [line for line in out.splitlines() if line.startswith("| ") and "->" in line]
    assert len(rows) >= 30, out
    assert not [row for row in rows if "n/a" in row], out
    for side in ("t.fork -> t.forked", "w.rlimits -> w.landlock", "w.landlock -> w.seccomp",
                 "sent -> w.run_recv", "kill -> t.reaped", "t.cleaned -> exit_report"):  # fmt: skip
        assert side in out
    # a step both ends of which one process marked has its own CPU time
    assert re.search(r"w\.landlock -> w\.seccomp \| [\d,]+ \| [\d,]+ \| [\d,]+ \|", out), out
    assert re.search(r"CPU per execution \(ms\): host [\d.]+, template [\d.]+, worker", out)

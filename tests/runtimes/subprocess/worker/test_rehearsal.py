"""The rehearsals a fresh worker runs before it is handed out (``worker._main.rehearse``).

A failed rehearsal is silent by design (the worker serves all the same, it only loses
the warm-up), so these tests check that the rehearsal snippets really run to their end
under each kind of policy: every tool call answered, the output written, the value
made; the second is skipped when a real run waits. Each runs in a child process (the
rehearsal re-arms ``RLIMIT_CPU``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CHILD = """
import json, os, signal, socket, sys, tempfile
from ptcbox.runtimes.subprocess.worker._audit import AuditGate
from ptcbox.runtimes.subprocess.worker._main import rehearse
from ptcbox.sandbox import SandboxPolicy
policy = {"default": SandboxPolicy(), "trusted": SandboxPolicy.trusted()}[sys.argv[1]]
signal.signal(signal.SIGALRM, signal.SIG_IGN)  # a worker's output flusher (see _io)
pair = socket.socketpair()
waits = sys.argv[2] == "waits"
dones = rehearse(pair, AuditGate(tempfile.gettempdir()), policy, lambda: waits)
print(json.dumps({"dones": dones, "closed": [s.fileno() for s in pair]}))
"""


@pytest.mark.parametrize("policy", ["default", "trusted"])
@pytest.mark.parametrize("run", ["idle", "waits"])
def test_the_rehearsal_snippets_run_to_their_end(policy: str, run: str) -> None:
    """Both rehearsals run while no real run waits; only the first when one does."""
    child = subprocess.run(
        [sys.executable, "-c", CHILD, policy, run],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    report = json.loads(child.stdout)
    dones = report["dones"]
    assert len(dones) == (1 if run == "waits" else 2), child.stderr  # fewer: one raised
    for done in dones:
        assert (done["error"], done["error_type"], done["truncated"]) == (None, None, False)
    assert dones[0]["value"] == {"total": 4.5, "ids": [0, 1, 2]}
    if run == "idle":
        assert dones[1]["value"] == {
            "total": 6.75,
            "ids": [0, 1, 2],
            "names": ["row 1", "row 2"],
            "n": 4,
            "seen": 3,
            "r": 1.0,
        }
    assert report["closed"] == [-1, -1]  # both ends of the loopback pair are closed

"""The rehearsal a fresh worker runs before it is handed out (``worker._main.rehearse``).

A failed rehearsal is silent by design (the worker serves all the same, it only loses
the warm-up), so these tests check that the rehearsal snippet really runs to its end
under each kind of policy: every tool call answered, the output written, the value
made. Each runs in a child process (the rehearsal re-arms ``RLIMIT_CPU``).
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
done = rehearse(pair, AuditGate(tempfile.gettempdir()), policy)
print(json.dumps({"done": done, "closed": [s.fileno() for s in pair]}))
"""


@pytest.mark.parametrize("policy", ["default", "trusted"])
def test_the_rehearsal_snippet_runs_to_its_end(policy: str) -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, policy],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    report = json.loads(child.stdout)
    done = report["done"]
    assert done is not None, child.stderr  # None: the rehearsal raised
    assert (done["error"], done["error_type"], done["truncated"]) == (None, None, False)
    assert done["value"] == {
        "total": 6.75,
        "ids": [0, 1, 2],
        "names": ["row 1", "row 2"],
        "n": 4,
        "seen": 3,
        "r": 1.0,
    }
    assert report["closed"] == [-1, -1]  # both ends of the loopback pair are closed

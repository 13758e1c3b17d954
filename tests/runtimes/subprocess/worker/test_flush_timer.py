"""The worker's output flush timer (``worker._io.WorkerChannel``) once ``done`` is sent.

Output is batched and flushed by a ``SIGALRM`` timer armed at the first write; a ``done``
carries whatever is still queued. A worker that serves again (reuse mode, sessions)
disarms the timer after its ``done`` (``worker._main._serve``): left armed, it fired 2 ms
later, waking the idle worker or interrupting the next execution, once for every
execution that printed. Runs in a child process (the timer and the signal handler are
the process's): two printing runs served by a reused worker's ``_serve``.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, signal, socket, sys, tempfile, time
from ptcbox.runtimes._wire import FrameDecoder, encode_message
from ptcbox.runtimes.subprocess.worker._audit import AuditGate
from ptcbox.runtimes.subprocess.worker._io import WorkerChannel
from ptcbox.runtimes.subprocess.worker._main import _serve
from ptcbox.runtimes.subprocess.worker._reuse import Reuse
from ptcbox.sandbox import SandboxPolicy
workdir = tempfile.mkdtemp()
ours, peer = socket.socketpair()
channel = WorkerChannel(ours)
channel.start_flusher()
alarms = []
handler = signal.getsignal(signal.SIGALRM)
signal.signal(signal.SIGALRM, lambda *args: (alarms.append(1), handler(*args)))
for k in range(2):
    run = {"t": "run", "code": f"print({k})", "compiled": None, "tools": [], "globals": {},
           "session": False}
    peer.sendall(encode_message(run))
peer.shutdown(socket.SHUT_WR)
status = _serve(channel, AuditGate(workdir), SandboxPolicy(), Reuse(workdir, 10))
left, served = signal.getitimer(signal.ITIMER_REAL)[0], len(alarms)
time.sleep(0.05)
peer.setblocking(False)
frames = [payload.decode() for _, payload in FrameDecoder().feed(peer.recv(1 << 16))]
report = {"status": status, "left": left, "alarms": len(alarms) - served, "frames": frames}
print(json.dumps(report))
"""


def test_a_reused_worker_takes_no_flush_alarm_after_its_done() -> None:
    """Both runs' output arrives, each before its ``done``; no timer is left and no
    alarm comes after them (before: the last run's timer fired 2 ms later). An alarm
    during a run (one slower than 2 ms) is the flush doing its job: not counted."""
    child = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    report = json.loads(child.stdout)
    frames = report.pop("frames")
    assert report == {"status": 0, "left": 0.0, "alarms": 0}
    assert [frames[0], frames[2]] == ["0\n", "1\n"]
    dones = [json.loads(frames[1]), json.loads(frames[3])]
    assert [(d["t"], d["error"], d["reuse"]) for d in dones] == [("done", None, True)] * 2

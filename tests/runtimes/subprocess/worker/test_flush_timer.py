"""The worker's output flush timer (``worker._io.WorkerChannel``) once ``done`` is sent.

Output is batched and flushed by a ``SIGALRM`` timer armed at the first write; a ``done``
carries whatever is still queued. A worker that serves again (reuse mode, sessions)
disarms the timer after its ``done``: left armed, it fired 2 ms later, waking the idle
worker or interrupting the next execution, once for every execution that printed.
Each case runs in a child process (the timer and the signal handler are the process's).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CHILD = """
import json, signal, socket, sys, time
from ptcbox.runtimes._wire import FrameDecoder
from ptcbox.runtimes.subprocess.worker._io import WorkerChannel
ours, peer = socket.socketpair()
channel = WorkerChannel(ours)
channel.start_flusher()
alarms = []
handler = signal.getsignal(signal.SIGALRM)
signal.signal(signal.SIGALRM, lambda *args: (alarms.append(1), handler(*args)))
channel.stdout.write("printed\\n")
armed = signal.getitimer(signal.ITIMER_REAL)[0] > 0
if sys.argv[1] == "done":
    channel.send({"t": "done", "value": None, "error": None})
else:  # output still queued: the timer must stay armed to flush it
    channel.stderr.write("queued")
channel.disarm_timer()
left = signal.getitimer(signal.ITIMER_REAL)[0]
time.sleep(0.05)
peer.setblocking(False)
frames = list(FrameDecoder().feed(peer.recv(65536)))
print(json.dumps({"armed": armed, "left": left, "alarms": len(alarms),
                  "frames": [payload.decode() for _, payload in frames]}))
"""


@pytest.mark.parametrize("case", ["done", "queued"])
def test_the_flush_timer_is_disarmed_once_done_carried_the_output(case: str) -> None:
    """After ``done`` (which carried the output): no timer left, no alarm. Control:
    with output still queued, ``disarm_timer`` leaves the timer, which flushes it."""
    child = subprocess.run(
        [sys.executable, "-c", CHILD, case],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    report = json.loads(child.stdout)
    assert report["armed"]
    if case == "done":
        assert (report["left"], report["alarms"]) == (0.0, 0)
        assert report["frames"][0] == "printed\n"
        assert json.loads(report["frames"][1])["t"] == "done"
    else:
        assert report["left"] > 0 and report["alarms"] == 1
        assert report["frames"] == ["printed\n", "queued"]

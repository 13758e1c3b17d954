"""Run an attack in a child Python, so that one that hangs cannot hang the test run."""

from __future__ import annotations

import subprocess
import sys


def child_output(script: str, *args: str, timeout: float) -> str:
    """Run ``python -c script *args``; return its stdout then its stderr.

    Args:
        script: The child's program.
        args: Its ``sys.argv[1:]``.
        timeout: Seconds before the child is killed; its stdout so far is returned,
            followed by a ``child hung`` line.
    """
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        return (out.decode() if isinstance(out, bytes) else out) + "\nchild hung"
    return done.stdout + done.stderr

"""Run an attack in a child Python, so that one that hangs cannot hang the test run."""

from __future__ import annotations

import os
import subprocess
import sys

from ptcbox.sandbox._ablation import ENV_VAR


def child_output(script: str, *args: str, timeout: float, ablate: str = "") -> str:
    """Run ``python -c script *args``; return its stdout then its stderr.

    Args:
        script: The child's program.
        args: Its ``sys.argv[1:]``.
        timeout: Seconds before the child is killed; its stdout so far is returned,
            followed by a ``child hung`` line.
        ablate: Switches for the child's ``PTCBOX_TEST_ABLATE`` (a positive control: that
            guard off); empty: the child inherits this process's environment as it is.
    """
    env = None
    if ablate:
        env = {**os.environ, ENV_VAR: ablate}
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        return (out.decode() if isinstance(out, bytes) else out) + "\nchild hung"
    return done.stdout + done.stderr

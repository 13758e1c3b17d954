"""Start the template process of a SubprocessRuntime pool.

The template runs :mod:`ptcbox.runtimes.subprocess.worker._template` in a fresh,
isolated interpreter (``python -I``), in its own session, with ``/`` as its working
directory, the environment it is given and nothing inherited but one end of a
``SOCK_SEQPACKET`` control socket. Its stderr goes to a file, so the host can show why a
template failed to start.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

__all__ = ["launch_template", "start_errors"]

_BOOTSTRAP = (
    "import os, sys; fork_hooks = []; os.register_at_fork = lambda **h: fork_hooks.append(h); "
    "sys.path[:0] = [sys.argv[1]]; "
    "from ptcbox.runtimes.subprocess.worker._template import main; main(sys.argv[2:], fork_hooks)"
)
"""Runs the template; ``os.register_at_fork`` calls are recorded for it, not made: it
runs the hooks itself (see :mod:`~ptcbox.runtimes.subprocess.worker._forkhooks`)."""
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])


def launch_template(
    config_json: str, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], socket.socket, IO[bytes]]:
    """Start the template process.

    Args:
        config_json: The :class:`~ptcbox.runtimes.subprocess.worker._config.WorkerConfig`
            as JSON.
        env: The template's environment.

    Returns:
        The process, the host's end of its control socket (non-blocking) and the
        temporary file that collects its stderr (the caller closes it).
    """
    host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed on error here, else by the caller
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-c",
                _BOOTSTRAP,
                _PACKAGE_ROOT,
                str(child_end.fileno()),
                config_json,
            ],
            pass_fds=[child_end.fileno()],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
            cwd="/",
        )
    except BaseException:
        host_end.close()
        errors.close()
        raise
    finally:
        child_end.close()
    host_end.setblocking(False)
    return proc, host_end, errors


def start_errors(errors: IO[bytes]) -> str:
    """The last 4,000 bytes the template wrote to stderr, as text."""
    errors.seek(0)
    return errors.read()[-4000:].decode("utf-8", "replace")

"""Start the template process of a SubprocessRuntime pool.

The template runs :mod:`ptcbox.runtimes.subprocess.worker._template` in a fresh,
isolated interpreter (``python -I``), in its own session, with ``/`` as its working
directory, the environment it is given and nothing inherited but one end of a
``SOCK_SEQPACKET`` control socket. Its stderr goes to a file, so the host can show why a
template failed to start.

The template is kept small (:data:`TEMPLATE_PRELUDE`): every page of it is copied into
each worker's page tables at the fork and torn down at its exit, and every page a
worker writes is a copy-on-write fault. ``import ptcbox.runtimes.subprocess.worker``
would first run ``ptcbox/__init__.py``, which imports the whole public API (agents,
providers, pydantic, the ThreadRuntime: 470 modules, 28 MB of heap); the template puts
plain package objects for ``ptcbox``, ``ptcbox.runtimes`` and
``ptcbox.runtimes.subprocess`` in ``sys.modules`` first (those ``__init__`` files only
re-export names), so it loads only what the worker and the sandbox import (300 modules,
18 MB).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from ptcbox.runtimes.subprocess.worker._basedir import BASE_PREFIX, parent_dir, sweep_dead_bases

__all__ = ["TEMPLATE_PRELUDE", "adopt_base", "launch_template", "start_errors"]

TEMPLATE_PRELUDE = """\
import os, sys, types
fork_hooks = []
os.register_at_fork = lambda **hooks: fork_hooks.append(hooks)
root = sys.argv[1]
sys.path[:0] = [root]
for name in ("ptcbox", "ptcbox.runtimes", "ptcbox.runtimes.subprocess"):
    package = types.ModuleType(name)
    package.__path__ = [os.path.join(root, *name.split("."))]
    sys.modules[name] = package
"""
"""How the template's interpreter begins (``sys.argv[1]``: the directory that holds
ptcbox): ``os.register_at_fork`` calls are recorded in ``fork_hooks``, not made (the
template runs them itself, see :mod:`~ptcbox.runtimes.subprocess.worker._forkhooks`),
and the packages whose ``__init__`` would import ptcbox's public API are plain
package objects (see the module's notes). ``benchmarks/throughput.py``'s fork
reference begins the same way."""
_BOOTSTRAP = (
    TEMPLATE_PRELUDE
    + "from ptcbox.runtimes.subprocess.worker._template import main\n"
    + "main(sys.argv[2:], fork_hooks)\n"
)
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


def adopt_base(ready: dict[str, Any]) -> str | None:
    """The base directory a template reported in ``ready`` (``None``: not one of ptcbox's);
    the ones dead templates of the same user left beside it are swept."""
    base = ready.get("base")
    if not isinstance(base, str) or not os.path.basename(base).startswith(BASE_PREFIX):
        return None
    root = os.path.dirname(os.path.dirname(base))
    if os.path.dirname(base) == parent_dir(root):  # else never swept
        sweep_dead_bases(root)
    return base

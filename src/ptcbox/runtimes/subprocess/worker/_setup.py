"""Set-up of a freshly forked SubprocessRuntime worker, up to its last wall.

:func:`setup_worker` runs in the child right after the fork, in this order: its own
session and process group (``setsid``), ``PR_SET_PDEATHSIG`` (it dies with the template,
which dies with the host), ``/dev/null`` on fds 0-2 and every other inherited descriptor
closed, a private working directory, an environment built from an allowlist, an optional
empty network namespace (unless its template made one for all its workers: see
:mod:`~ptcbox.runtimes.subprocess.worker._namespaces`), the output flusher, rlimits (no
core dumps, open files, file size, processes), a Landlock ruleset
(:mod:`ptcbox.runtimes.subprocess.worker._landlock`: writes only in its directory, reads
only what Python needs, no access to other processes), a seccomp filter against process
creation, ``execve``, ``ptrace`` and other kernel interfaces (which binds even for root,
unlike ``RLIMIT_NPROC``; without Landlock it also refuses ``dir_fd``-relative paths), and
last the audit hook. The caller
(:func:`~ptcbox.runtimes.subprocess.worker._main.worker_main`) then rehearses an
execution behind these walls and serves.
"""

from __future__ import annotations

import contextlib
import decimal
import functools
import importlib
import os
import signal
import socket
import sys
import sysconfig
from collections.abc import Callable
from typing import Any

from ptcbox.runtimes.subprocess.worker import _timing as timing
from ptcbox.runtimes.subprocess.worker._audit import AuditGate, install_audit_hook, prepare_denied
from ptcbox.runtimes.subprocess.worker._config import WorkerConfig, policy_from_wire
from ptcbox.runtimes.subprocess.worker._io import WorkerChannel
from ptcbox.runtimes.subprocess.worker._landlock import (
    landlock_abi,
    read_paths,
    restrict_with,
    restrict_worker,
)
from ptcbox.runtimes.subprocess.worker._namespaces import (
    SharedNamespaces,
    check_shared_walls,
    share_namespaces,
)
from ptcbox.runtimes.subprocess.worker._privileges import drop_root, kept_capabilities
from ptcbox.runtimes.subprocess.worker._rlimits import (
    address_space_bytes,
    apply_run_limits,
    apply_worker_limits,
    set_no_new_privs,
    set_parent_death_signal,
    unshare_ipc_uts,
    unshare_network,
)
from ptcbox.runtimes.subprocess.worker._seccomp import (
    forbid_process_creation,
    prepare_filters,
    process_filter_supported,
)
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._guards import allow_instance_writes

__all__ = [
    "EXIT_SETUP_FAILED",
    "code_dirs",
    "prepare_walls",
    "prepare_worker",
    "setup_worker",
    "share_worker_namespaces",
]

EXIT_SETUP_FAILED = 71
"""Exit status of a worker whose set-up failed (reported as a crash)."""
_walls: tuple[int, tuple[str, ...]] | None = None  # (Landlock ABI, readable paths)
_prepared: tuple[WorkerConfig, SandboxPolicy, bool] | None = None  # see prepare_worker
_shared = SharedNamespaces()  # what the template made for its workers (share_worker_namespaces)
_raw_signal: Callable[[int, Any], Any] = importlib.import_module("_signal").signal
"""``signal.signal`` without its enum conversions: turning the template's ``SIGCHLD``
handler (a function) into a ``Handlers`` member fails with a ``ValueError`` inside
``enum``, ~200 us and ~65 copy-on-write faults in a fresh worker."""


@functools.cache
def code_dirs() -> tuple[str, ...]:
    """Where the worker's code comes from: the standard library, packages, ptcbox."""
    paths = sysconfig.get_paths()
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    return (paths["stdlib"], paths["purelib"], paths["platlib"], here)


def prepare_walls() -> tuple[int, tuple[str, ...]]:
    """Probe Landlock and list the readable paths once (in the template, before forking).

    Also computes, once, what every worker would compute alike: where its code lives and
    the capabilities it keeps when it gives up root (cached), the loaded modules its
    audit hook unloads, and its seccomp filters
    (built once per set of options; each worker patches in its own pid). A worker then
    only makes the system calls that wall it in.

    Returns:
        The kernel's Landlock ABI version (0: unavailable) and the paths workers may read.
    """
    global _walls
    if _walls is None:
        _walls = (landlock_abi(), read_paths())
        kept_capabilities(code_dirs())
        prepare_denied()
        if process_filter_supported():
            prepare_filters()
    return _walls


def prepare_worker(config: WorkerConfig) -> None:
    """What every worker of ``config`` would compute alike, once (in the template).

    The policy rebuilt from its wire form, and whether the template's environment is
    already the workers' (it is started with it), so a worker compares no environment.
    :func:`setup_worker` uses them for this very ``config`` object and computes them
    itself otherwise.
    """
    global _prepared
    _prepared = (config, policy_from_wire(config.policy), dict(os.environ) == config.env)


def share_worker_namespaces(config: WorkerConfig) -> SharedNamespaces:
    """In the template, after :func:`prepare_walls` and :func:`prepare_worker` (for
    ``config``): make the namespaces every worker of ``config`` will share (see
    :mod:`~ptcbox.runtimes.subprocess.worker._namespaces`); they then make none."""
    global _shared
    _shared = share_namespaces(config, prepare_walls()[0])
    return _shared


def setup_worker(
    sock: socket.socket,
    workdir: str,
    config: WorkerConfig,
    template_pid: int,
    close_inherited: Callable[[], None],
    *,
    ruleset: int = -1,
) -> tuple[WorkerChannel, AuditGate, SandboxPolicy, tuple[socket.socket, socket.socket]]:
    if _prepared is not None and _prepared[0] is config:
        _, policy, env_matches = _prepared
    else:
        policy, env_matches = policy_from_wire(config.policy), dict(os.environ) == config.env
    os.setsid()
    set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != template_pid:
        os._exit(EXIT_SETUP_FAILED)
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        _raw_signal(signum, int(signal.SIG_DFL))
    _raw_signal(signal.SIGINT, signal.default_int_handler)
    if timing.ON:
        timing.mark("signals")
    close_inherited()
    devnull = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(devnull, target)
    low = 3
    for keep in sorted({sock.fileno(), ruleset} - {-1}):
        os.closerange(low, keep)
        low = keep + 1
    os.closerange(low, 1 << 16)
    if timing.ON:
        timing.mark("close_fds")
    os.chdir(workdir)
    if not env_matches:  # the template normally runs with exactly this environment
        os.environ.clear()
        os.environ.update(config.env)
    os.environ["HOME"] = os.environ["TMPDIR"] = workdir
    if timing.ON:
        timing.mark("chdir_env")
    shared = _shared if _prepared is not None and _prepared[0] is config else SharedNamespaces()
    if not config.network and not shared.network and not off("namespaces"):
        try:
            unshare_network()
        except OSError:
            if not config.network_optional:
                raise
    if timing.ON:
        timing.mark("netns")
    if not shared.ipc_uts and not off("namespaces"):  # test-only ablation: sandbox/_ablation.py
        with contextlib.suppress(OSError):  # where the kernel allows (see README: security)
            unshare_ipc_uts()
    if timing.ON:
        timing.mark("ipc_uts")
    dropped_root = drop_root(workdir, code_dirs())
    if dropped_root and os.getppid() != template_pid:
        os._exit(EXIT_SETUP_FAILED)  # the template died while the death signal was unset
    if timing.ON:
        timing.mark("drop_root")
    sock.setblocking(True)
    channel = WorkerChannel(sock)
    sys.stdout = channel.stdout
    sys.stderr = channel.stderr
    channel.start_flusher()
    if timing.ON:
        timing.mark("channel")
    if not off("rlimits"):
        apply_worker_limits(
            max_open_files=config.max_open_files,
            max_file_bytes=config.max_file_bytes,
            max_processes=0,
        )
    set_no_new_privs()
    if timing.ON:
        timing.mark("rlimits")
    rehearsal = socket.socketpair()  # made before the walls, used behind them
    abi, readable = prepare_walls()
    landlocked = False
    if abi and not off("landlock"):
        with contextlib.suppress(OSError):  # refused: seccomp confines dir_fd instead
            _restrict(ruleset, workdir, readable, abi)
            landlocked = True
    elif ruleset >= 0:
        os.close(ruleset)
    if timing.ON:
        timing.mark("landlock")
    filtered = False
    if process_filter_supported() and not off("seccomp"):
        with contextlib.suppress(OSError):  # seccomp unavailable: the audit hook remains
            forbid_process_creation(confine_dirfd=not landlocked, network=config.network)
            filtered = True
    check_shared_walls(shared, dropped_root=dropped_root, landlocked=landlocked, filtered=filtered)
    if timing.ON:
        timing.mark("seccomp")
    if not off("rlimits"):
        apply_run_limits(
            max_memory_bytes=policy.max_memory_bytes,
            max_cpu_seconds=None,
            baseline_bytes=address_space_bytes(),
        )
    gate = AuditGate(workdir) if off("audit") else install_audit_hook(workdir)
    allow_instance_writes(decimal.Context)  # getcontext().prec = 50: the process is the run's
    if timing.ON:
        timing.mark("audit")
    return channel, gate, policy, rehearsal


def _restrict(ruleset: int, workdir: str, readable: tuple[str, ...], abi: int) -> None:
    """Landlock: with the ruleset the template made for this worker (``ruleset_for``),
    or, without one or if it is refused, with one made here."""
    if ruleset >= 0:
        try:
            restrict_with(ruleset, abi)
            return
        except OSError:
            pass
    restrict_worker(workdir, readable, abi)

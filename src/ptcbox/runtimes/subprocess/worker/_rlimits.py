"""Kernel-enforced limits and process attributes of a SubprocessRuntime worker (Linux).

Used by the worker right after it is forked, before any snippet runs:

- :func:`apply_worker_limits`: ``RLIMIT_CORE=0`` (no core dumps), ``RLIMIT_NOFILE``,
  ``RLIMIT_FSIZE`` and ``RLIMIT_NPROC`` (process creation; see
  :func:`process_limit_binds`).
- :func:`apply_run_limits`: ``RLIMIT_AS`` (``SandboxPolicy.max_memory_bytes`` on top of
  the worker's baseline address space) and ``RLIMIT_CPU`` (``max_cpu_seconds``).
- :func:`set_parent_death_signal`: ``prctl(PR_SET_PDEATHSIG)`` so the worker dies with
  the process that forked it; :func:`set_no_new_privs`.
- :func:`unshare_network`: an empty network namespace (``unshare(CLONE_NEWNET)``, with a
  user namespace when not root); :func:`unshare_ipc_uts`: private SysV IPC / POSIX
  message queue and host name namespaces.

The seccomp filter is in :mod:`ptcbox.runtimes.subprocess.worker._seccomp`.

``ctypes`` is loaded by :func:`load_libc` in the template process (host code, before
any audit hook); snippets never reach it.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import resource
import signal

__all__ = [
    "address_space_bytes",
    "apply_run_limits",
    "apply_worker_limits",
    "check_call",
    "load_libc",
    "process_limit_binds",
    "set_no_new_privs",
    "set_parent_death_signal",
    "unshare_ipc_uts",
    "unshare_network",
]

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUTS = 0x04000000

_libc: ctypes.CDLL | None = None


def load_libc() -> ctypes.CDLL:
    """Load the C library once (call in the template, before forking).

    The functions workers call are looked up here too: ``ctypes`` resolves a name on its
    first use in a process, and in a forked worker that cost ~5-10 us and a few
    copy-on-write page faults per name.

    Returns:
        The ``ctypes`` handle of the running process's C library.
    """
    global _libc
    if _libc is None:
        libc = ctypes.CDLL(None, use_errno=True)
        for name in ("prctl", "unshare", "capset"):
            getattr(libc, name)
        libc.syscall.restype = ctypes.c_long
        _libc = libc
    return _libc


def check_call(result: int, what: str) -> None:
    """Raise ``OSError`` with ``errno`` when a C call named ``what`` returned non-zero."""
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def set_parent_death_signal(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent dies.

    Args:
        sig: The signal number (default ``SIGKILL``).

    Raises:
        OSError: If ``prctl`` fails.
    """
    check_call(load_libc().prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")


def set_no_new_privs() -> None:
    """Set ``PR_SET_NO_NEW_PRIVS``: no later ``execve`` can gain privileges.

    Raises:
        OSError: If ``prctl`` fails.
    """
    check_call(load_libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def process_limit_binds() -> bool:
    """Whether ``RLIMIT_NPROC`` can stop this process from creating processes.

    The kernel exempts processes whose real user is root (``kuid 0``, even inside a user
    namespace that maps it) and processes holding ``CAP_SYS_RESOURCE`` or
    ``CAP_SYS_ADMIN``; for them the limit is set but has no effect, and the audit hook is
    the wall against process creation.

    Returns:
        ``True`` when the real user id is not 0.
    """
    return os.getuid() != 0


def apply_worker_limits(*, max_open_files: int, max_file_bytes: int, max_processes: int) -> None:
    """Apply the limits every worker gets, soft and hard (they can never be raised).

    Args:
        max_open_files: ``RLIMIT_NOFILE``: highest file descriptor number + 1.
        max_file_bytes: ``RLIMIT_FSIZE``: largest file the process may write, in bytes.
        max_processes: ``RLIMIT_NPROC``: processes (and threads) of the real user beyond
            which ``fork``/``clone`` fail with ``EAGAIN``; ``0`` forbids any new one.
            Threads the worker needs must be started before this call.

    Raises:
        OSError: If a limit cannot be set.
    """
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (max_open_files, max_open_files))
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (max_processes, max_processes))


def address_space_bytes() -> int:
    """Return the size of this process's virtual address space, in bytes."""
    with open("/proc/self/statm", "rb") as statm:
        pages = int(statm.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


def apply_run_limits(
    *, max_memory_bytes: int | None, max_cpu_seconds: float | None, baseline_bytes: int
) -> None:
    """Apply the per-execution limits of a policy.

    ``RLIMIT_AS`` is set to ``baseline_bytes + max_memory_bytes``, so the snippet may
    allocate about ``max_memory_bytes`` whatever the interpreter itself maps; an
    allocation beyond it fails (``MemoryError`` in Python). ``RLIMIT_CPU`` is set to the
    CPU time used so far plus ``max_cpu_seconds`` (rounded up to whole seconds, as the
    kernel counts them); past it the kernel sends ``SIGXCPU``, which kills the worker.
    The hard CPU limit stays unlimited so that a session can extend it for each run.

    Args:
        max_memory_bytes: Memory the snippet may allocate, in bytes; ``None`` = no limit.
        max_cpu_seconds: CPU seconds for this run; ``None`` = no limit.
        baseline_bytes: The worker's address space before the snippet, in bytes.

    Raises:
        OSError: If a limit cannot be set.
    """
    if max_memory_bytes is not None:
        limit = baseline_bytes + max_memory_bytes
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if max_cpu_seconds is not None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        used = usage.ru_utime + usage.ru_stime
        soft = math.ceil(used + max_cpu_seconds)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))


def unshare_network() -> None:
    """Move this (single-threaded) process into a new, empty network namespace.

    As root, ``unshare(CLONE_NEWNET)``; otherwise a new user namespace is created first
    (mapping the current user to itself), which needs unprivileged user namespaces.
    Only the loopback interface exists there, and it is down.

    Raises:
        OSError: If the kernel refuses (no user namespaces, seccomp, containers).
    """
    libc = load_libc()
    if os.geteuid() == 0:
        check_call(libc.unshare(_CLONE_NEWNET), "unshare(CLONE_NEWNET)")
        return
    _unshare_as_self(libc, _CLONE_NEWNET)


def unshare_ipc_uts() -> None:
    """Move this (single-threaded) process into new IPC and UTS namespaces.

    Its SysV IPC objects and POSIX message queues are then its own (gone with it, and
    invisible to the next worker), and ``sethostname`` changes only its own name. As
    root directly; otherwise with a user namespace (none is made twice: inside the one
    :func:`unshare_network` made, this process holds the capability already).

    Raises:
        OSError: If the kernel refuses (no user namespaces, seccomp, containers).
    """
    libc = load_libc()
    if libc.unshare(_CLONE_NEWIPC | _CLONE_NEWUTS) == 0:
        return
    if os.geteuid() == 0:
        check_call(-1, "unshare(CLONE_NEWIPC|CLONE_NEWUTS)")
    _unshare_as_self(libc, _CLONE_NEWIPC | _CLONE_NEWUTS)


def _unshare_as_self(libc: ctypes.CDLL, flags: int) -> None:
    """``unshare(CLONE_NEWUSER | flags)``, mapping the current user to itself."""
    uid, gid = os.geteuid(), os.getegid()
    check_call(libc.unshare(_CLONE_NEWUSER | flags), f"unshare(CLONE_NEWUSER|{flags:#x})")
    with open("/proc/self/uid_map", "w") as uid_map:
        uid_map.write(f"{uid} {uid} 1\n")
    with contextlib.suppress(FileNotFoundError), open("/proc/self/setgroups", "w") as groups:
        groups.write("deny\n")
    with open("/proc/self/gid_map", "w") as gid_map:
        gid_map.write(f"{gid} {gid} 1\n")

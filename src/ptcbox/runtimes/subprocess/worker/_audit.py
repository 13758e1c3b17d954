"""The audit hook of a SubprocessRuntime worker (PEP 578, ``sys.addaudithook``).

A second wall behind the RestrictedPython guards, for what the operating system would
otherwise allow the worker process to do. Once installed (it can never be removed) it
raises :class:`~ptcbox.errors.PolicyViolation` for:

- process creation: ``os.fork``/``forkpty``, ``os.system``, ``os.exec*``,
  ``os.posix_spawn``, ``os.spawn*``, ``subprocess.Popen``, ``pty.spawn``;
- signals to other processes (``os.kill``/``os.killpg``/``signal.pthread_kill`` of a
  process other than this one);
- networking: ``socket.connect``/``bind``/``sendto``/``sendmsg``, name resolution, and
  creating any socket that is not ``AF_UNIX`` (asyncio's self-pipe needs ``AF_UNIX``);
- ``ctypes`` (every ``ctypes.*`` event) and importing ``ctypes``, ``subprocess``,
  ``multiprocessing``, ``_posixsubprocess`` and similar modules (they are also removed
  from ``sys.modules``, so an ``import`` reaches the hook);
- writes outside the working directory: ``open`` for writing, ``os.remove``, ``rename``,
  ``mkdir``, ``chmod``, ``truncate``, ``symlink``, ... on any path that does not resolve
  inside it (symlinks resolved), or on a raw file descriptor; reads of other
  processes' ``/proc/<pid>`` entries; opening a directory outside it (the ``open`` event
  does not show ``dir_fd``, so no directory descriptor outside may exist to be one);
- ``resource.setrlimit``/``prlimit``, except while the worker itself adjusts limits
  (:meth:`AuditGate.permit_limits`).

The design follows the audit-hook sandboxing pattern described in PEP 578 ("Python
Runtime Audit Hooks"), used as defence in depth rather than as the only barrier: the
kernel walls are Landlock (:mod:`ptcbox.runtimes.subprocess.worker._landlock`) and seccomp
(:func:`ptcbox.runtimes.subprocess.worker._seccomp.forbid_process_creation`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

from ptcbox.errors import PolicyViolation

__all__ = ["DENIED_MODULES", "AuditGate", "install_audit_hook", "prepare_denied"]

DENIED_MODULES = frozenset(
    {
        "ctypes",
        "_ctypes",
        "subprocess",
        "_posixsubprocess",
        "multiprocessing",
        "_multiprocessing",
        "pty",
        "_testcapi",
        "_testinternalcapi",
        "_xxsubinterpreters",
        "_cffi_backend",
        "cffi",
    }
)
"""Modules a worker may never import (removed from ``sys.modules`` and refused)."""

_PROCESS_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.startfile",
        "subprocess.Popen",
        "pty.spawn",
    }
)
_NETWORK_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyname_ex",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
        "socket.sethostname",
    }
)
# event -> indices of the path arguments that must stay inside the working directory
_PATH_EVENTS: dict[str, tuple[int, ...]] = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.chflags": (0,),
    "os.lchflags": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "shutil.chown": (0,),
    "os.chroot": (0,),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_LIMIT_EVENTS = frozenset({"resource.setrlimit", "resource.prlimit"})


class AuditGate:
    """Handle on an installed hook, letting the worker adjust its own limits.

    Args:
        workdir: The worker's private working directory.
    """

    __slots__ = ("_limits_open", "pid", "workdir")

    def __init__(self, workdir: str) -> None:
        self.workdir = os.path.realpath(workdir)
        self.pid = os.getpid()
        self._limits_open = False

    @contextlib.contextmanager
    def permit_limits(self) -> Iterator[None]:
        """Allow ``resource.setrlimit`` inside the ``with`` block (worker code only)."""
        self._limits_open = True
        try:
            yield
        finally:
            self._limits_open = False

    def _inside(self, path: Any) -> bool:
        if isinstance(path, int):
            return False
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return real == self.workdir or real.startswith(self.workdir + os.sep)

    def _outside_directory(self, path: Any) -> bool:
        # A descriptor of a directory is a base for dir_fd=, which the "open" event
        # does not show: with none outside the working directory, a dir_fd-relative
        # path resolves inside it or is refused like any path that climbs out.
        if isinstance(path, int) or self._inside(path):
            return False
        try:
            return os.path.isdir(path)
        except (TypeError, ValueError):
            return True

    def _other_process_entry(self, path: Any) -> bool:
        if isinstance(path, int):
            return False
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return True
        parts = real.split(os.sep, 3)
        return (
            len(parts) > 2
            and parts[1] == "proc"
            and parts[2].isdigit()
            and int(parts[2]) != self.pid
        )

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        """The audit hook itself (see the module docstring for what it refuses)."""
        if event == "open":
            path, _mode, flags = args
            writing = (flags & _WRITE_FLAGS) if isinstance(flags, int) else True
            if writing and not self._inside(path):
                _refuse(f"writing to {path!r} (outside the working directory)", event)
            if not writing and self._other_process_entry(path):
                _refuse(f"reading {path!r} (another process)", event)
            if self._outside_directory(path):
                _refuse(f"opening the directory {path!r} (outside the working directory)", event)
        elif event in _PROCESS_EVENTS:
            _refuse("creating a process", event)
        elif event in _NETWORK_EVENTS:
            _refuse("network access", event)
        elif event == "socket.__new__":
            if args[1] != socket.AF_UNIX:
                _refuse("creating a network socket", event)
        elif event == "import":
            name = args[0]
            if isinstance(name, str) and name.partition(".")[0] in DENIED_MODULES:
                _refuse(f"importing {name}", event)
        elif event.startswith("ctypes."):
            _refuse("ctypes", event)
        elif event in _PATH_EVENTS:
            for index in _PATH_EVENTS[event]:
                if index < len(args) and not self._inside(args[index]):
                    _refuse(f"changing {args[index]!r} (outside the working directory)", event)
        elif event in ("os.kill", "os.killpg", "signal.pthread_kill"):
            if event != "signal.pthread_kill" and args[0] not in (self.pid, 0):
                _refuse("signalling another process", event)
        elif event in _LIMIT_EVENTS and not self._limits_open:
            _refuse("changing resource limits", event)


def _refuse(what: str, event: str) -> None:
    raise PolicyViolation(f"{what} is not allowed in the sandbox (audit event {event!r})")


_prepared: tuple[int, tuple[str, ...]] | None = None


def prepare_denied() -> None:
    """List the loaded modules :func:`install_audit_hook` removes (the template, before
    it forks). Workers inherit ``sys.modules``; walking all of it in each worker touches
    every module name's page (copy-on-write faults), so a worker whose ``sys.modules``
    has the size the template saw removes the listed names only (set-up only adds
    modules: the same size is the same set)."""
    global _prepared
    names = tuple(name for name in sys.modules if name.partition(".")[0] in DENIED_MODULES)
    _prepared = (len(sys.modules), names)


def install_audit_hook(workdir: str) -> AuditGate:
    """Install the worker's audit hook for good.

    Also removes :data:`DENIED_MODULES` (and their submodules) from ``sys.modules`` so
    that importing them again reaches the hook.

    Args:
        workdir: The only directory the process may write to.

    Returns:
        The :class:`AuditGate` the worker uses to adjust its own limits.
    """
    prepared = _prepared
    listed = prepared is not None and prepared[0] == len(sys.modules)
    if listed and prepared is not None:  # nothing was imported since the template listed them
        for name in prepared[1]:
            sys.modules.pop(name, None)
    if not listed or any(name in sys.modules for name in DENIED_MODULES):
        for name in list(sys.modules):
            if name.partition(".")[0] in DENIED_MODULES:
                del sys.modules[name]
    gate = AuditGate(workdir)
    sys.addaudithook(gate.hook)
    return gate

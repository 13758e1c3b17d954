"""A kernel filesystem, ptrace and signal wall for SubprocessRuntime workers (Landlock).

Landlock (Linux >= 5.13, ``Documentation/userspace-api/landlock.rst``) lets an
unprivileged process restrict itself for good, root included, whatever path or
descriptor trick it later tries (``dir_fd``, ``openat2``, symlinks, ``..``). A worker,
right after its set-up, restricts itself to:

- read and write (every filesystem right) beneath its private working directory;
- read beneath the interpreter's import path, the shared-library directories and a
  few files the C library and Python read (``/dev/null``, ``/dev/urandom``, time zones,
  ``/proc/self``, the CPU list in ``/sys``); nothing else of the host's files, and no
  other process's ``/proc/<pid>`` entry;
- no ``ptrace``-mode access to any process outside its domain: other processes'
  ``/proc/<pid>/mem``/``environ``, ``process_vm_readv``/``writev`` and ``ptrace`` fail
  (Landlock's ptrace restriction, since ABI 1);
- no TCP ``bind``/``connect`` (ABI 4), and no signals to, or abstract Unix sockets of,
  processes outside its domain (ABI 6), each where the kernel supports it.

:func:`read_paths` is computed once in the template. :func:`restrict_worker` builds
and applies a ruleset (a few dozen system calls); a template instead holds the readable
paths open (:func:`hold_read_rules`) and builds each worker's own ruleset before the
fork (:func:`ruleset_for`), which the worker applies (:func:`restrict_with`).
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct
import sys

from ptcbox.runtimes.subprocess.worker._rlimits import load_libc

__all__ = [
    "hold_read_rules",
    "landlock_abi",
    "read_paths",
    "restrict_with",
    "restrict_worker",
    "ruleset_for",
]

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # same on x86-64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_NET_TCP = (1 << 0) | (1 << 1)  # bind, connect
_SCOPES = (1 << 0) | (1 << 1)  # abstract Unix sockets, signals

_held: list[bytes] | None = None  # hold_read_rules: rules on O_PATH fds the template holds

_LIBRARY_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib")
_READ_FILES = (
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/usr/share/zoneinfo",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
    "/sys/devices/system/cpu",
)


def _syscall(*args: object) -> int:
    result = int(load_libc().syscall(*args))  # restype c_long: set by load_libc
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"landlock: {os.strerror(errno)}")
    return result


def landlock_abi() -> int:
    """The Landlock ABI version of the running kernel; 0 when Landlock is unavailable."""
    try:
        return _syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    except OSError:
        return 0


def read_paths() -> tuple[str, ...]:
    """The existing paths a worker may read: import path, libraries, a few system files.

    Call in the template (it does ``stat`` calls); the root directory is never included.
    """
    candidates = [
        *sys.path,
        os.path.join(sys.base_prefix, "lib"),
        os.path.join(sys.base_exec_prefix, "lib"),
        *_LIBRARY_DIRS,
        *_READ_FILES,
    ]
    out: list[str] = []
    for path in candidates:
        if not path:
            continue
        real = os.path.realpath(path)
        if real != os.sep and real not in out and os.path.exists(real):
            out.append(real)
    return tuple(out)


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: execute ... make_sym
    if abi >= 2:
        rights |= 1 << 13  # refer
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def restrict_worker(workdir: str, readable: tuple[str, ...], abi: int) -> None:
    """Restrict this process (and its future threads) for good; see the module docstring.

    Must run single-threaded, after ``PR_SET_NO_NEW_PRIVS``.

    Args:
        workdir: The only directory the process may change anything in.
        readable: Paths it may read (from :func:`read_paths`), plus ``/proc/self`` and
            ``/dev/null``, which are added here.
        abi: :func:`landlock_abi` of this kernel (at least 1).

    Raises:
        OSError: If the kernel refuses (Landlock unavailable or disabled).
    """
    ruleset = _new_ruleset(abi)
    try:
        handled, read_dir = _fs_rights(abi), _EXECUTE | _READ_FILE | _READ_DIR
        rules = [(workdir, handled), (os.devnull, handled), ("/proc/self", read_dir)]
        for path, rights in [*rules, *((path, read_dir) for path in readable)]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                _add_rule(ruleset, fd, rights, handled)
            finally:
                os.close(fd)
        _syscall(_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)


def hold_read_rules(readable: tuple[str, ...], abi: int) -> None:
    """In the template, once: open the paths every worker may read (``O_PATH``, held
    while the template lives) for :func:`ruleset_for`."""
    global _held
    if _held is not None:
        return
    handled, read_dir = _fs_rights(abi), _EXECUTE | _READ_FILE | _READ_DIR
    held: list[bytes] = []
    for path, rights in [(os.devnull, handled), *((path, read_dir) for path in readable)]:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        held.append(_rule(fd, rights, handled))
    _held = held


def ruleset_for(workdir: str, abi: int) -> int:
    """In the template, before forking one worker: a new ruleset of its own with the
    rules of :func:`restrict_worker` but ``/proc/self`` (the worker's own entry, which
    :func:`restrict_with` adds). The worker then makes 3 system calls instead of ~80,
    and its set-up touches none of the objects (copy-on-write faults) they need.

    The ruleset is that worker's alone: the template closes its descriptor right after
    the fork and never changes it, so no rule reaches another worker.

    Returns:
        The ruleset's descriptor, or -1 (not prepared: the worker calls
        :func:`restrict_worker` itself).
    """
    if not _held or not abi:
        return -1
    try:
        ruleset = _new_ruleset(abi)
    except OSError:
        return -1
    handled = _fs_rights(abi)
    try:
        fd = os.open(workdir, os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY)
        try:
            _add_rule(ruleset, fd, handled, handled)
        finally:
            os.close(fd)
        for rule in _held:
            _syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0)
    except OSError:
        os.close(ruleset)
        return -1
    return ruleset


def restrict_with(ruleset: int, abi: int) -> None:
    """In the worker: add its ``/proc/self`` to the ruleset :func:`ruleset_for` made for
    it, restrict itself with it for good and close it. Must run single-threaded, after
    ``PR_SET_NO_NEW_PRIVS``.

    Raises:
        OSError: If the kernel refuses.
    """
    try:
        fd = os.open("/proc/self", os.O_PATH | os.O_CLOEXEC)
        try:
            _add_rule(ruleset, fd, _EXECUTE | _READ_FILE | _READ_DIR, _fs_rights(abi))
        finally:
            os.close(fd)
        _syscall(_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)


def _new_ruleset(abi: int) -> int:
    handled = _fs_rights(abi)
    if abi >= 6:
        attr = struct.pack("=QQQ", handled, _NET_TCP, _SCOPES)
    elif abi >= 4:
        attr = struct.pack("=QQ", handled, _NET_TCP)
    else:
        attr = struct.pack("=Q", handled)
    return _syscall(_CREATE_RULESET, attr, len(attr), 0)


def _rule(fd: int, rights: int, handled: int) -> bytes:
    """A ``landlock_path_beneath_attr``: ``rights`` beneath ``fd`` (file rights only
    when ``fd`` is not a directory)."""
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        rights &= _FILE_RIGHTS
    return struct.pack("=Qi", rights & handled, fd)


def _add_rule(ruleset: int, fd: int, rights: int, handled: int) -> None:
    _syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, _rule(fd, rights, handled), 0)

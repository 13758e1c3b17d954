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

:func:`read_paths` is computed once in the template; :func:`restrict_worker` costs a
few dozen system calls per worker.
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct
import sys

from ptcbox.runtimes.subprocess.worker._rlimits import load_libc

__all__ = ["landlock_abi", "read_paths", "restrict_worker"]

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # same on x86-64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_NET_TCP = (1 << 0) | (1 << 1)  # bind, connect
_SCOPES = (1 << 0) | (1 << 1)  # abstract Unix sockets, signals

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
    handled = _fs_rights(abi)
    if abi >= 6:
        attr = struct.pack("=QQQ", handled, _NET_TCP, _SCOPES)
    elif abi >= 4:
        attr = struct.pack("=QQ", handled, _NET_TCP)
    else:
        attr = struct.pack("=Q", handled)
    ruleset = _syscall(_CREATE_RULESET, attr, len(attr), 0)
    try:
        read_dir = _EXECUTE | _READ_FILE | _READ_DIR
        rules = [(workdir, handled), ("/proc/self", read_dir), (os.devnull, handled)]
        rules.extend((path, read_dir) for path in readable)
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    rights &= _FILE_RIGHTS  # noqa: PLW2901 - a file takes file rights only
                rule = struct.pack("=Qi", rights & handled, fd)
                _syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0)
            finally:
                os.close(fd)
        _syscall(_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)

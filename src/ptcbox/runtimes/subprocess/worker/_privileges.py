"""A worker started as root gives up root (Linux): :func:`drop_root`.

The worker switches to user and group :data:`UNPRIVILEGED_ID` (65534, ``nobody``), with
no supplementary groups, an empty bounding set, no ambient capabilities and no
capabilities at all, except ``CAP_DAC_READ_SEARCH`` when the Python installation or
ptcbox cannot be read by that user (e.g. a Python under ``/root``, mode 0700): then the
worker keeps only that one, in its effective and permitted sets, so imports work; it can
read (not write) files the Landlock ruleset allows it to read (any file without
Landlock, as root could). The working directory is handed to that user first. Not
done as a non-root user (the worker is as unprivileged as its user) or inside a user
namespace made by the worker itself.

``setuid`` clears the parent-death signal; it is set again here.

The bounding set is inherited through ``fork``: a template running as root empties it
once (:func:`drop_bounding_set`, all but what workers keep), and its workers then skip
those ~40 ``prctl`` calls. The template never runs ``execve``, the only thing the
bounding set limits besides ``capset``'s inheritable set, so it loses nothing it uses.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import stat

from ptcbox.runtimes.subprocess.worker._rlimits import (
    check_call,
    load_libc,
    set_parent_death_signal,
)

__all__ = [
    "UNPRIVILEGED_ID",
    "drop_bounding_set",
    "drop_root",
    "kept_capabilities",
    "readable_by_others",
]

UNPRIVILEGED_ID = 65534
"""The user and group id a worker started as root runs as (``nobody``/``nogroup``)."""

_PR_SET_KEEPCAPS = 8
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_DAC_READ_SEARCH = 2
_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def readable_by_others(path: str) -> bool:
    """Whether a user with no relation to ``path``'s owners can read it (mode bits)."""
    path = os.path.abspath(path)
    parts = path.split(os.sep)
    for index in range(1, len(parts)):
        directory = os.sep.join(parts[:index]) or os.sep
        try:
            mode = os.stat(directory).st_mode
        except OSError:
            return False
        if not mode & stat.S_IXOTH:
            return False
    try:
        return bool(os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return False


@functools.cache
def kept_capabilities(needed: tuple[str, ...]) -> int:
    """The capability mask a worker that gives up root keeps for ``needed`` (see the module
    docstring), from the paths' mode bits. Cached: the template computes it once before
    it forks (as it lists Landlock's readable paths), so workers do not stat the paths."""
    return 0 if all(map(readable_by_others, needed)) else 1 << _CAP_DAC_READ_SEARCH


@functools.cache
def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", "rb") as last:
            return int(last.read())
    except (OSError, ValueError):
        return 40


_bounding_kept: int | None = None
"""The capabilities this process's bounding set was reduced to by :func:`drop_bounding_set`."""


def _is_root() -> bool:
    return os.geteuid() == 0 and os.getuid() == 0


def _drop_bounding(keep: int) -> None:
    libc = load_libc()
    for cap in range(_last_capability() + 1):
        if not keep >> cap & 1:
            check_call(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "PR_CAPBSET_DROP")


def drop_bounding_set(needed: tuple[str, ...]) -> bool:
    """In the template, as root: reduce the bounding set to what workers keep, once.

    Args:
        needed: As for :func:`drop_root`.

    Returns:
        ``True`` when done (its workers then skip that step); ``False`` when not root
        or the kernel refused (its workers drop the capabilities themselves).
    """
    global _bounding_kept
    if not _is_root():
        return False
    keep = kept_capabilities(needed)
    try:
        _drop_bounding(keep)
    except OSError:
        return False
    _bounding_kept = keep
    return True


def drop_root(workdir: str, needed: tuple[str, ...]) -> bool:
    """Give up root (see the module docstring); nothing when not root.

    Args:
        workdir: The worker's working directory (handed to :data:`UNPRIVILEGED_ID`).
        needed: Directories the worker reads code from (the standard library, ptcbox):
            when one is not readable by others, ``CAP_DAC_READ_SEARCH`` is kept.

    Returns:
        ``True`` when root was given up.

    Raises:
        OSError: If a step fails (the worker must not run then).
    """
    if not _is_root():
        return False
    libc = load_libc()
    keep = kept_capabilities(needed)
    os.chown(workdir, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
    check_call(libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient")
    if _bounding_kept != keep:  # not done by the template before the fork
        _drop_bounding(keep)
    check_call(libc.prctl(_PR_SET_KEEPCAPS, 1 if keep else 0, 0, 0, 0), "PR_SET_KEEPCAPS")
    os.setgroups([])
    os.setresgid(UNPRIVILEGED_ID, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
    os.setresuid(UNPRIVILEGED_ID, UNPRIVILEGED_ID, UNPRIVILEGED_ID)
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)(_CapData(keep, keep, 0), _CapData(0, 0, 0))
    check_call(libc.capset(ctypes.byref(header), data), "capset")
    check_call(libc.prctl(_PR_SET_KEEPCAPS, 0, 0, 0, 0), "PR_SET_KEEPCAPS")
    set_parent_death_signal(signal.SIGKILL)
    return True

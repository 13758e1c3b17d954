"""Where templates keep their directories, and how dead templates' leftovers are removed.

Every template makes one *base directory* for its workers' working directories. The
base directories live in a per-user *parent directory* of ptcbox's own,
``<tmp>/ptcbox_u<euid>.d`` (not ``ptcbox-*``: the sweep of ptcbox versions before
this one removed every unlocked ``ptcbox-*`` directory of the temporary directory,
and would remove this one with the live base directories in it), and only directories
that ptcbox provably made are ever removed (:func:`sweep_dead_bases`). The proof of
ownership, checked without following a symbolic link anywhere (``O_NOFOLLOW``,
``dir_fd``-relative calls, ``lstat``/``fstat``):

- the parent is a real directory (not a symlink), owned by this user, mode exactly
  ``0711`` (or ``0700``: others may pass through to a worker's own directory, never
  list or write), holding the file :data:`PARENT_MARKER` whose content names the parent's own
  device and inode number (written by ptcbox right after it made the directory);
- a base directory is a real directory directly inside that parent, named
  ``ptcbox-*``, owned by this user, holding the file :data:`BASE_MARKER` that names
  *its own* device and inode number, older than a minute, and not ``flock``-ed (a living
  template holds its lock until it exits).

A directory a user makes (``ptcbox-my-project/``, a copy of a real base directory, a
directory with a hand-written marker file that names another inode) fails the proof and
is kept. Only a deliberate forgery (a marker naming the directory's own inode, which
needs ``stat`` and intent) passes; the marker names nothing a user makes by accident.
When the parent fails its proof (a look-alike or a symlink in its place, another
owner, another mode), ptcbox uses nothing in it: the base directory is made directly in
the temporary directory (``mkdtemp``) and never swept, only removed by the template and
the host that made it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
import time

__all__ = [
    "BASE_MARKER",
    "BASE_PREFIX",
    "PARENT_MARKER",
    "make_base",
    "parent_dir",
    "sweep_dead_bases",
]

BASE_PREFIX = "ptcbox-"
"""Prefix of a template's base directory."""
PARENT_MARKER = ".ptcbox-parent"
"""File in the per-user parent directory that proves ptcbox made it."""
BASE_MARKER = ".ptcbox-base"
"""File in a base directory that proves ptcbox made it."""
_SWEEP_AGE_S = 60.0  # a base directory younger than this may not be locked yet
_MARKER_MAX = 200
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def parent_dir(root: str | None = None) -> str:
    """The path of this user's parent directory under ``root`` (default: the tmp dir)."""
    return os.path.join(root or tempfile.gettempdir(), f"ptcbox_u{os.geteuid()}.d")


def _marker_text(kind: str, info: os.stat_result) -> bytes:
    return f"ptcbox {kind} directory v1 dev={info.st_dev} ino={info.st_ino}\n".encode()


def _write_marker(dir_fd: int, name: str, kind: str) -> None:
    fd = os.open(
        name,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
        dir_fd=dir_fd,
    )
    try:
        os.write(fd, _marker_text(kind, os.fstat(dir_fd)))
    finally:
        os.close(fd)


def _has_marker(dir_fd: int, name: str, kind: str) -> bool:
    """Whether ``dir_fd`` holds a regular file ``name`` naming ``dir_fd``'s own inode."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            return False
        return os.read(fd, _MARKER_MAX) == _marker_text(kind, os.fstat(dir_fd))
    finally:
        os.close(fd)


def _open_parent(path: str, *, create: bool) -> int | None:
    """An open descriptor of a parent that passes the proof (made now if ``create``)."""
    made = False
    if create:
        try:
            os.mkdir(path, 0o700)
            made = True
        except FileExistsError:
            pass
        except OSError:
            return None
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            raise OSError("another user's directory")
        if made:
            os.fchmod(fd, 0o711)  # whatever the umask did
            _write_marker(fd, PARENT_MARKER, "parent")
            info = os.fstat(fd)
        mode = stat.S_IMODE(info.st_mode)
        if mode not in (0o700, 0o711) or not _has_marker(fd, PARENT_MARKER, "parent"):
            raise OSError("not a ptcbox parent directory")
    except OSError:
        os.close(fd)
        return None
    return fd


def make_base(root: str | None = None) -> str:
    """Make a template's base directory (with its marker) and return its path.

    In this user's parent directory (made if missing) when that passes the proof of
    ownership, else directly in ``root`` (never swept then).

    Args:
        root: The temporary directory; ``None`` for :func:`tempfile.gettempdir`.
    """
    parent = parent_dir(root)
    parent_fd = _open_parent(parent, create=True)
    if parent_fd is None:
        return tempfile.mkdtemp(prefix=BASE_PREFIX, dir=root)
    try:
        base = tempfile.mkdtemp(prefix=BASE_PREFIX, dir=parent)
        fd = os.open(os.path.basename(base), _DIR_FLAGS, dir_fd=parent_fd)
        try:
            os.fchmod(fd, 0o711)  # a worker that gave up root passes through to its own
            _write_marker(fd, BASE_MARKER, "base")
        finally:
            os.close(fd)
        return base
    finally:
        os.close(parent_fd)


def sweep_dead_bases(root: str | None = None) -> list[str]:
    """Remove the base directories that dead templates of this user left behind.

    Only directories that pass the proof of ownership (see the module docstring),
    are older than a minute and whose ``flock`` can be taken (their template is dead)
    are removed, each while its lock is held, with ``shutil.rmtree(dir_fd=...)``
    (which never follows a symlink).

    Args:
        root: The temporary directory; ``None`` for :func:`tempfile.gettempdir`.

    Returns:
        The paths removed.
    """
    parent = parent_dir(root)
    parent_fd = _open_parent(parent, create=False)
    if parent_fd is None:
        return []
    removed: list[str] = []
    try:
        with os.scandir(parent_fd) as entries:
            names = [e.name for e in entries if e.name.startswith(BASE_PREFIX)]
        for name in names:
            if _remove_if_dead(parent_fd, name):
                removed.append(os.path.join(parent, name))
    except OSError:
        pass
    finally:
        os.close(parent_fd)
    return removed


def _remove_if_dead(parent_fd: int, name: str) -> bool:
    try:
        info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            return False
        if time.time() - info.st_mtime < _SWEEP_AGE_S:
            return False
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError:
        return False
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            return False  # swapped between the two looks
        if not _has_marker(fd, BASE_MARKER, "base"):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a living template holds it
        shutil.rmtree(name, ignore_errors=True, dir_fd=parent_fd)
        return True
    finally:
        os.close(fd)

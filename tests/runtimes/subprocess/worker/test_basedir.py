"""Base directories: only what ptcbox provably made is ever removed (issue 13, data loss)."""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from pathlib import Path

import pytest

from ptcbox import SubprocessRuntime
from ptcbox.runtimes.subprocess.worker._basedir import (
    BASE_MARKER,
    PARENT_MARKER,
    make_base,
    parent_dir,
    sweep_dead_bases,
)

OLD = time.time() - 3600


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _age(path: str | Path) -> None:
    os.utime(path, (OLD, OLD), follow_symlinks=False)


def _user_dir(path: Path) -> Path:
    """A user's own directory with content, an hour old."""
    (path / "src").mkdir(parents=True)
    (path / "src" / "notes.txt").write_text("mine")
    _age(path)
    return path


def test_a_real_dead_base_is_removed_and_a_locked_one_kept(tmp_path: Path) -> None:
    """Positive control: what ptcbox made and no template holds goes."""
    dead = make_base(str(tmp_path))
    (Path(dead) / "w-1").mkdir()
    live = make_base(str(tmp_path))
    assert os.path.dirname(dead) == parent_dir(str(tmp_path))
    fd = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        _age(dead)
        _age(live)
        assert sweep_dead_bases(str(tmp_path)) == [dead]
        assert not os.path.exists(dead) and os.path.isdir(live)
    finally:
        os.close(fd)
    assert os.stat(parent_dir(str(tmp_path))).st_mode & 0o777 == 0o711


def test_a_young_base_is_kept(tmp_path: Path) -> None:
    base = make_base(str(tmp_path))
    assert sweep_dead_bases(str(tmp_path)) == []
    assert os.path.isdir(base)


def test_look_alikes_inside_the_parent_are_kept(tmp_path: Path) -> None:
    """A user's ``ptcbox-*`` directory, a copy of a real base directory (its marker names
    another inode) and a symlink to a user directory: none is removed."""
    root = str(tmp_path)
    real = make_base(root)
    parent = Path(parent_dir(root))
    mine = _user_dir(parent / "ptcbox-my-project")
    copy = parent / "ptcbox-copy"
    shutil.copytree(real, copy)  # the marker file, but about another directory
    assert (copy / BASE_MARKER).exists()
    _age(copy)
    target = _user_dir(tmp_path / "elsewhere")
    (target / BASE_MARKER).write_bytes((Path(real) / BASE_MARKER).read_bytes())
    link = parent / "ptcbox-link"
    link.symlink_to(target)
    _age(link)
    assert sweep_dead_bases(root) == []
    assert (mine / "src" / "notes.txt").read_text() == "mine"
    assert (copy / BASE_MARKER).exists()
    assert (target / "src" / "notes.txt").exists() and link.is_symlink()


def test_a_look_alike_parent_is_never_used(tmp_path: Path) -> None:
    """A parent ptcbox did not make (no marker, a copied marker, wrong mode, a symlink
    to a user directory): nothing in it is removed, and new base directories go
    directly into the temporary directory instead."""
    root = str(tmp_path)
    parent = Path(parent_dir(root))
    for variant in ("no-marker", "copied-marker", "mode-0755", "symlink"):
        shutil.rmtree(tmp_path, ignore_errors=True)
        tmp_path.mkdir()
        other = tmp_path / "other-root"
        other.mkdir()
        genuine = Path(make_base(str(other)))  # a real base, to copy the marker from
        if variant == "symlink":
            target = tmp_path / "my-dir"
            shutil.copytree(genuine.parent, target)
            parent.symlink_to(target)
        else:
            shutil.copytree(genuine.parent, parent)
            if variant == "no-marker":
                (parent / PARENT_MARKER).unlink()
            if variant == "mode-0755":
                parent.chmod(0o755)  # with a marker that names this very directory
                info = parent.stat()
                proof = f"ptcbox parent directory v1 dev={info.st_dev} ino={info.st_ino}\n"
                (parent / PARENT_MARKER).write_text(proof)
        inside = _user_dir(parent / "ptcbox-data")
        for item in parent.iterdir():
            _age(item)
        assert sweep_dead_bases(root) == [], variant
        assert (inside / "src" / "notes.txt").exists(), variant
        fallback = make_base(root)
        assert os.path.dirname(fallback) == root, variant
        assert os.path.basename(fallback).startswith("ptcbox-"), variant
        _age(fallback)
        assert sweep_dead_bases(root) == [], variant  # never swept


def test_a_parent_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to make a directory of another user")
    root = str(tmp_path)
    good = Path(make_base(root)).parent
    base = Path(make_base(root))
    _age(base)
    os.chown(good, 65534, 65534)
    assert sweep_dead_bases(root) == []
    assert base.is_dir()
    assert os.path.dirname(make_base(root)) == root


@pytest.mark.anyio
async def test_a_runtime_keeps_a_users_ptcbox_directory_in_the_temp_dir(tmp_path: Path) -> None:
    """The reported data loss: ``ptcbox-my-project/`` in the temporary directory, an hour
    old and unlocked, survived nothing that started a SubprocessRuntime. (A private
    temporary directory: other ptcbox versions on this machine sweep ``/tmp``.)"""
    mine = _user_dir(tmp_path / "ptcbox-my-project")
    link = tmp_path / "ptcbox-link"
    link.symlink_to(_user_dir(tmp_path / "work"))
    _age(link)
    async with SubprocessRuntime(env={"TMPDIR": str(tmp_path)}) as runtime:
        assert (await runtime.execute("print(1)", {})).stdout == "1\n"
        base = runtime._pool._base
        assert base is not None and os.path.dirname(base) == parent_dir(str(tmp_path))
    assert (mine / "src" / "notes.txt").read_text() == "mine"
    assert link.is_symlink() and (tmp_path / "work" / "src" / "notes.txt").exists()

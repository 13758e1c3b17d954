"""SubprocessRuntime's kernel walls against other processes and the host's files (F5),
each tested on its own in a fresh interpreter (Landlock, seccomp, the audit hook), then
together through the runtime with trusted code (no sandbox guards, real ``os``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.runtimes.subprocess.worker._landlock import landlock_abi
from ptcbox.runtimes.subprocess.worker._seccomp import process_filter_supported
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio

TOOLS = {"add": DirectProjection("add", lambda a, b: a + b)}
# what the attempts below print, one per line: "<name> ALLOWED" or "<name> refused"
ATTEMPTS = """
import ctypes, os, signal
PARENT = {target!r}  # a helper process the test started: never pytest (a wall that is off
                     # would leave the process traced or stopped, and the run would hang)
OUTSIDE = {outside!r}
def attempt(name, action):
    try:
        action()
    except (OSError, Exception) as exc:
        print(name, "refused", type(exc).__name__)
    else:
        print(name, "ALLOWED")
def raw(*args):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(*args) < 0:
        raise OSError(ctypes.get_errno(), "refused")
def via_dir_fd(directory, name, flags):
    base = os.open(directory, os.O_RDONLY)
    os.close(os.open(name, flags, 0o600, dir_fd=base))
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def target() -> Iterator[int]:
    """The pid of a helper process the probes aim at (ptrace, signals, its /proc files)."""
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        yield helper.pid
    finally:
        helper.kill()
        helper.wait(timeout=30)


def _run_alone(script: str, outside: Path, target: int) -> dict[str, str]:
    """Run ``script`` (after :data:`ATTEMPTS`) in a fresh interpreter; its verdicts.

    The probes aim at ``target`` (a helper process), never at this process."""
    source = textwrap.dedent(ATTEMPTS.format(outside=str(outside), target=target))
    source += textwrap.dedent(script)
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    verdicts = {}
    for line in done.stdout.splitlines():
        name, verdict, *_ = line.split()
        verdicts[name] = verdict
    return verdicts


@pytest.mark.skipif(landlock_abi() == 0, reason="Landlock is not available on this kernel")
def test_F5_landlock_wall_alone(tmp_path: Path, target: int) -> None:
    """F5 at the kernel level: with only Landlock (no audit hook, no seccomp), a
    directory descriptor does not reach the parent's /proc entries or files outside the
    working directory, while what Python needs keeps working."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    verdicts = _run_alone(
        f"""
        from ptcbox.runtimes.subprocess.worker._landlock import (
            landlock_abi, read_paths, restrict_worker
        )
        from ptcbox.runtimes.subprocess.worker._rlimits import set_no_new_privs
        abi = landlock_abi()
        os.chdir({str(work)!r})
        set_no_new_privs()
        restrict_worker({str(work)!r}, read_paths(), abi)
        attempt("environ", lambda: via_dir_fd("/proc", f"{{PARENT}}/environ", os.O_RDONLY))
        attempt("mem", lambda: via_dir_fd("/proc", f"{{PARENT}}/mem", os.O_RDWR))
        attempt("mem_direct", lambda: os.open(f"/proc/{{PARENT}}/mem", os.O_RDWR))
        attempt("write_dir_fd", lambda: via_dir_fd(OUTSIDE, "x", os.O_WRONLY | os.O_CREAT))
        attempt("write_outside", lambda: open(os.path.join(OUTSIDE, "y"), "w").close())
        attempt("read_host_file", lambda: open("/etc/passwd").read())
        attempt("ptrace", lambda: raw(101 if os.uname().machine == "x86_64" else 117,
                                      16, PARENT, 0, 0))
        if abi >= 6:
            attempt("signal_parent", lambda: os.kill(PARENT, 0))
        attempt("workdir", lambda: via_dir_fd(".", "ok", os.O_WRONLY | os.O_CREAT))
        attempt("self_proc", lambda: open("/proc/self/status").read())
        attempt("stdlib_import", lambda: __import__("_decimal") and __import__("zoneinfo"))
        attempt("devnull", lambda: open(os.devnull, "w").write("x"))
        """,
        outside,
        target,
    )
    allowed = {"workdir", "self_proc", "stdlib_import", "devnull"}
    for name, verdict in verdicts.items():
        assert verdict == ("ALLOWED" if name in allowed else "refused"), (name, verdicts)
    assert not list(outside.iterdir())
    assert (work / "ok").exists()


_SECCOMP_PROBES = """
attempt("ptrace", lambda: raw({ptrace}, 16, PARENT, 0, 0))
attempt("vm_readv", lambda: raw({vm_readv}, PARENT, 0, 0, 0, 0, 0))
attempt("unshare", lambda: raw({unshare}, 0x20000))
attempt("signal_parent", lambda: os.kill(PARENT, 0))
attempt("signal_all", lambda: os.kill(-1, 0))
attempt("no_death_signal", lambda: raw({prctl}, 1, 0, 0, 0, 0))
attempt("dir_fd", lambda: via_dir_fd(OUTSIDE, "x", os.O_WRONLY | os.O_CREAT))
attempt("signal_self", lambda: os.kill(os.getpid(), 0))
attempt("relative_open", lambda: open("rel", "w").close())
attempt("listdir", lambda: os.listdir("."))
"""
_SYSCALLS = dict(
    zip(
        ("ptrace", "vm_readv", "unshare", "prctl"),
        (101, 310, 272, 157) if os.uname().machine == "x86_64" else (117, 270, 97, 167),
        strict=True,
    )
)


@pytest.mark.skipif(os.geteuid() != 0, reason="the control needs root (ptrace, unshare)")
def test_F5_the_probes_succeed_without_any_wall(tmp_path: Path, target: int) -> None:
    """The positive control of the walls-alone tests: with no wall, every probe works."""
    script = f"os.chdir({str(tmp_path)!r})\n" + _SECCOMP_PROBES.format(**_SYSCALLS)
    verdicts = _run_alone(script, tmp_path, target)
    assert set(verdicts.values()) == {"ALLOWED"}, verdicts
    assert len(verdicts) == 10


@pytest.mark.skipif(not process_filter_supported(), reason="no seccomp filter for this CPU")
@pytest.mark.parametrize("confine_dirfd", [False, True])
def test_F5_seccomp_wall_alone(tmp_path: Path, confine_dirfd: bool, target: int) -> None:
    """Without Landlock or the audit hook: seccomp refuses ptrace, process_vm_readv,
    namespaces, signals to other processes and weakening prctl options; with
    ``confine_dirfd`` (the fallback without Landlock) every dir_fd-relative path too."""
    verdicts = _run_alone(
        "from ptcbox.runtimes.subprocess.worker._seccomp import forbid_process_creation\n"
        f"os.chdir({str(tmp_path)!r})\n"
        f"forbid_process_creation(confine_dirfd={confine_dirfd})\n"
        + _SECCOMP_PROBES.format(**_SYSCALLS),
        tmp_path,
        target,
    )
    allowed = {"signal_self", "relative_open", "listdir"} | (set() if confine_dirfd else {"dir_fd"})
    for name, verdict in verdicts.items():
        assert verdict == ("ALLOWED" if name in allowed else "refused"), (name, verdicts)


def test_F5_audit_hook_refuses_directory_descriptors_outside(tmp_path: Path, target: int) -> None:
    """The Python-level wall alone: no directory outside the working directory can be
    opened, so no dir_fd can point outside it; inside it, dir_fd still works."""
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    verdicts = _run_alone(
        f"""
        from ptcbox.runtimes.subprocess.worker._audit import install_audit_hook
        os.chdir({str(work)!r})
        install_audit_hook({str(work)!r})
        attempt("proc", lambda: os.open("/proc", os.O_RDONLY))
        attempt("proc_path", lambda: os.open("/proc", os.O_PATH))
        attempt("outside", lambda: os.open(OUTSIDE, os.O_RDONLY))
        attempt("parent_dir", lambda: os.open("..", os.O_RDONLY))
        attempt("inside", lambda: via_dir_fd("sub", "f", os.O_WRONLY | os.O_CREAT))
        """,
        tmp_path,
        target,
    )
    assert verdicts == {
        "proc": "refused",
        "proc_path": "refused",
        "outside": "refused",
        "parent_dir": "refused",
        "inside": "ALLOWED",
    }


@pytest.mark.parametrize(
    "attack",
    [
        "d = os.open('/proc', 0)\nos.read(os.open(f'{HOST}/environ', 0, dir_fd=d), 100)",
        "d = os.open('/proc', 0)\nos.open(f'{HOST}/mem', os.O_RDWR, dir_fd=d)",
        "os.open(f'/proc/{HOST}/mem', os.O_RDWR)",
        "open(f'/proc/{HOST}/environ').read()",
        "d = os.open(OUTSIDE, 0)\nos.open('pwned', os.O_WRONLY | os.O_CREAT, dir_fd=d)",
        "os.symlink(OUTSIDE, 'link')\nopen('link/pwned', 'w')",
        "os.kill(HOST, 0)",
    ],
    ids=["environ_dir_fd", "mem_dir_fd", "mem", "environ", "write_dir_fd", "symlink", "kill"],
)
async def test_F5_trusted_worker_cannot_reach_the_host(tmp_path: Path, attack: str) -> None:
    """All walls together, trusted code (real ``os``, as after a sandbox escape)."""
    code = f"import os\nHOST = {os.getpid()}\nOUTSIDE = {str(tmp_path)!r}\n{attack}"
    async with SubprocessRuntime(SandboxPolicy.trusted()) as runtime:
        result = await runtime.execute(code, TOOLS)
    assert result.return_code == 1
    assert result.error_type in ("PolicyViolation", "PermissionError"), result.error
    assert not list(tmp_path.iterdir())

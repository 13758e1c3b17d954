"""Wall set-up the template now prepares before it forks, and the rehearsal a worker
skips when its run already waits: every worker is walled all the same (issue 16).

The template builds the seccomp filters (each worker writes its own pid in), the list
of modules the audit hook unloads, where the worker's code lives and the capabilities a
worker that gives up root keeps. These tests run trusted code (real ``os``, as after a
sandbox escape) in workers, with a control that the same probes succeed unwalled.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from ptcbox import SubprocessRuntime
from ptcbox.runtimes.subprocess.worker import _seccomp
from ptcbox.runtimes.subprocess.worker._audit import DENIED_MODULES
from ptcbox.runtimes.subprocess.worker._privileges import kept_capabilities, readable_by_others
from ptcbox.runtimes.subprocess.worker._setup import code_dirs
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio

PROBES = """
import os, sys
def attempt(name, action):
    try:
        action()
    except Exception as exc:
        print(name, "refused", type(exc).__name__)
    else:
        print(name, "ALLOWED")
attempt("kill_host", lambda: os.kill({host}, 0))
attempt("write_outside", lambda: open({outside!r} + "/pwned", "w").close())
attempt("import_ctypes", lambda: __import__("ctypes"))
attempt("fork", lambda: os._exit(0) if os.fork() == 0 else os.wait())
denied = {denied!r}
loaded = [name for name in sys.modules if name.partition(".")[0] in denied]
print("denied_loaded", "ALLOWED" if loaded else "refused", loaded[:3])
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _probes(outside: Path) -> str:
    return PROBES.format(host=os.getpid(), outside=str(outside), denied=sorted(DENIED_MODULES))


def _verdicts(stdout: str) -> dict[str, str]:
    return {line.split()[0]: line.split()[1] for line in stdout.splitlines() if line.strip()}


def test_the_probes_succeed_without_the_walls(tmp_path: Path) -> None:
    """Control: plain Python does all of it (ctypes was imported: it shows as loaded)."""
    done = subprocess.run(
        [sys.executable, "-c", _probes(tmp_path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert _verdicts(done.stdout) == dict.fromkeys(
        ["kill_host", "write_outside", "import_ctypes", "fork", "denied_loaded"], "ALLOWED"
    )


@pytest.mark.parametrize("min_idle", [0, 2], ids=["run_waits_rehearsal_skipped", "idle_worker"])
async def test_every_worker_is_walled_whether_or_not_it_rehearsed(
    tmp_path: Path, min_idle: int
) -> None:
    """``min_idle=0``: each worker is forked for a run already sent, so it finds the run
    waiting and skips its rehearsal; ``2``: workers rehearse while idle. Both are walled:
    seccomp (kill, fork), Landlock (write outside), the audit hook (ctypes) and no denied
    module left loaded."""
    async with SubprocessRuntime(SandboxPolicy.trusted(), min_idle=min_idle) as runtime:
        for _ in range(3):
            result = await runtime.execute(_probes(tmp_path), {})
            assert result.return_code == 0, result.error
            assert _verdicts(result.stdout) == dict.fromkeys(
                ["kill_host", "write_outside", "import_ctypes", "fork", "denied_loaded"],
                "refused",
            ), result.stdout
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not _seccomp.process_filter_supported(), reason="no filter for this CPU")
@pytest.mark.parametrize("confine_dirfd", [False, True])
@pytest.mark.parametrize("network", [False, True])
def test_a_prebuilt_filter_with_the_pid_written_in_is_the_filter_built_for_that_pid(
    confine_dirfd: bool, network: bool
) -> None:
    machine = platform.machine()
    for pid in (1, 2, 300, 65_535, 4_194_304, os.getpid()):
        built, length, _ = _seccomp._build_filter(machine, pid, confine_dirfd, network)
        assert _seccomp._process_filter(machine, pid, confine_dirfd, network) == (built, length)
    one = _seccomp._process_filter(machine, 1, confine_dirfd, network)[0]
    two = _seccomp._process_filter(machine, 2, confine_dirfd, network)[0]
    assert sum(a != b for a, b in zip(one, two, strict=True)) == 2  # pid and -pid: 4 bytes each


def test_the_kept_capabilities_are_those_of_the_code_directories() -> None:
    needed = code_dirs()
    expected = 0 if all(map(readable_by_others, needed)) else 1 << 2
    assert kept_capabilities(needed) == expected


def _bounding_set(status: str) -> int:
    return int(status.split("CapBnd:", 1)[1].split(maxsplit=1)[0], 16)


@pytest.mark.skipif(os.geteuid() != 0, reason="the host runs as root in this check")
async def test_a_root_templates_workers_have_an_empty_bounding_set() -> None:
    """The template (as root) empties its bounding set once, before forking; every
    worker has it so (at most CAP_DAC_READ_SEARCH, 0x4). Control: the host's is full."""
    with open("/proc/self/status") as status:
        assert _bounding_set(status.read()) & ~0x4  # the control
    code = "_bnd = open('/proc/self/status').read().split('CapBnd:')[1].split()[0]\nint(_bnd, 16)"
    async with SubprocessRuntime(SandboxPolicy.trusted()) as runtime:
        results = [await runtime.execute(code, {}) for _ in range(3)]
        template = runtime._pool._proc
        assert template is not None
        with open(f"/proc/{template.pid}/status") as status:
            assert _bounding_set(status.read()) & ~0x4 == 0
    assert all(result.ok for result in results), results
    assert [result.value & ~0x4 for result in results] == [0, 0, 0]

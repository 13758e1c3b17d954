"""WorkerHandle's hand-out check (``runnable``) against real processes and signals."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from ptcbox.runtimes.subprocess._handle import WorkerHandle

_SLEEPER = "import time\ntime.sleep(120)\n"
_SPINNER = "while True:\n    pass\n"


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rpartition(b")")[2].split()[0].decode()


def _wait_state(pid: int, states: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    state = _state(pid)
    while state not in states and time.monotonic() < deadline:
        time.sleep(0.005)
        state = _state(pid)
    return state


Spawn = Callable[..., tuple["subprocess.Popen[bytes]", WorkerHandle]]


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    started: list[tuple[subprocess.Popen[bytes], WorkerHandle]] = []

    def start(code: str = _SLEEPER) -> tuple[subprocess.Popen[bytes], WorkerHandle]:
        proc = subprocess.Popen([sys.executable, "-c", code])
        host, peer = socket.socketpair()
        peer.close()
        handle = WorkerHandle(proc.pid, host, os.pidfd_open(proc.pid))
        started.append((proc, handle))
        return proc, handle

    yield start
    for proc, handle in started:
        proc.kill()
        proc.wait()
        handle.set_exit(None, None)
        handle.close()


def test_a_sleeping_process_is_runnable_from_its_stat_alone(spawn: Spawn) -> None:
    proc, handle = spawn()
    assert _wait_state(proc.pid, "S") == "S"
    assert handle._stat_fd is not None
    assert handle.runnable()


def test_a_stopped_process_is_not_runnable(spawn: Spawn) -> None:
    proc, handle = spawn()
    _wait_state(proc.pid, "S")
    os.kill(proc.pid, signal.SIGSTOP)
    assert not handle.runnable()  # right after kill(): awake ("R") or stopped ("T")
    assert _wait_state(proc.pid, "T") == "T"
    assert not handle.runnable()


def test_a_running_process_falls_back_to_the_full_check(spawn: Spawn) -> None:
    proc, handle = spawn(_SPINNER)
    assert _wait_state(proc.pid, "R") == "R"
    assert handle.runnable()
    os.kill(proc.pid, signal.SIGSTOP)
    assert not handle.runnable()


def test_an_awake_process_is_checked_through_descriptors_kept_open(
    spawn: Spawn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reused worker is handed out again while still awake ("R"): its status is read
    with a pread of a kept descriptor, not by opening /proc/<pid>/status by path."""
    from ptcbox.runtimes.subprocess import _handle

    proc, handle = spawn(_SPINNER)
    assert _wait_state(proc.pid, "R") == "R"
    assert handle._status_fd is not None

    def no_path_lookup(pid: int) -> bool:
        raise AssertionError("the path-based check ran")

    monkeypatch.setattr(_handle, "_process_runnable", no_path_lookup)
    assert handle.runnable()
    os.kill(proc.pid, signal.SIGSTOP)
    assert not handle.runnable()  # pending or stopped: either way never handed out
    assert _wait_state(proc.pid, "T") == "T"
    assert not handle.runnable()
    os.kill(proc.pid, signal.SIGCONT)
    assert _wait_state(proc.pid, "R") == "R"
    assert handle.runnable()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"Name:\tx\nState:\tR (running)\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n",
         (b"R", False)),
        (b"State:\tS (sleeping)\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000040000\n",
         (b"S", True)),  # SIGSTOP (19) pending for the process
        (b"State:\tR (running)\nSigPnd:\t0000000000000100\nShdPnd:\t0000000000000000\n",
         (b"R", True)),  # SIGKILL (9) pending for the thread
        (b"State:\tR (running)\nSigPnd:\t0000000000000000\n", (b"R", True)),  # cut short
        (b"State:\tR (running)\nSigPnd:\tzz\nShdPnd:\t0\n", (b"R", True)),  # garbled
        (b"Name:\tx\nSigPnd:\t0\nShdPnd:\t0\n", (b"?", False)),  # no state: not runnable states
        (b"Name:\tState:R\nState:\tT (stopped)\nSigPnd:\t0\nShdPnd:\t0\n", (b"T", False)),  # comm
    ],
)  # fmt: skip
def test_status_text_is_parsed_as_the_kernel_writes_it(
    text: bytes, expected: tuple[bytes, bool]
) -> None:
    from ptcbox.runtimes.subprocess._handle import _parse_status

    assert _parse_status(text) == expected


def test_a_killed_and_reaped_process_is_not_runnable(spawn: Spawn) -> None:
    proc, handle = spawn()
    stat_fd = handle._stat_fd
    assert stat_fd is not None
    proc.kill()
    proc.wait()  # reaped: the pid may now be reused by another process
    with pytest.raises(ProcessLookupError):
        os.pread(stat_fd, 1024, 0)  # the open stat still names the dead process
    assert not handle.runnable()


def test_no_stat_is_opened_for_a_process_already_gone() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    pidfd = os.pidfd_open(proc.pid)
    proc.wait()
    host, peer = socket.socketpair()
    peer.close()
    handle = WorkerHandle(proc.pid, host, pidfd)
    try:
        assert handle._stat_fd is None  # its pid could already name another process
        assert not handle.runnable()
    finally:
        handle.set_exit(None, None)
        handle.close()


@pytest.mark.parametrize("how", ["close", "exit", "close-while-served"])
def test_the_stat_descriptor_is_closed_with_the_handle(spawn: Spawn, how: str) -> None:
    proc, handle = spawn()
    stat_fd = handle._stat_fd
    assert stat_fd is not None
    if how == "close":
        handle.close()
    elif how == "exit":
        proc.kill()
        proc.wait()
        handle.set_exit(signal.SIGKILL, None)
    else:
        handle.enter()
        handle.close()
        os.fstat(stat_fd)  # still open: the serving thread has the socket
        handle.leave()
    with pytest.raises(OSError):
        os.fstat(stat_fd)
    assert handle._stat_fd is None
    assert handle._status_fd is None


_VFORK_HELPER = r"""
#include <unistd.h>
int main(void) {
    pid_t child = vfork();
    if (child == 0) {  /* the parent waits uninterruptibly ("D") until this exits */
        sleep(120);
        _exit(0);
    }
    return 0;
}
"""


def test_an_uninterruptible_sleeper_with_a_stop_pending_is_not_runnable(
    tmp_path: Path,
) -> None:
    """A process in uninterruptible sleep ("D", e.g. a worker still setting up) is not
    woken by SIGSTOP: the signal stays pending and stops it later. Its state alone must
    not make it runnable (a fresh-clone CI run once handed out such a worker)."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler to build the vfork helper")
    source = tmp_path / "vfork.c"
    source.write_text(_VFORK_HELPER)
    binary = tmp_path / "vfork"
    subprocess.run([gcc, str(source), "-o", str(binary)], check=True, capture_output=True)
    proc = subprocess.Popen([str(binary)])
    host, peer = socket.socketpair()
    peer.close()
    handle = WorkerHandle(proc.pid, host, os.pidfd_open(proc.pid))
    vfork_child = None
    try:
        assert _wait_state(proc.pid, "D") == "D"
        vfork_child = psutil.Process(proc.pid).children()[0].pid
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(0.05)
        assert _state(proc.pid) == "D"  # still waiting for the vfork child, stop pending
        assert not handle.runnable()
    finally:
        if vfork_child is not None:
            os.kill(vfork_child, signal.SIGKILL)
        proc.kill()
        proc.wait()
        handle.set_exit(None, None)
        handle.close()

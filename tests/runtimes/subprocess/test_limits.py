"""SubprocessRuntime hard limits, enforced by the OS: kill on timeout, memory, CPU,
files, processes (each wall tested on its own), output floods, network namespace."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator

import anyio
import psutil
import pytest

from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.runtimes import WorkerStartError
from ptcbox.runtimes.subprocess.worker._seccomp import process_filter_supported
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio

TRUSTED = SandboxPolicy.trusted()
# trusted code (no guards at all) with the default memory limit: only the OS stops it
TRUSTED_1G = TRUSTED.replace(max_memory_bytes=1 << 30)
TOOLS = {"add": DirectProjection("add", lambda a, b: a + b)}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def ticking() -> AsyncIterator[list[float]]:
    """Measure the host loop's responsiveness: the gaps between 20 ms ticks."""
    gaps: list[float] = []
    stop = anyio.Event()

    async def tick() -> None:
        last = time.monotonic()
        while not stop.is_set():
            await anyio.sleep(0.02)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        try:
            yield gaps
        finally:
            stop.set()


async def _workers_end(runtime: SubprocessRuntime, within: float = 5.0) -> bool:
    """Whether every worker that is not idle has ended (exit reported) in time."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pool = runtime._pool
        busy = [pid for pid in pool._workers if all(w.pid != pid for w in pool._idle)]
        if not busy:
            return True
        await anyio.sleep(0.01)
    return False


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("B14", "n = 0\nwhile True:\n    n += 1"),
        ("B15", "x = 10 ** (10 ** 8)"),
        ("B20", "import time\ntime.sleep(30)"),
    ],
)
async def test_B14_B15_B20_killed_within_the_timeout_host_responsive(case: str, code: str) -> None:
    """B14 (Python loop), B15 (a C-level power holding the GIL), B20 (sleep): the worker
    is killed within timeout + 0.5 s while the host loop keeps ticking. Trusted code, so
    no sandbox guard refuses B15 first (the restricted policy refuses it before it runs;
    see ``test_cases.py``)."""
    async with SubprocessRuntime(TRUSTED_1G) as runtime:
        async with ticking() as gaps:
            started = time.monotonic()
            result = await runtime.execute(code, TOOLS, timeout=1.0)
            elapsed = time.monotonic() - started
        assert elapsed < 1.0 + 0.5, case
        assert result.timed_out and result.error_type == "TimeoutError"
        assert "killed" in (result.error or "")
        assert max(gaps) < 0.5, f"host loop stalled for {max(gaps):.2f} s"
        assert await _workers_end(runtime)
        assert (await runtime.execute("add(a=1, b=1)", TOOLS)).value == 2


@pytest.mark.parametrize("policy", [SandboxPolicy(), TRUSTED_1G], ids=["restricted", "trusted"])
async def test_B17_memory_bomb_fails_fast_and_host_memory_is_unchanged(
    policy: SandboxPolicy,
) -> None:
    async with SubprocessRuntime(policy) as runtime:
        await runtime.execute("1", TOOLS)
        rss_before = psutil.Process().memory_info().rss
        result = await runtime.execute('s = "a" * 10**10', TOOLS, timeout=20)
        assert result.error_type == "MemoryLimitExceeded", result.error
        assert not result.timed_out and result.duration_s < 10
        assert "max_memory_bytes" in (result.error or "")
        assert psutil.Process().memory_info().rss - rss_before < 50 << 20


async def test_memory_limit_follows_the_policy() -> None:
    policy = SandboxPolicy(max_memory_bytes=64 << 20)
    async with SubprocessRuntime(policy) as runtime:
        small = await runtime.execute("len(bytearray(16 << 20))", TOOLS)
        assert small.value == 16 << 20
        big = await runtime.execute("len('x' * (200 << 20))", TOOLS)
        assert big.error_type == "MemoryLimitExceeded"


async def test_B24_output_flood_is_capped_and_host_memory_bounded() -> None:
    policy = SandboxPolicy(max_output_bytes=100_000)
    async with SubprocessRuntime(policy) as runtime:
        await runtime.execute("1", TOOLS)
        rss_before = psutil.Process().memory_info().rss
        flood = await runtime.execute("for i in range(10**7):\n    print(i)", TOOLS, timeout=3)
        assert flood.truncated and flood.error_type == "OutputLimitExceeded"  # issue 13
        assert not flood.timed_out
        assert flood.stdout.startswith("0\n1\n2\n") and "[truncated " in flood.stdout
        assert len(flood.stdout.encode()) < 100_000 + 200
        giant = await runtime.execute("raise ValueError('x' * 50_000_000)", TOOLS, timeout=20)
        assert giant.error_type == "ValueError" and giant.truncated
        assert len((giant.error or "").encode()) < 100_000 + 200
        assert psutil.Process().memory_info().rss - rss_before < 100 << 20


async def test_B22_fork_bomb_is_refused_by_the_sandbox_and_the_audit_hook() -> None:
    code = "import os\nwhile True:\n    os.fork()"
    async with SubprocessRuntime() as restricted, SubprocessRuntime(TRUSTED) as trusted:
        refused = await restricted.execute(code, TOOLS)
        assert refused.error_type == "ImportError"
        hooked = await trusted.execute(code, TOOLS)
        assert hooked.error_type == "PolicyViolation"
        assert "creating a process" in (hooked.error or "")


def _run_alone(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(not process_filter_supported(), reason="no seccomp filter for this CPU")
def test_B22_seccomp_wall_alone_refuses_fork_spawn_and_exec() -> None:
    """The second wall without the audit hook: a seccomp filter refuses new processes
    (root included) but still allows threads."""
    out = _run_alone(
        """
        import os, subprocess, threading
        from ptcbox.runtimes.subprocess.worker._seccomp import forbid_process_creation
        try:
            forbid_process_creation()
        except OSError as exc:
            print("unavailable", exc)
            raise SystemExit(0)
        for name, attempt in [
            ("fork", os.fork),
            ("spawn", lambda: subprocess.run(["true"])),
            ("exec", lambda: os.execv("/bin/true", ["true"])),
        ]:
            try:
                attempt()
                print(name, "ALLOWED")
            except PermissionError:
                print(name, "refused")
        seen = []
        thread = threading.Thread(target=seen.append, args=(1,))
        thread.start()
        thread.join()
        print("thread", seen)
        """
    )
    if out.startswith("unavailable"):
        pytest.skip(f"seccomp is not available here: {out}")
    assert out.split("\n")[:4] == ["fork refused", "spawn refused", "exec refused", "thread [1]"]


def test_B22_process_limit_wall_alone() -> None:
    """The third wall: RLIMIT_NPROC=0 makes fork fail with EAGAIN. The kernel exempts
    root, so when the tests run as root the process drops to ``nobody`` first."""
    out = _run_alone(
        """
        import os
        from ptcbox.runtimes.subprocess.worker._rlimits import (
            apply_worker_limits, process_limit_binds
        )
        if os.getuid() == 0:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
        apply_worker_limits(max_open_files=64, max_file_bytes=1 << 20, max_processes=0)
        print("binds", process_limit_binds())
        try:
            pid = os.fork()
        except BlockingIOError:
            print("fork refused")
        else:
            if pid == 0:
                os._exit(0)
            print("fork ALLOWED")
        """
    )
    assert out.split("\n")[:2] == ["binds True", "fork refused"]


async def test_cpu_time_limit_kills_with_sigxcpu_and_reports_the_limit() -> None:
    """RLIMIT_CPU ends the worker with SIGXCPU: reported as the limit it is, with the
    limit and the CPU seconds observed, not as a crash."""
    policy = SandboxPolicy(max_cpu_seconds=1)
    async with SubprocessRuntime(policy) as runtime:
        result = await runtime.execute("while True:\n    pass", TOOLS, timeout=30)
        assert result.error_type == "CPUTimeLimitExceeded", result.error
        error = result.error or ""
        assert error.startswith("CPUTimeLimitExceeded: max_cpu_seconds exceeded: ")
        assert "> limit 1 seconds" in error and "SIGXCPU" in error
        assert not result.timed_out
        session_policy = SandboxPolicy(max_cpu_seconds=1)
    async with SubprocessRuntime(session_policy) as runtime, runtime.session() as session:
        assert (await session.execute("1 + 1", TOOLS)).value == 2
        spun = await session.execute("while True:\n    pass", TOOLS, timeout=30)
        assert spun.error_type == "CPUTimeLimitExceeded", spun.error


async def test_file_size_and_open_file_limits() -> None:
    async with SubprocessRuntime(TRUSTED, max_file_bytes=1 << 20, max_open_files=32) as runtime:
        big = await runtime.execute("open('big', 'wb').write(b'x' * (2 << 20))", TOOLS)
        assert big.error_type == "OSError" and "too large" in (big.error or "")
        many = await runtime.execute("[open(f'f{i}', 'w') for i in range(100)]", TOOLS)
        assert many.error_type == "OSError" and "Too many open files" in (many.error or "")


async def test_network_false_gives_an_empty_network_namespace() -> None:
    runtime = SubprocessRuntime(TRUSTED, network=False)
    try:
        await runtime.start()
    except WorkerStartError as exc:
        await runtime.aclose()
        pytest.skip(f"network namespaces are not available: {exc}")
    async with runtime:
        code = "[line.split(':')[0].strip() for line in open('/proc/self/net/dev').readlines()[2:]]"
        result = await runtime.execute(code, TOOLS)
        assert result.value == ["lo"], result.error


async def test_unread_tool_results_are_capped_and_hold_one_tool_thread() -> None:
    """A snippet that starts calls (asyncio, no await) and never reads their results:
    the host queues the replies per execution and sends them from one tool thread at a
    time; past MAX_UNSENT_REPLY_BYTES waiting, the execution ends with a clear limit
    error (G2's kind: host memory and tool threads bounded)."""
    blob = "x" * 2_000_000

    def big() -> str:
        return blob

    code = (
        "import asyncio\n"
        "await asyncio.sleep(0)\n"
        "for i in range(200):\n"
        "    big()\n"
        "while True:\n"
        "    pass\n"
    )
    host = psutil.Process()
    async with SubprocessRuntime() as runtime:
        before = host.memory_info().rss
        started = time.monotonic()
        result = await runtime.execute(code, {"big": DirectProjection("big", big)}, timeout=60)
        grown = host.memory_info().rss - before
        assert time.monotonic() - started < 30
        threads = runtime._tool_threads.threads()  # this execution's, ending now
        most = 32  # tool_threads
    assert result.error_type == "LimitExceeded" and not result.timed_out, result.error
    assert "unread tool results exceeded" in (result.error or "")
    assert "without reading their results" in (result.error or "")
    assert grown < 400 << 20, f"host memory grew by {grown / 1e6:.0f} MB"
    # the tools at once and one thread sending replies (a few more while threads turn
    # over); before the fix every tool thread was blocked sending a reply
    assert len(threads) < most


async def test_a_timeout_names_the_tool_call_the_snippet_was_waiting_for() -> None:
    """The worker's line is lost with it: a timeout while a tool call ran says which
    tool took the time (a model then fixes the call, not its own loop); one in the
    snippet's own code says only that the worker was killed."""

    def hang(seconds: float) -> str:
        """Sleep, then answer."""
        time.sleep(seconds)
        return "late"

    async def slow(seconds: float) -> str:
        """Sleep on the loop, then answer."""
        await anyio.sleep(seconds)
        return "late"

    tools = {
        **TOOLS,
        "hang": DirectProjection("hang", hang),
        "slow": DirectProjection("slow", slow),
    }
    async with SubprocessRuntime() as runtime:
        for tool in ("hang", "slow"):
            result = await runtime.execute(f"print('before')\n{tool}(seconds=3)", tools, timeout=1)
            assert result.timed_out and result.stdout == "before\n", result
            assert result.error is not None
            assert f"(it was waiting for the tool call {tool}, still running after " in result.error
            assert result.error.endswith(" seconds; the worker process was killed)"), result.error
        looping = await runtime.execute("while True:\n    pass", tools, timeout=1)
        assert looping.timed_out and looping.error is not None
        assert looping.error.endswith("(the worker process was killed)"), looping.error
        assert "waiting for" not in looping.error

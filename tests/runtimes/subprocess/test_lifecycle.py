"""SubprocessRuntime life cycle: crashes, cancellation, closing, concurrency, host exit.

After each test no process, thread or file descriptor of the runtime is left.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import Any

import anyio
import psutil
import pytest

from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.errors import RuntimeClosedError
from ptcbox.runtimes.subprocess._handle import WorkerHandle
from ptcbox.runtimes.subprocess.worker._basedir import make_base
from ptcbox.sandbox import SandboxPolicy
from runtimes._leaks import no_leaks, snapshot

pytestmark = pytest.mark.anyio

TRUSTED = SandboxPolicy.trusted()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def _wait_gone(pids: list[int], within: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within
    alive = [pid for pid in pids if _alive(pid)]
    while alive and time.monotonic() < deadline:
        await anyio.sleep(0.02)
        alive = [pid for pid in alive if _alive(pid)]
    return alive


def kill_worker(pid: int) -> str:
    """Kill the calling worker with SIGKILL while this tool call is in progress."""
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    return "too late"


def add(a: int, b: int) -> int:
    return a + b


TOOLS = {
    "kill_worker": DirectProjection("kill_worker", kill_worker),
    "add": DirectProjection("add", add),
}


async def test_worker_killed_in_the_middle_of_a_tool_call() -> None:
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        code = "import os\nprint('calling')\nkill_worker(pid=os.getpid())\nprint('never')"
        result = await runtime.execute(code, TOOLS, timeout=20)
        assert result.error_type == "WorkerCrashed"
        assert "signal 9" in (result.error or "") and "SIGKILL" in (result.error or "")
        assert result.stdout == "calling\n" and not result.timed_out
        assert [call.name for call in result.tool_calls] == ["kill_worker"]
        assert (await runtime.execute("add(a=2, b=3)", TOOLS)).value == 5


async def test_worker_exit_status_is_reported() -> None:
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        result = await runtime.execute("import os\nos._exit(3)", TOOLS)
        assert result.error_type == "WorkerCrashed"
        assert "exited with status 3" in (result.error or "")


async def test_cancelling_the_caller_kills_the_worker() -> None:
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        pids: list[int] = []
        code = "import os, time\nprint(os.getpid())\nwhile True:\n    time.sleep(0.01)"

        def seen(stream: str, text: str) -> None:
            pids.extend(int(word) for word in text.split())

        with anyio.move_on_after(5) as scope:
            async with anyio.create_task_group() as group:

                async def run() -> None:
                    await runtime.execute(code, TOOLS, timeout=60, on_output=seen)

                group.start_soon(run)
                while not pids:
                    await anyio.sleep(0.01)
                group.cancel_scope.cancel()
        assert not scope.cancelled_caught and len(pids) == 1
        assert await _wait_gone(pids) == []
        assert (await runtime.execute("add(a=1, b=1)", TOOLS)).value == 2


async def test_cancelling_a_caller_that_waits_for_a_slot() -> None:
    async with no_leaks(), SubprocessRuntime(max_workers=1) as runtime:
        results: list[Any] = []

        async def long() -> None:
            results.append(await runtime.execute("import time\ntime.sleep(0.5)\n1", TOOLS))

        async with anyio.create_task_group() as group:
            group.start_soon(long)
            await anyio.sleep(0.1)
            with anyio.move_on_after(0.1) as waiting:
                await runtime.execute("2", TOOLS)
            assert waiting.cancelled_caught
        assert results[0].value == 1
        assert (await runtime.execute("3", TOOLS)).value == 3


async def test_closing_the_runtime_while_executions_run() -> None:
    async with no_leaks():
        runtime = SubprocessRuntime()
        await runtime.start()
        outcomes: list[BaseException | Any] = []

        async def run() -> None:
            try:
                outcomes.append(await runtime.execute("while True:\n    pass", TOOLS, timeout=60))
            except RuntimeClosedError as exc:
                outcomes.append(exc)

        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(run)
            await anyio.sleep(0.3)
            await runtime.aclose()
        assert len(outcomes) == 3
        assert all(isinstance(outcome, RuntimeClosedError) for outcome in outcomes)
        with pytest.raises(RuntimeClosedError):
            await runtime.execute("1", TOOLS)
        await runtime.aclose()  # idempotent


async def test_two_hundred_concurrent_executions_from_one_loop() -> None:
    async with no_leaks(), SubprocessRuntime() as runtime:
        results: dict[int, Any] = {}

        async def run(i: int) -> None:
            code = "print(n)\nadd(a=n, b=1)"
            results[i] = await runtime.execute(code, TOOLS, extra_globals={"n": i}, timeout=60)

        async with anyio.create_task_group() as group:
            for i in range(200):
                group.start_soon(run, i)
        assert all(results[i].ok for i in range(200)), [r.error for r in results.values()][:3]
        assert [results[i].value for i in range(200)] == [i + 1 for i in range(200)]
        assert all(results[i].stdout == f"{i}\n" for i in range(200))


async def test_max_workers_bounds_concurrent_executions() -> None:
    active = [0, 0]

    async def hold() -> None:
        active[0] += 1
        active[1] = max(active)
        await anyio.sleep(0.2)
        active[0] -= 1

    tools = {"hold": DirectProjection("hold", hold)}
    async with no_leaks(), SubprocessRuntime(max_workers=2) as runtime:
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(runtime.execute, "hold()", tools)
        assert active[1] == 2


async def test_the_fast_hand_out_never_jumps_the_queue_for_a_slot() -> None:
    """``take_idle_now`` (an idle worker and a slot without awaiting) gives up while
    the slots are full or an execution waits for one; slots always come back."""
    tools = {"hold": DirectProjection("hold", lambda: time.sleep(0.3))}
    async with no_leaks(), SubprocessRuntime(max_workers=1, min_idle=2) as runtime:
        pool = runtime._pool
        first = asyncio.ensure_future(runtime.execute("hold()", tools))
        while pool.busy < 1:
            await anyio.sleep(0.01)
        assert pool.take_idle_now() is None  # the only slot is taken
        second = asyncio.ensure_future(runtime.execute("2", tools))
        await anyio.sleep(0.05)
        assert pool._slots.waiting() == 1 and pool.take_idle_now() is None
        results = await asyncio.gather(first, second)
        assert [r.ok for r in results] == [True, True]
        assert results[1].value == 2
        assert pool.busy == 0
        worker = pool.take_idle_now()
        assert worker is not None and pool.busy == 1
        pool.release(worker)
        pool.free_slot()
        assert pool.busy == 0


async def test_a_dead_template_is_restarted() -> None:
    async with no_leaks(), SubprocessRuntime() as runtime:
        template = runtime._pool._proc
        assert template is not None
        template.kill()
        deadline = time.monotonic() + 5
        while runtime._pool._proc is not None and time.monotonic() < deadline:
            await anyio.sleep(0.02)
        result = await runtime.execute("add(a=1, b=2)", TOOLS)
        assert result.value == 3
        assert runtime._pool._proc is not None and runtime._pool._proc.pid != template.pid


@pytest.mark.parametrize("then", ["another loop", "aclose"])
def test_a_worker_released_as_the_loop_stops_is_still_killed_and_closed(then: str) -> None:
    """A finished worker is released on the loop's next iteration; when the loop stops
    and closes first, the next loop or ``aclose`` does it: no worker and no host socket
    is left behind."""
    runtime = SubprocessRuntime()
    released: list[WorkerHandle] = []
    release = runtime._pool.release

    def recording_release(worker: WorkerHandle) -> None:
        released.append(worker)
        release(worker)

    runtime._pool.release = recording_release  # type: ignore[method-assign]

    async def once() -> Any:
        return (await runtime.execute("add(a=1, b=2)", TOOLS)).value

    async def once_then_stop() -> Any:
        value = await once()
        asyncio.get_running_loop().stop()  # before the iteration that would release it
        return value

    loop = asyncio.new_event_loop()
    try:
        task = loop.create_task(once_then_stop())
        loop.run_forever()
        assert task.result() == 3
    finally:
        loop.close()
    workers = list(released)
    assert runtime._pool._releasing == set(workers) and len(workers) == 1
    if then == "another loop":
        assert asyncio.run(once()) == 3
        assert not runtime._pool._releasing
        asyncio.run(runtime.aclose())
    else:
        asyncio.run(runtime.aclose())
    assert not runtime._pool._releasing
    for worker in workers:
        assert worker.killed or worker.exited
        assert worker.sock.fileno() == -1


def test_runtime_moves_to_a_new_event_loop() -> None:
    """``anyio.run`` twice with one runtime (what a sync facade may do)."""
    before = snapshot()[0]  # processes of other tests (e.g. execute()'s shared runtime)
    runtime = SubprocessRuntime()

    async def once(n: int) -> Any:
        return (await runtime.execute("add(a=n, b=n)", TOOLS, extra_globals={"n": n})).value

    assert anyio.run(once, 1) == 2
    assert anyio.run(once, 2) == 4
    anyio.run(runtime.aclose)
    deadline = time.monotonic() + 5.0
    while (extra := snapshot()[0] - before) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not extra, f"leaked processes: {extra}"


_HOST = """
import asyncio, os, sys
from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.sandbox import SandboxPolicy

def report(pid: int) -> None:
    print(pid, flush=True)

async def main():
    runtime = SubprocessRuntime(SandboxPolicy.trusted())
    await runtime.start()
    print(runtime._pool._proc.pid, flush=True)
    tools = {"report": DirectProjection("report", report)}
    code = "import os, time\\nreport(pid=os.getpid())\\ntime.sleep(60)"
    if sys.argv[1] == "exit":
        task = asyncio.ensure_future(runtime.execute(code, tools, timeout=60))
        await asyncio.sleep(1.0)
        sys.exit(0)  # no aclose: atexit and the template's end-of-file clean up
    await runtime.execute(code, tools, timeout=60)

asyncio.run(main())
"""


@pytest.mark.parametrize("how", ["sigkill", "exit"])
async def test_nothing_survives_the_host(how: str) -> None:
    """The host is SIGKILLed (the template sees its control socket close and kills the
    workers; workers die with the template by PDEATHSIG), or exits without closing the
    runtime (``atexit``): no template or worker survives."""
    host = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_HOST), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stdout is not None
        template = int(host.stdout.readline())
        worker = int(host.stdout.readline())
        family = [child.pid for child in psutil.Process(host.pid).children(recursive=True)]
        assert template in family and worker in family
        if how == "sigkill":
            host.kill()
        host.wait(30)
        assert await _wait_gone(family) == []
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


async def test_F8_stopped_or_killed_idle_workers_are_replaced() -> None:
    """F8 and its sibling: idle workers that are stopped (SIGSTOP) or just killed are
    never handed out; each execution gets a runnable worker at once, and the discarded
    ones are killed (no stopped process is left behind). (SIGTSTP does not stop a
    worker: the kernel discards it for an orphaned process group.)"""
    async with no_leaks(), SubprocessRuntime(min_idle=3) as runtime:
        await runtime.execute("1", TOOLS)
        for signum in (signal.SIGSTOP, signal.SIGKILL, signal.SIGSTOP):
            while len(runtime._pool._idle) < 3:
                await anyio.sleep(0.01)
            idle = [worker.pid for worker in runtime._pool._idle]
            for pid in idle:
                os.kill(pid, signum)
            started = time.monotonic()
            result = await runtime.execute("add(a=1, b=2)", TOOLS, timeout=30)
            assert result.value == 3, (signum, result.error)
            assert time.monotonic() - started < 10, signum
            assert await _wait_gone(idle) == [], signum


async def test_template_directory_is_removed_when_the_template_is_killed() -> None:
    """A SIGKILLed template cannot remove its base directory: the host does, and a new
    runtime sweeps the unlocked base directories that dead templates left behind."""
    async with SubprocessRuntime() as runtime:
        await runtime.execute("1", TOOLS)
        base, proc = runtime._pool._base, runtime._pool._proc
        assert base is not None and proc is not None and os.path.isdir(base)
        proc.kill()
        deadline = time.monotonic() + 10
        while os.path.exists(base) and time.monotonic() < deadline:
            await anyio.sleep(0.02)
        assert not os.path.exists(base)
        stale = make_base(os.path.dirname(os.path.dirname(base)))  # as a dead template's
        os.makedirs(os.path.join(stale, "w-1"))
        os.utime(stale, (time.time() - 3600, time.time() - 3600))
        assert (await runtime.execute("add(a=1, b=1)", TOOLS)).value == 2  # a new template
        assert not os.path.exists(stale)
        live = runtime._pool._base
        assert live is not None and os.path.isdir(live)
        os.utime(live, (time.time() - 3600, time.time() - 3600))
        async with SubprocessRuntime() as other:
            await other.start()
            assert os.path.isdir(live)  # locked by a living template: kept


async def test_each_runtime_has_its_own_hash_seed() -> None:
    """Issue 13, item 10: workers of one template share its hash seed (they are forks;
    not re-randomised, see the README's security notes), another runtime's template is a
    fresh interpreter with its own."""
    code = "[hash('abc'), hash('abd')]"
    async with SubprocessRuntime() as one, SubprocessRuntime() as two:
        first, again = (
            (await one.execute(code, TOOLS)).value,
            (await one.execute(code, TOOLS)).value,
        )
        other = (await two.execute(code, TOOLS)).value
    assert first == again  # the same template
    assert first != other

"""Template rotation (issue 13, item 10): a fresh hash seed and memory layout every N forks.

Workers forked from one template share its hash seed and the addresses of everything it
made (a fork copies both); the stand-in for a compromised worker is trusted-policy code,
which may call ``hash`` and ``id`` freely. A rotated template is a fresh interpreter: its
workers differ. Rotation must leave no process behind, and executions running or
starting while it happens must all succeed.
"""

from __future__ import annotations

import asyncio
import time

import psutil
import pytest

from ptcbox import SubprocessRuntime
from ptcbox.sandbox import SandboxPolicy
from runtimes._leaks import no_leaks

pytestmark = pytest.mark.anyio

PROBE = "[hash('abc'), id(len), id(int.__add__)]"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _until_generation(rt: SubprocessRuntime, generation: int) -> None:
    deadline = time.monotonic() + 120
    while rt._pool._rotation.generation < generation:
        assert time.monotonic() < deadline, "the next template never came"
        result = await rt.execute("1", {})
        assert result.ok, result.error
        await asyncio.sleep(0.02)


async def test_workers_of_two_template_generations_differ() -> None:
    async with (
        no_leaks(),
        SubprocessRuntime(SandboxPolicy.trusted(), rotate_template_after=3, min_idle=1) as rt,
    ):
        first = (await rt.execute(PROBE, {})).value
        sibling = (await rt.execute(PROBE, {})).value
        assert first == sibling  # the control: forks of one template share them
        await _until_generation(rt, 1)
        rotated = (await rt.execute(PROBE, {})).value
        assert rotated[0] != first[0]  # hash seed
        assert rotated[1:] != first[1:]  # addresses (the layout of a fresh interpreter)


async def test_rotation_leaves_no_process_behind() -> None:
    async with no_leaks(), SubprocessRuntime(rotate_template_after=2, min_idle=1) as rt:
        await rt.start()
        old = rt._pool._proc
        assert old is not None
        await _until_generation(rt, 2)
        assert rt._pool._proc is not old
        deadline = time.monotonic() + 30
        while rt._pool._rotation._retiring or psutil.pid_exists(old.pid):
            assert time.monotonic() < deadline, "an old template is still there"
            await asyncio.sleep(0.02)
        assert old.poll() is not None  # exited and reaped
        children = psutil.Process().children(recursive=True)
        templates = [c for c in children if c.ppid() == psutil.Process().pid]
        assert len(templates) == 1  # only the current template


async def test_executions_during_rotations_all_succeed() -> None:
    """Short and long executions overlap several swaps; every one of them succeeds."""
    codes = ["import time\ntime.sleep(0.3)\n'long'", "'short'"]
    async with (
        no_leaks(),
        SubprocessRuntime(rotate_template_after=4, min_idle=2, max_workers=4) as rt,
    ):
        results = []
        deadline = time.monotonic() + 180
        while rt._pool._rotation.generation < 2 or len(results) < 36:  # waves over swaps
            assert time.monotonic() < deadline, "no second rotation"
            wave = [rt.execute(codes[n % 2], {}, timeout=60) for n in range(6)]
            results.extend(await asyncio.gather(*wave))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert [r.value for r in results] == ["long", "short"] * (len(results) // 2)


async def test_a_reused_worker_going_back_to_the_pool_is_no_fork() -> None:
    """Rotation counts forks; a reused worker handed back after its execution is none.
    Counted as one (it was), a reuse-mode runtime started a whole new template in the
    background every ``rotate_template_after`` executions (every 1,000 by default: a
    new interpreter, its imports and warm-up, and the reused worker killed, about twice
    a second at full reuse throughput)."""
    runtime = SubprocessRuntime(
        SandboxPolicy.trusted(),  # os.getpid(): which worker served
        rotate_template_after=3,
        min_idle=1,
        max_workers=1,
        max_executions_per_worker=100,
    )
    async with no_leaks(), runtime as rt:
        await rt.start()
        template = rt._pool._proc
        pids = []
        for _ in range(12):
            result = await rt.execute("import os\nos.getpid()", {})
            assert result.ok, result.error
            pids.append(result.value)
        assert len(set(pids)) == 1  # one worker served them all
        assert rt._pool._rotation.forks < 3  # the pool's own forks only
        assert rt._pool._rotation._next is None and rt._pool._rotation.generation == 0
        assert rt._pool._proc is template

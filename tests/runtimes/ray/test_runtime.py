"""RayRuntime's own behaviour: tools run in the caller, typed errors, timeouts, a killed
actor, back-pressure, cancellation and a clean close.

All on the session's one loopback Ray cluster (``ray_cluster`` in
``tests/runtimes/conftest.py``); the tests skip without the ``ray`` extra.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from ptcbox import DirectProjection
from ptcbox.errors import RuntimeClosedError, SessionEndedError

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def ray_runtime(shared_ray_runtime: Any) -> Any:
    """The session's shared RayRuntime (an actor costs seconds to start)."""
    return shared_ray_runtime


def _projections(**functions: Any) -> dict[str, DirectProjection]:
    return {name: DirectProjection(name, fn) for name, fn in functions.items()}


async def test_tool_calls_run_in_the_callers_process(ray_runtime: Any) -> None:
    seen: list[tuple[int, str]] = []

    def record(item: str) -> str:
        seen.append((os.getpid(), threading.current_thread().name))
        return item.upper()

    async def arecord(item: str) -> str:
        seen.append((os.getpid(), "loop"))
        return item * 2

    code = (
        "import asyncio\n"
        "print(record(item='a'))\n"
        "async def main():\n"
        "    return await asyncio.gather(*[arecord(item=str(i)) for i in range(5)])\n"
        "asyncio.run(main())"
    )
    result = await ray_runtime.execute(code, _projections(record=record, arecord=arecord))
    assert result.ok, result.error
    assert result.stdout == "A\n"
    assert result.value == ["00", "11", "22", "33", "44"]
    assert [pid for pid, _ in seen] == [os.getpid()] * 6  # every call ran in this process
    assert seen[0][1].startswith("ptcbox-ray-tool")  # a sync tool: a tool thread, not the loop
    assert [c.name for c in result.tool_calls] == ["record", *["arecord"] * 5]


async def test_values_keep_their_types_both_ways(ray_runtime: Any) -> None:
    received: list[Any] = []

    def echo(value: Any) -> Any:
        received.append(value)
        return (value, {1, 2}, datetime.date(2024, 3, 1))

    code = (
        "import datetime\n"
        "out = echo(value=(1, datetime.datetime(2024, 5, 17, 12, 0)))\n"
        "print(type(out).__name__, type(out[1]).__name__, out[2].year, type(out[0][1]).__name__)"
    )
    result = await ray_runtime.execute(code, _projections(echo=echo))
    assert result.ok, result.error
    assert result.stdout == "tuple set 2024 datetime\n"
    assert received == [(1, datetime.datetime(2024, 5, 17, 12, 0))]


class UserNotFoundError(KeyError):
    """A host-defined tool error."""


async def test_tool_errors_keep_their_type(ray_runtime: Any) -> None:
    def lookup(user: str) -> str:
        raise UserNotFoundError(user)

    def read(path: str) -> str:
        raise FileNotFoundError(2, "No such file", path)

    code = (
        "try:\n"
        "    lookup(user='u1')\n"
        "except KeyError as e:\n"
        "    print(type(e).__name__, repr(e.args), isinstance(e, ToolError))\n"
        "try:\n"
        "    read(path='/x')\n"
        "except OSError as e:\n"
        "    print(e.errno, e.filename, str(e))\n"
        "try:\n"
        "    huge()\n"
        "except ValueError as e:\n"
        "    print('refused:', 'over the' in str(e))\n"
        "lookup(user='u2')"
    )
    tools = _projections(lookup=lookup, read=read, huge=lambda: "x" * (17 << 20))
    result = await ray_runtime.execute(code, tools)
    assert result.stdout == (
        "UserNotFoundError ('u1',) True\n2 /x [Errno 2] No such file: '/x'\nrefused: True\n"
    )
    assert result.error_type == "UserNotFoundError"
    assert [(c.ok, c.error) for c in result.tool_calls] == [
        (False, "UserNotFoundError: 'u1'"),
        (False, "FileNotFoundError: [Errno 2] No such file: '/x'"),
        (False, result.tool_calls[2].error),
        (False, "UserNotFoundError: 'u2'"),
    ]


async def test_timeout_includes_tool_time_and_kills_the_worker(ray_runtime: Any) -> None:
    async def slow() -> None:
        await asyncio.sleep(30)

    started = time.monotonic()
    result = await ray_runtime.execute("print('x')\nslow()", _projections(slow=slow), timeout=1)
    assert time.monotonic() - started < 1 + 5
    assert (result.error_type, result.timed_out, result.stdout) == ("TimeoutError", True, "x\n")
    assert [(c.name, c.ok) for c in result.tool_calls] == [("slow", False)]
    again = await ray_runtime.execute("1 + 1", {})
    assert again.value == 2


async def test_a_killed_actor_gives_worker_crashed_and_is_replaced(
    ray_runtime: Any, ray_cluster: Any
) -> None:
    entered = asyncio.Event()

    async def wait() -> None:
        entered.set()
        await asyncio.sleep(60)

    actor = ray_runtime._pool.actors[0].handle
    task = asyncio.ensure_future(
        ray_runtime.execute("print('started')\nwait()", _projections(wait=wait), timeout=60)
    )
    await asyncio.wait_for(entered.wait(), 30)
    ray_cluster.kill(actor, no_restart=True)
    result = await asyncio.wait_for(task, 30)
    assert (result.return_code, result.error_type) == (1, "WorkerCrashed")
    assert result.error is not None and "Ray actor" in result.error
    assert [c.name for c in result.tool_calls] == ["wait"]
    assert ray_runtime._pool.actors[0].handle is not actor  # replaced
    after = await ray_runtime.execute("print('fine')", {})
    assert after.stdout == "fine\n"


async def test_back_pressure_queues_callers_within_their_timeout(ray_cluster: Any) -> None:
    from ptcbox.runtimes import RayRuntime

    gate = asyncio.Event()

    async def hold() -> None:
        await gate.wait()

    runtime = RayRuntime(num_cpus=0.25, executions_per_actor=1)
    try:
        await runtime.start()
        tools = _projections(hold=hold)
        first = asyncio.ensure_future(runtime.execute("hold()\nprint(1)", tools, timeout=60))
        await asyncio.sleep(0.5)
        queued = asyncio.ensure_future(runtime.execute("print(2)", tools, timeout=60))
        started = time.monotonic()
        refused = await runtime.execute("print(3)", tools, timeout=1.0)  # waits 1 s at most
        assert refused.error_type == "TimeoutError" and refused.timed_out
        assert refused.error is not None and "no worker slot" in refused.error
        assert time.monotonic() - started >= 0.9
        assert not queued.done()  # still waiting its turn
        gate.set()
        assert (await first).stdout == "1\n"
        assert (await queued).stdout == "2\n"
    finally:
        await runtime.aclose()


async def test_cancelling_the_caller_cancels_the_remote_execution(ray_runtime: Any) -> None:
    marks: list[int] = []

    def mark() -> None:
        marks.append(1)

    code = "import time\ntime.sleep(1.5)\nmark()"
    with anyio.move_on_after(0.5):
        await ray_runtime.execute(code, _projections(mark=mark), timeout=30)
    await asyncio.sleep(3)
    assert marks == []  # the snippet's worker was killed before it reached mark()
    assert (await ray_runtime.execute("mark()", _projections(mark=mark))).ok
    assert marks == [1]


async def test_sessions_keep_globals_and_end_with_their_actor(
    ray_runtime: Any, ray_cluster: Any
) -> None:
    async with ray_runtime.session() as session:
        await session.execute("x = 41", {})
        assert (await session.execute("x + 1", {})).value == 42
        ray_cluster.kill(ray_runtime._pool.actors[0].handle, no_restart=True)
        crashed = await session.execute("x", {})
        assert crashed.error_type == "WorkerCrashed"
        with pytest.raises(SessionEndedError, match="actor"):
            await session.execute("x", {})
    assert (await ray_runtime.execute("2", {})).value == 2


async def test_aclose_leaves_no_actor_behind(ray_cluster: Any) -> None:
    from ptcbox.runtimes import RayRuntime

    runtime = RayRuntime(num_cpus=0.25, actors=2)
    await runtime.start()
    assert (await runtime.execute("print('hi')", {})).stdout == "hi\n"
    ids = [slot.handle._actor_id.hex() for slot in runtime._pool.actors]
    states = ray_cluster._private.state.actors()
    assert [states[i]["State"] for i in ids] == ["ALIVE", "ALIVE"]
    await runtime.aclose()
    states = ray_cluster._private.state.actors()
    assert [states[i]["State"] for i in ids] == ["DEAD", "DEAD"]
    assert ray_cluster.is_initialized()  # a cluster it did not start keeps running
    with pytest.raises(RuntimeClosedError):
        await runtime.execute("1", {})


def test_import_ptcbox_never_imports_ray() -> None:
    code = (
        "import sys, ptcbox, ptcbox.runtimes\n"
        "assert 'ray' not in sys.modules and 'ptcbox.runtimes.ray' not in sys.modules\n"
        "from ptcbox.runtimes import RayRuntime\n"
        "assert 'ray' not in sys.modules, 'the class alone needs no Ray'\n"
        "print(RayRuntime.__name__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "RayRuntime\n"


def test_readme_example_joins_the_cluster_at_ray_address(ray_cluster: Any) -> None:
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    found = re.search(r"### RayRuntime.*?```py\n(.*?)```", readme, flags=re.S)
    assert found is not None, "the README's RayRuntime example moved"
    address = ray_cluster.get_runtime_context().gcs_address
    done = subprocess.run(
        [sys.executable, "-c", found.group(1)],
        env={**os.environ, "RAY_ADDRESS": address},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "6"
    assert ray_cluster.cluster_resources().get("CPU") == 2  # the joined cluster runs on

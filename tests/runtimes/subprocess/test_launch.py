"""The template's launch: the package root it puts on ``sys.path`` and the slot semaphore."""

from __future__ import annotations

import asyncio
from pathlib import Path

import ptcbox
from ptcbox.runtimes import SubprocessRuntime
from ptcbox.runtimes.subprocess import _launch
from ptcbox.runtimes.subprocess._slots import ExecutionSlots


def test_package_root_is_the_directory_that_holds_ptcbox() -> None:
    # The template runs under ``python -I``: this path is how it finds ptcbox.
    root = Path(_launch._PACKAGE_ROOT)
    assert (root / "ptcbox").resolve() == Path(ptcbox.__file__).resolve().parent


def test_the_template_loads_the_worker_not_ptcbox_public_api() -> None:
    """The template begins with plain package objects (TEMPLATE_PRELUDE): no agents,
    providers or pydantic in it, so less to copy at each fork. Control: this process
    imported ptcbox and has pydantic_core's library mapped."""

    def mapped(pid: int | str) -> str:
        with open(f"/proc/{pid}/maps") as maps:
            return maps.read()

    import pydantic_core  # noqa: F401 - the control's library

    assert "pydantic_core" in mapped("self")

    async def main() -> tuple[str, str]:
        async with SubprocessRuntime() as runtime:
            result = await runtime.execute("import json\nprint(json.dumps([1]))", {})
            template = runtime._pool._proc
            assert template is not None
            return result.stdout, mapped(template.pid)

    stdout, template_maps = asyncio.run(main())
    assert stdout == "[1]\n"
    assert "pydantic_core" not in template_maps
    assert "_orjson" in template_maps or "orjson" in template_maps  # what it does use


def test_slots_serve_waiters_in_arrival_order() -> None:
    async def main() -> list[int]:
        slots = ExecutionSlots(1)
        loop = asyncio.get_running_loop()
        order: list[int] = []

        async def run(n: int) -> None:
            async with slots.hold(loop):
                order.append(n)
                await asyncio.sleep(0)

        assert slots.available()
        slots.take()
        assert not slots.available()
        tasks = [asyncio.create_task(run(n)) for n in range(3)]
        await asyncio.sleep(0)
        slots.free()
        await asyncio.gather(*tasks)
        assert slots.busy == 0 and slots.available()
        return order

    assert asyncio.run(main()) == [0, 1, 2]


def test_slots_serve_callers_in_turn() -> None:
    """Per caller first come, first served; a freed slot goes to the callers in turn."""

    async def main() -> list[str]:
        slots = ExecutionSlots(1)
        loop = asyncio.get_running_loop()
        order: list[str] = []

        async def run(caller: str, n: int) -> None:
            async with slots.hold(loop, caller=caller):
                order.append(f"{caller}{n}")
                await asyncio.sleep(0)

        slots.take()
        tasks = [asyncio.create_task(run("a", n)) for n in range(4)]
        await asyncio.sleep(0)
        tasks += [asyncio.create_task(run("b", n)) for n in range(2)]
        tasks.append(asyncio.create_task(run("c", 0)))
        await asyncio.sleep(0)
        assert slots.waiting() == 7
        slots.free()
        await asyncio.gather(*tasks)
        assert slots.busy == 0 and slots.available() and slots.waiting() == 0
        return order

    assert asyncio.run(main()) == ["a0", "b0", "c0", "a1", "b1", "a2", "a3"]


def test_a_slot_handed_to_a_waiter_that_gave_up_is_passed_on() -> None:
    async def main() -> None:
        slots = ExecutionSlots(1)
        loop = asyncio.get_running_loop()
        inside = asyncio.Event()
        leave = asyncio.Event()

        async def run(caller: str) -> None:
            async with slots.hold(loop, caller=caller):
                inside.set()
                await leave.wait()

        slots.take()
        gives_up = asyncio.create_task(run("x"))
        other = asyncio.create_task(run("y"))
        await asyncio.sleep(0)
        slots.free()  # handed to "x" ...
        gives_up.cancel()  # ... which is cancelled before it runs: "y" gets it
        await asyncio.gather(gives_up, return_exceptions=True)
        await asyncio.wait_for(inside.wait(), 5)
        assert slots.busy == 1 and slots.waiting() == 0
        leave.set()
        await other
        assert slots.busy == 0

    asyncio.run(main())

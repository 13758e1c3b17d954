"""The template's launch: the package root it puts on ``sys.path`` and the slot semaphore."""

from __future__ import annotations

import asyncio
from pathlib import Path

import ptcbox
from ptcbox.runtimes.subprocess import _launch
from ptcbox.runtimes.subprocess._slots import ExecutionSlots


def test_package_root_is_the_directory_that_holds_ptcbox() -> None:
    # The template runs under ``python -I``: this path is how it finds ptcbox.
    root = Path(_launch._PACKAGE_ROOT)
    assert (root / "ptcbox").resolve() == Path(ptcbox.__file__).resolve().parent


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

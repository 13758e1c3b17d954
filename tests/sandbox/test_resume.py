"""Alive checks where suspended snippet code resumes (red-team R1)."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from typing import Any

import pytest

from ptcbox.sandbox import SandboxPolicy, build_globals, compile_snippet

SHAPES = """
import asyncio
def gen():
    x = yield 1
    yield x
    total = (yield) or 0
    yield [total + 1, (yield 5) or 6]
g = gen()
out = [next(g), g.send(7), next(g), g.send(2), g.send(None)]
out.append(list(x * y for x in range(3) for y in range(2) if x))
class Acm:
    async def __aenter__(self):
        return 1
    async def __aexit__(self, *exc):
        return False
async def agen():
    for i in range(3):
        yield i
async def main():
    async with Acm() as a:
        got = [i async for i in agen()]
    async for i in agen():
        got.append(await asyncio.sleep(0, i))
    got.append([await asyncio.sleep(0, n) for n in range(2)])
    return a, got, await asyncio.sleep(0, "r")
out.append(asyncio.run(main()))
"""


def test_generators_and_coroutines_run_as_in_cpython(sandbox_run: Callable[..., Any]) -> None:
    plain: dict[str, Any] = {}
    exec(SHAPES, plain)
    assert sandbox_run(SHAPES).globals["out"] == plain["out"]


@pytest.mark.parametrize(
    "resume",
    ["next(steps)", "next(after)"],
    ids=["genexp-step", "after-yield"],
)
def test_resumed_in_another_thread_fails_at_the_check(resume: str) -> None:
    """The snippet's thread has ``running`` set; any other thread fails the check."""
    code = """
def gen():
    yield 1
    calls.append("after")
    yield 2
after = gen()
next(after)
steps = (calls.append(x) for x in range(3))
"""
    alive = threading.local()
    alive.running = True
    calls: list[object] = []
    g = build_globals(
        SandboxPolicy(),
        tools={},
        extra_globals={"calls": calls},
        stdout=io.StringIO(),
        stderr=io.StringIO(),
        alive=alive,
    )
    exec(compile_snippet(code, SandboxPolicy()).code, g)
    errors: list[BaseException] = []

    def host() -> None:
        try:
            eval(resume, g)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=host)
    thread.start()
    thread.join()
    assert calls == []
    assert type(errors[0]) is AttributeError and errors[0].name == "running"

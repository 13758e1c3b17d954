"""Language features model code uses, on every runtime, against plain CPython's output.

Each program runs under plain ``exec`` in this process (the reference) and on the
runtime under the default policy; stdout must match exactly. Covers ``str.format`` /
``format_map`` (sandbox/_safeformat.py), exception chains and the snippet's own dunders
(_dunders.py), ``try/except*`` (_exceptstar.py) and modern asyncio (_asyncloop.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import textwrap
import threading
from typing import Any

import pytest

from ptcbox import DirectProjection

pytestmark = pytest.mark.anyio

PROGRAMS = {
    "format": """
        class P:
            def __init__(self):
                self.name, self._sku = "pen", "A-1"
        class D(dict):
            def __missing__(self, key):
                return f"<{key}>"
        row = {"sku": "A-1", "qty": 3}
        f = "{0[sku]} x{0[qty]}".format
        print("{:,.2f}|{:>8}|{:<5}|{:^7}|{!r}".format(1234567.891, "r", "l", "c", "x"))
        print("{name}: {temp:.1f}".format(**{"name": "Oslo", "temp": 3.25}), f(row))
        print("{p.name} {p._sku}".format(p=P()), "{city} {zip}".format_map(D(city="Rome")))
        print(str.format("{} {}", 1, 2), list(map("{:03d}".format, [1, 22])))
        print("{0:{1}}|".format("x", 5), "{:{w}.{p}f}".format(3.14159, w=8, p=2))
        for bad in ("{}", "{0}{1}", "{x}", "{0!z}", "{0.}"):
            try:
                bad.format(1)
            except (IndexError, KeyError, ValueError) as e:
                print(type(e).__name__, e)
        try:
            "{0}".format_map({})
        except ValueError as e:
            print(e)
    """,
    "chaining": """
        class ReportError(Exception):
            pass
        def load(key):
            try:
                return {}[key]
            except KeyError as e:
                raise ReportError(f"no {key}") from e
        try:
            load("k")
        except ReportError as e:
            e.add_note("while loading")
            print(repr(e.__cause__), e.__context__ is e.__cause__, e.__suppress_context__)
            print(e.__notes__, type(e).__name__, e.__class__.__name__)
            tb, lines = e.__traceback__, []
            while tb is not None:
                lines.append(tb.tb_lineno)
                tb = tb.tb_next
            print(lines)
        try:
            try:
                1 / 0
            except ZeroDivisionError:
                raise ValueError("v") from None
        except ValueError as e:
            print(repr(e.__context__), e.__suppress_context__, e.__cause__)
        import json
        try:
            json.loads("nope")
        except ValueError as e:
            print(type(e).__name__, repr(e.__context__))
    """,
    "own_dunders": """
        import dataclasses
        class Base:
            registry = {}
            def __init_subclass__(cls, **kw):
                super().__init_subclass__(**kw)
                Base.registry[cls.__name__] = cls
            def __class_getitem__(cls, item):
                return f"{cls.__name__}[{item.__name__}]"
        class Sub(Base):
            __slots__ = ("a",)
        class Bag:
            def __init__(self, **kw):
                self.__dict__.update(kw)
            def __getattr__(self, name):
                return f"missing:{name}"
            def __repr__(self):
                return f"{self.__class__.__name__}({vars(self)})"
        @dataclasses.dataclass(frozen=True)
        class Money:
            cents: int
            label: str = ""
            def __post_init__(self):
                object.__setattr__(self, "label", f"{self.cents / 100:.2f}")
        def area(w: float, h: float = 1.0) -> float:
            "Area of a rectangle."
            return w * h
        b = Bag(x=1)
        print(sorted(Base.registry), Base[int], Sub.__mro__[1].__name__, b, b.y)
        print(Money(250), area.__name__, area.__doc__, area.__annotations__)
        print(Sub.__name__, Sub.__qualname__, Sub.__module__, Bag().__dict__)
    """,
    "except_star": """
        def check(items):
            errors = [ValueError(i) for i in items if i < 0] + [KeyError(i) for i in items if i > 9]
            if errors:
                raise ExceptionGroup("bad items", errors)
        def run(items):
            try:
                check(items)
            except* ValueError as eg:
                print("negative", [e.args[0] for e in eg.exceptions])
            except* KeyError as eg:
                print("too big", len(eg.exceptions))
            else:
                print("ok")
        run([1, 2])
        run([-1, 5, 10, -3, 12])
        try:
            raise TypeError("lone")
        except* TypeError as eg:
            print(type(eg).__name__, eg.exceptions)
    """,
    "asyncio": """
        import asyncio
        async def fetch(n):
            await asyncio.sleep(0.001 * n)
            if n == 4:
                raise KeyError(n)
            return n * 10
        async def main():
            async with asyncio.TaskGroup() as tg:
                tasks = [tg.create_task(fetch(i)) for i in range(3)]
            print([t.result() for t in tasks])
            try:
                async with asyncio.TaskGroup() as tg:
                    tg.create_task(fetch(4))
                    tg.create_task(fetch(1))
            except* KeyError as eg:
                print("failed", eg.exceptions)
            loop = asyncio.get_running_loop()
            try:
                async with asyncio.timeout_at(loop.time() + 0.01):
                    await asyncio.sleep(5)
            except TimeoutError:
                print("timeout_at", loop.is_running())
            q = asyncio.PriorityQueue()
            for item in [(3, "c"), (1, "a")]:
                await q.put(item)
            print(await q.get(), await asyncio.shield(fetch(1)))
            cond, sem = asyncio.Condition(), asyncio.BoundedSemaphore(2)
            async with cond, sem:
                cond.notify_all()
            print(sorted([await c for c in asyncio.as_completed([fetch(2), fetch(1)])]))
        asyncio.run(main())
    """,
}


def _plain(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<plain>", "exec", dont_inherit=True), {"__name__": "__main__"})
    return out.getvalue()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
async def test_program_prints_what_plain_cpython_prints(runtime: Any, name: str) -> None:
    code = textwrap.dedent(PROGRAMS[name])
    expected = await asyncio.to_thread(_plain, code)
    result = await runtime.execute(code, {}, timeout=30)
    assert result.error is None, result.error
    assert result.stdout == expected


async def test_tool_calls_in_a_taskgroup_run_concurrently(runtime: Any) -> None:
    lock = threading.Lock()
    running, peak = [0], [0]

    async def lookup(key: str) -> str:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.2)
        with lock:
            running[0] -= 1
        return key.upper()

    code = textwrap.dedent(
        """
        import asyncio
        async def main():
            async with asyncio.TaskGroup() as tg:
                ts = [tg.create_task(lookup(key=k)) for k in "abc"]
            print([t.result() for t in ts])
        asyncio.run(main())
        """
    )
    tools = {"lookup": DirectProjection("lookup", lookup)}
    result = await runtime.execute(code, tools, timeout=30)
    assert result.stdout == "['A', 'B', 'C']\n", result.error
    assert peak[0] >= 2  # overlapping calls: the three sleeps ran at the same time

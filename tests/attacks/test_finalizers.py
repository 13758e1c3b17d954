"""Snippet code that the garbage collector starts after its execution (G3 and its kind).

A suspended generator or coroutine of a snippet that outlives its execution (in a
reference cycle, or in a task of a stopped event loop) is closed by the garbage
collector on whatever thread runs it, at any later time: ``GeneratorExit`` is thrown at
its ``yield``/``await``, so its ``except`` and ``finally`` blocks and the ``__exit__``
of its ``with`` blocks run there, outside any time limit. In the thread runtime that is
a host thread (the main thread at ``gc.collect()``, or at interpreter exit). Each such
code path starts with an ``_alive_()`` check (see ``ptcbox.sandbox._alive``) that
stops it unless its execution is running it. Each attack runs in a child Python: on
failure it would spin there forever.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from attacks._child import child_output
from ptcbox.sandbox._ablation import ENV_VAR

# The attacks follow the _proof pattern. The guard (switch ``alive``) has two layers: the
# ``_alive_.running`` check, and, once the execution's globals are cleared, the missing
# ``_alive_`` name (red-team R5). Refusal: the payload spins forever, and the child's spy
# on sys.unraisablehook (above the runtime's, which stays silent about them) sees the
# guard's own error at the collection, three times over; the child finishes. Control: in a
# child with the alive checks switched off, the same route runs its payload at the host's
# gc.collect(): a ValueError (not a spin, which would hang the control) that the host's
# unraisable hook reports.
SPIN = "while True: pass"
RAN = "raise ValueError('FINALIZER RAN')"
RAN_AT_GC = "ValueError: FINALIZER RAN"

CHILD = """
import asyncio, gc, sys, time
from ptcbox import ThreadRuntime
code, timeout = sys.argv[1], float(sys.argv[2])
gc.disable()  # only the collections below find the garbage: one per run, with the spy on
def spy_on(hook):  # on top of the runtime's hook, which stays silent about alive refusals
    def spy(unraisable):
        exc = unraisable.exc_value
        if not isinstance(exc, ValueError):
            print("UNRAISABLE", type(exc).__name__, exc, flush=True)
        hook(unraisable)
    return spy
async def once():
    runtime = ThreadRuntime()
    result = await runtime.execute(code, {}, timeout=timeout)
    await runtime.aclose()
    return result
for attempt in range(3):
    result = asyncio.run(once())
    print("result", result.ok, result.timed_out, result.error_type, result.stdout.strip(),
          flush=True)
    sys.unraisablehook = spy_on(sys.unraisablehook)
    gc.collect()
print("collected", flush=True)
import os
os._exit(0)
"""


def _run_child(code: str, timeout: float = 5.0) -> str:
    """Run ``code`` three times in a child's ThreadRuntime, then ``gc.collect()``."""
    return child_output(CHILD, textwrap.dedent(code), str(timeout), timeout=30)


def _control(script: str, *args: str) -> str:
    """``script`` in a child Python with the alive checks switched off: stdout + stderr."""
    env = {**os.environ, ENV_VAR: "alive"}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    return done.stdout + done.stderr


NOT_ALIVE = "UNRAISABLE NameError name '_alive_' is not defined"
"""The guard's refusal after the execution: its globals, ``_alive_`` among them, are gone."""


GENERATOR_IN_A_CYCLE = {
    "finally": """
        def g():
            try:
                yield 1
            finally:
                SPIN
        """,
    "except": """
        def g():
            try:
                yield 1
            except BaseException:
                SPIN
        """,
    "except GeneratorExit, spinning in a helper": """
        def spin():
            SPIN
        def g(spin=spin):  # the globals are gone by then: bind it early
            try:
                yield 1
            except GeneratorExit:
                spin()
        """,
    "__exit__": """
        class Forever:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                SPIN
        def g():
            with Forever():
                yield 1
        """,
    "__exit__ replaced by a decorator": """
        def spin(*args):
            SPIN
        class Forever:
            def __enter__(self):
                return self
            @(lambda f: spin)
            def __exit__(self, *exc):
                pass
        def g():
            with Forever():
                yield 1
        """,
}


def _with(body: str, payload: str) -> str:
    return textwrap.dedent(body).replace("SPIN", payload)


@pytest.mark.parametrize("body", GENERATOR_IN_A_CYCLE.values(), ids=GENERATOR_IN_A_CYCLE)
def test_a_finished_snippets_generator_never_runs_at_garbage_collection(body: str) -> None:
    """The execution ends normally; its suspended generator sits in a cycle."""
    tail = "it = g()\nnext(it)\nbox = [it]\nbox.append(box)\nprint('ok')\n"
    control = _control(CHILD, _with(body, RAN) + tail, "5")
    assert control.count(RAN_AT_GC) == 3, control  # at the host's gc.collect()
    out = _run_child(_with(body, SPIN) + tail)
    assert "collected" in out, out
    assert out.count("result True False None ok") == 3, out
    assert out.count(NOT_ALIVE) == 3, out


# G3 (a stopped snippet's coroutines, in tasks of its closed event loop) follows the same
# pattern. An async generator in a cycle was dropped: even with the alive checks off its
# code never runs at collection (asyncio hands it to its closed loop, which refuses).


G3_SNIPPETS = {
    "top-level": """
        import asyncio
        print('started')
        while True:
            try:
                await asyncio.sleep(1)
            except GeneratorExit:
                SPIN
            except BaseException:
                pass
        """,
    "tasks": """
        import asyncio
        async def stubborn():
            while True:
                try:
                    await asyncio.sleep(1)
                except GeneratorExit:
                    SPIN
                except BaseException:
                    pass
        tasks = [asyncio.create_task(stubborn()) for _ in range(5)]
        print('started')
        await asyncio.sleep(10)
        """,
}


def _g3_proves_its_guard(route: str) -> None:
    """G3: the stopped snippet's coroutines stay suspended in tasks of its closed event
    loop, each in a cycle with the pending future it awaits (``sleep(1)``; a bare
    ``sleep(0)`` leaves no cycle: its coroutine is freed in the stopped thread's clean-up
    and never reaches the host's gc). The host's ``gc.collect()`` closes them in its main
    thread: ``GeneratorExit`` at their ``await``, so their handler would run there,
    outside any time limit. Control (alive checks off): it does, at the collection.
    Refusal: the handler's check fails (the globals are gone: ``NameError``), the spin
    never starts, the child finishes, and nothing reaches the host's stderr."""
    body = G3_SNIPPETS[route]
    control = _control(CHILD, _with(body, RAN), "0.5")
    assert "collected" in control, control
    assert RAN_AT_GC in control, control  # in the host's main thread, at gc.collect()
    out = _run_child(_with(body, SPIN), timeout=0.5)  # long enough to start when loaded
    assert "collected" in out, out
    assert out.count("result False True TimeoutError started") == 3, out
    assert NOT_ALIVE in out, out  # the guard's own refusal, seen by the child's spy
    assert "Exception ignored" not in out, out


def test_g3_a_stopped_async_snippet_never_runs_at_garbage_collection() -> None:
    _g3_proves_its_guard("top-level")


def test_g3_stopped_tasks_of_the_snippet_never_run_at_garbage_collection() -> None:
    _g3_proves_its_guard("tasks")


CONCURRENT_GC_CHILD = """
import asyncio, gc, sys, threading
from ptcbox import ThreadRuntime
code = sys.argv[1]
gc.disable()  # only the collection below, in the host's thread, finds the garbage
def spy_on(hook):
    def spy(unraisable):
        exc = unraisable.exc_value
        if type(exc) is AttributeError:
            print("UNRAISABLE AttributeError", repr(exc.name), flush=True)
        hook(unraisable)
    return spy
async def main():
    runtime = ThreadRuntime()
    execution = asyncio.ensure_future(runtime.execute(code, {}, timeout=5))
    await asyncio.sleep(0.3)  # the snippet has made its garbage and sleeps
    sys.unraisablehook = spy_on(sys.unraisablehook)
    gc.collect()  # in the host's loop thread, while the execution runs
    print("collected while running", flush=True)
    result = await execution
    print("result", result.ok, result.stdout.strip(), result.error, flush=True)
    await runtime.aclose()
asyncio.run(main())
import os
os._exit(0)
"""


def test_garbage_collected_in_a_host_thread_during_the_execution_does_not_run_there() -> None:
    """The host's own gc (here its event loop thread) may collect a running snippet's
    garbage: the snippet code it would start there must not run, even though the
    execution is still running (in another thread)."""
    tail = (
        "it = g()\nnext(it)\nbox = [it]\nbox.append(box)\ndel it, box\n"
        "import time\ntime.sleep(1)\nprint('ok')\n"
    )
    control = _control(CONCURRENT_GC_CHILD, _with(GENERATOR_IN_A_CYCLE["finally"], RAN) + tail)
    assert RAN_AT_GC in control, control  # ran in the host's loop thread
    assert "collected while running" in control, control
    code = _with(GENERATOR_IN_A_CYCLE["finally"], SPIN) + tail
    out = child_output(CONCURRENT_GC_CHILD, code, timeout=30)
    assert "collected while running" in out, out
    assert "result True ok None" in out, out
    assert "UNRAISABLE AttributeError 'running'" in out, out  # the check, in the host thread


@pytest.mark.anyio
async def test_a_sessions_generator_resumes_in_its_next_execution() -> None:
    """The check follows the execution running now: a session's generator made in one
    execution runs in the next, and its finally block runs when the session drops it."""
    from ptcbox import ThreadRuntime

    runtime = ThreadRuntime()
    try:
        async with runtime.session() as session:
            first = await session.execute(
                "log = []\ndef g():\n    try:\n        yield 1\n        yield 2\n"
                "    finally:\n        log.append('closed')\nit = g()\nnext(it)\n",
                {},
            )
            assert first.ok, first.error
            second = await session.execute("[next(it), it.close(), log]\n", {})
            assert second.ok, second.error
            assert second.value == [2, None, ["closed"]]
    finally:
        await runtime.aclose()

"""runtimes/thread/_unraisable.py: a stop pending in a snippet thread cannot break the
unraisable hook (no "Exception ignored in sys.unraisablehook" on the host's stderr)."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import operator
import subprocess
import sys
import threading
from typing import Any

from ptcbox.runtimes.thread._unraisable import make_unraisablehook, prime

_SET_ASYNC_EXC = ctypes.pythonapi.PyThreadState_SetAsyncExc
_SET_ASYNC_EXC.argtypes = [ctypes.c_ulong, ctypes.c_void_p]


class Stop(BaseException):
    pass


def _call_with_stop_pending(hook: Any, arg: Any) -> str:
    """Call ``hook(arg)`` in a new thread with ``Stop`` pending, as CPython's collector
    calls ``sys.unraisablehook``: from C, no Python frame in between."""
    out: list[str] = []

    def body() -> None:
        prime(hook)
        pending = functools.partial(_SET_ASYNC_EXC, threading.get_ident(), id(Stop))
        try:
            list(map(operator.call, (pending, functools.partial(hook, arg))))
            out.append("returned")
        except Stop:
            out.append("Stop escaped")
        except BaseException as exc:  # pragma: no cover - shown in the assertion
            out.append(repr(exc))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    return out[0]


def test_a_pending_stop_is_swallowed_where_a_python_hook_lets_it_escape() -> None:
    seen: list[Any] = []
    hook = make_unraisablehook(seen.append, Stop, {"mark": True})

    def plain(unraisable: Any) -> None:  # the control: a hook written in Python
        try:  # noqa: SIM105 - the control: even a try at its top cannot catch it
            seen.append(unraisable)
        except Stop:
            pass

    assert _call_with_stop_pending(plain, "x") == "Stop escaped"  # at its first line
    assert _call_with_stop_pending(hook, "y") == "returned"
    assert seen == []  # the interrupted report is dropped (a stopped snippet's thread)
    hook("z")  # no stop pending: routed, here and in other threads
    worker = threading.Thread(target=hook, args=("w",))
    worker.start()
    worker.join()
    assert seen == ["z", "w"]
    assert getattr(hook, "mark", False) is True


def test_nested_reports_and_route_errors_leave_a_working_hook() -> None:
    seen: list[str] = []

    def route(value: str) -> None:
        seen.append(value)
        if value == "outer":
            hook("inner")  # a report made while reporting, on the same thread
        if value == "bad":
            raise ValueError("route failed")

    hook = make_unraisablehook(route, Stop, {})
    hook("outer")
    with contextlib.suppress(ValueError):
        hook("bad")
    hook("after")
    assert seen == ["outer", "inner", "bad", "after"]


CHILD = """
import asyncio, gc, sys
from ptcbox import ThreadRuntime
CODE = '''
def g():
    while True:
        try:
            yield 1
        except BaseException:
            pass
while True:
    it = g()
    next(it)
    box = [it]
    box.append(box)
    del it, box
'''
async def main():
    async with ThreadRuntime() as runtime:
        if sys.argv[1] == "python-hook":  # the control: the runtime's hook behind a
            ours = sys.unraisablehook      # Python frame, entered first
            def plain(unraisable):
                ours(unraisable)
            plain._ptcbox_routes_snippet_threads = True  # kept by install_hooks
            sys.unraisablehook = plain
        for _ in range(8):
            result = await runtime.execute(CODE, {}, timeout=0.2)
            # stopped either way: by the deadline, or (a fast machine) by the output cap
            # the "generator ignored GeneratorExit" reports reach first
            stopped = result.timed_out or result.error_type == "OutputLimitExceeded"
            assert stopped, result
            gc.collect()
asyncio.run(main())
gc.collect()
print("done", flush=True)
"""


def _child(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, mode],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_stopped_snippet_generators_leave_nothing_on_the_host_stderr() -> None:
    """Snippet generators closed in the stopping thread (dropped, or collected from a
    cycle) raise the stop; the collector reports each through ``sys.unraisablehook``
    while the line tracer has the next stop pending. Control: the same hook as a plain
    Python function takes that stop on entry and CPython prints its failure."""
    control = _child("python-hook")
    assert "done" in control.stdout, control.stderr[-2000:]
    assert "Exception ignored in sys.unraisablehook" in control.stderr
    assert "ExecutionInterrupted" in control.stderr
    fixed = _child("generator-hook")
    assert fixed.stdout == "done\n"
    assert fixed.stderr == ""

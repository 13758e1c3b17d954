"""Behaviour specific to ThreadRuntime: stopped threads really end, late output is
dropped, a thread stuck in a GIL-releasing call is abandoned at the deadline, the host
loop stays responsive, no thread leaks, sessions survive timeouts."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
import weakref
from typing import Any

import anyio
import pytest

from ptcbox import DirectProjection, ThreadRuntime
from ptcbox.errors import RuntimeClosedError, SessionEndedError
from ptcbox.runtimes.thread._control import SNIPPET, Control, ExecutionInterrupted
from ptcbox.runtimes.thread._pool import submit
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio

TRUSTED = SandboxPolicy.trusted()


def snippet_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ptcbox-snippet")]


def busy_snippet_threads() -> list[threading.Thread]:
    """Snippet threads currently executing snippet code (not idle in the pool)."""
    frames = sys_frames()
    busy = []
    for thread in snippet_threads():
        frame = frames.get(thread.ident or -1)
        while frame is not None:
            if frame.f_code.co_filename == "<snippet>":
                busy.append(thread)
                break
            frame = frame.f_back
    return busy


def sys_frames() -> dict[int, Any]:
    """Every thread's frame (CPython 3.11 can deadlock in plain ``sys._current_frames``:
    see ptcbox.runtimes._shared._frames)."""
    from ptcbox.runtimes._shared._frames import current_frames

    return current_frames()


def wait_until(predicate: Any, deadline_s: float = 5.0) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())


@pytest.fixture
async def runtime() -> Any:
    """A ThreadRuntime with the default policy (this module tests the thread runtime only)."""
    async with ThreadRuntime() as runtime:
        yield runtime


@pytest.fixture
async def trusted() -> Any:
    """A ThreadRuntime with the trusted policy (no guards: the hardest snippets)."""
    async with ThreadRuntime(TRUSTED) as runtime:
        yield runtime


NASTY_LOOPS = {
    "plain": "while True:\n    pass",
    "except_base_exception": (
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except BaseException:\n        pass"
    ),
    "nested_handlers_with_calls": (
        "def h():\n    return 1\n"
        "while True:\n  try:\n    while True:\n      try:\n        while True:\n          h()\n"
        "      except BaseException:\n        h()\n  except BaseException:\n    h()"
    ),
    "finally_loop": "try:\n    while True:\n        pass\nfinally:\n    while True:\n        pass",
    "bare_except_in_function": (
        "def f():\n    while True:\n        try:\n            n = 0\n            while True:\n"
        "                n += 1\n        except:\n            continue\nf()"
    ),
    "generator_finally_loop": (
        "def g():\n    try:\n        yield 1\n    finally:\n        while True:\n"
        "            try:\n                pass\n            except BaseException:\n"
        "                pass\nfor x in g():\n    while True:\n        pass"
    ),
}


@pytest.mark.parametrize("name", sorted(NASTY_LOOPS))
@pytest.mark.parametrize("policy", ["default", "trusted"])
async def test_stopped_thread_really_ends(name: str, policy: str) -> None:
    """B14 in its hardest forms: loops that catch BaseException or loop in finally."""
    async with ThreadRuntime(TRUSTED if policy == "trusted" else None) as runtime:
        result = await runtime.execute(NASTY_LOOPS[name], {}, timeout=0.3)
        if policy == "default" and result.error_type == "PolicyViolation":
            pytest.skip(f"the default policy refuses this snippet: {result.error}")
        assert result.timed_out
        assert wait_until(lambda: not busy_snippet_threads()), "a stopped thread kept running"


async def test_stopped_thread_is_not_reused_and_exits(trusted: Any) -> None:
    code = "import threading\nprint(threading.get_ident())\nwhile True:\n    pass"
    result = await trusted.execute(code, {}, timeout=0.2)
    assert result.timed_out
    ident = int(result.stdout)
    assert wait_until(lambda: ident not in {t.ident for t in threading.enumerate()})


async def test_no_late_output_from_an_abandoned_thread(trusted: Any) -> None:
    release = threading.Event()

    def block() -> str:
        release.wait(10)  # a host call that releases the GIL and cannot be interrupted
        return "done"

    tools = {"block": DirectProjection("block", block)}
    started = time.monotonic()
    result = await trusted.execute("print('early')\nblock()\nprint('late')", tools, timeout=0.3)
    # at the deadline, not when the tool returns (10 s): a wide margin for a loaded machine
    assert time.monotonic() - started < 0.3 + 4
    assert result.timed_out
    assert result.stdout == "early\n"
    assert [(c.name, c.ok) for c in result.tool_calls] == [("block", None)]  # still running
    release.set()
    assert wait_until(lambda: not busy_snippet_threads())
    after = await trusted.execute("print('next')", tools)
    assert after.stdout == "next\n"
    assert result.stdout == "early\n"


async def test_thread_stuck_in_a_gil_releasing_call_is_abandoned_at_the_deadline(
    trusted: Any, wait_for_threads: Any
) -> None:
    await trusted.execute("1", {})
    baseline = threading.active_count()
    code = "import hashlib\nfor _ in range(10**6):\n    hashlib.sha256(b'x' * 50_000_000).digest()"
    started = time.monotonic()
    result = await trusted.execute(code, {}, timeout=0.5)
    assert time.monotonic() - started < 0.5 + 4  # at the deadline; the loop never ends
    assert result.timed_out
    assert wait_for_threads(baseline, deadline_s=10) <= baseline


async def test_host_loop_stays_responsive_during_execution(runtime: Any) -> None:
    order: list[str] = []

    async def ticker() -> None:
        for _ in range(10):
            await anyio.sleep(0.01)
        order.append("ticker")

    async def snippet() -> None:
        result = await runtime.execute("while True:\n    pass", {}, timeout=1.0)
        assert result.timed_out
        order.append("snippet")

    async with anyio.create_task_group() as group:
        group.start_soon(snippet)
        group.start_soon(ticker)
    assert order == ["ticker", "snippet"]


async def test_no_thread_leak_after_many_executions(runtime: Any, wait_for_threads: Any) -> None:
    await runtime.execute("1", {})
    baseline = threading.active_count()
    for i in range(100):
        result = await runtime.execute(f"print({i})", {})
        assert result.stdout == f"{i}\n"
    await asyncio.gather(*[runtime.execute("sum(range(1000))", {}) for _ in range(30)])
    # each execution's thread ends with it; a few spares are kept started in advance
    assert wait_for_threads(baseline + 8) <= baseline + 8
    assert wait_until(lambda: len(snippet_threads()) <= 8)


async def test_stop_never_lands_in_the_next_execution(runtime: Any) -> None:
    for _ in range(10):
        stopped = await runtime.execute("while True:\n    pass", {}, timeout=0.05)
        assert stopped.timed_out
        results = await asyncio.gather(
            *[runtime.execute("t = 0\nfor i in range(20000):\n    t += i\nt", {}) for _ in range(3)]
        )
        assert [r.value for r in results] == [sum(range(20000))] * 3


async def test_sleep_in_a_snippet_event_loop_is_woken(trusted: Any) -> None:
    code = "import asyncio\nasync def main():\n    await asyncio.sleep(30)\nasyncio.run(main())"
    result = await trusted.execute(code, {}, timeout=0.3)
    assert result.timed_out
    assert wait_until(lambda: not busy_snippet_threads(), deadline_s=3)


async def test_top_level_await_sleep_is_cancelled_at_the_timeout(runtime: Any) -> None:
    started = time.monotonic()
    result = await runtime.execute("import asyncio\nawait asyncio.sleep(30)", {}, timeout=0.3)
    assert time.monotonic() - started < 0.3 + 4  # at the deadline, not after 30 s
    assert result.timed_out
    assert wait_until(lambda: not busy_snippet_threads(), deadline_s=3)


async def test_cancelled_caller_stops_the_thread(runtime: Any) -> None:
    with anyio.move_on_after(0.2):
        await runtime.execute("while True:\n    pass", {}, timeout=30)
    assert wait_until(lambda: not busy_snippet_threads())


async def test_sync_tools_run_in_the_snippet_thread(runtime: Any) -> None:
    where: list[str] = []

    def probe() -> None:
        where.append(threading.current_thread().name)

    result = await runtime.execute("probe()", {"probe": DirectProjection("probe", probe)})
    assert result.ok
    assert where[0].startswith("ptcbox-snippet")


async def test_warnings_of_a_snippet_go_to_its_stderr(runtime: Any) -> None:
    def deprecated() -> int:
        warnings.warn("old tool", UserWarning, stacklevel=1)
        return 1

    with warnings.catch_warnings(record=True) as host_warnings:
        warnings.simplefilter("always")
        result = await runtime.execute(
            "deprecated()", {"deprecated": DirectProjection("deprecated", deprecated)}
        )
    assert result.ok
    assert "UserWarning: old tool" in result.stderr
    # only the snippet's warning matters: garbage of earlier tests collected meanwhile
    # (an unclosed event loop's ResourceWarning) may be recorded too
    assert [str(w.message) for w in host_warnings if "old tool" in str(w.message)] == []


async def test_session_survives_a_timeout(runtime: Any) -> None:
    async with runtime.session() as session:
        await session.execute("x = 41", {})
        stopped = await session.execute("while True:\n    x = x", {}, timeout=0.2)
        assert stopped.timed_out
        result = await session.execute("x + 1", {})
        assert result.value == 42


async def test_session_ends_when_a_stopped_thread_stays_stuck(runtime: Any) -> None:
    release = threading.Event()

    def block() -> None:
        release.wait(10)

    tools = {"block": DirectProjection("block", block)}
    try:
        async with runtime.session() as session:
            await session.execute("x = 1", tools)
            assert (await session.execute("block()", tools, timeout=0.2)).timed_out
            with pytest.raises(SessionEndedError):
                await session.execute("x", tools)
            with pytest.raises(SessionEndedError):
                await session.execute("x", tools)
    finally:
        release.set()


async def test_closing_a_session_frees_its_globals(runtime: Any) -> None:
    class Thing:
        pass

    refs: list[weakref.ref[Thing]] = []

    def make() -> Thing:
        thing = Thing()
        refs.append(weakref.ref(thing))
        return thing

    session = runtime.session()

    # tool results and extra_globals reach the snippet as copies, functions as they
    # are: the host object is handed over in a function's closure
    def hold(thing: Thing) -> Any:
        return lambda: thing

    holder = hold(make())
    await session.execute("keep = holder", {}, extra_globals={"holder": holder})
    del holder
    gc.collect()
    assert refs[0]() is not None
    await session.aclose()
    gc.collect()
    assert refs[0]() is None


async def test_session_names_kept_from_earlier_executions_report_to_the_current_one(
    runtime: Any,
) -> None:
    def add(a: int, b: int) -> int:
        return a + b

    tools = {"add": DirectProjection("add", add)}
    async with runtime.session() as session:
        await session.execute("p = print\nt = add", tools)
        result = await session.execute("p('via p')\nt(a=1, b=2)", tools)
        assert result.stdout == "via p\n"
        assert [c.arguments for c in result.tool_calls] == [{"a": 1, "b": 2}]


def test_control_never_injects_outside_snippet_state() -> None:
    """The stop lands only while snippet code runs: a host call in progress completes,
    the stop is raised right after it, and a finished execution cannot be stopped."""
    control = Control()
    finished = threading.Event()
    outcome: list[str] = []

    def job() -> bool:  # the structure of the runtime's job: retry until finish()
        started = False
        while True:
            try:
                if not started:
                    started = True
                    try:
                        control.enter()
                        control.enter_host()
                        time.sleep(0.2)  # "host code": must not be interrupted
                        outcome.append("host call completed")
                        control.leave_host()
                    except ExecutionInterrupted:
                        outcome.append("stopped after the host call")
                stopped = control.finish()
                break
            except ExecutionInterrupted:
                continue
        finished.set()
        return not stopped

    submit(job)
    assert wait_until(lambda: control.state != SNIPPET and control.thread_id != 0)
    assert control.request_stop("test")
    assert finished.wait(5)
    assert outcome == ["host call completed", "stopped after the host call"]
    assert not control.request_stop("again")


async def test_closing_a_session_stops_its_running_execution(runtime: Any) -> None:
    session = runtime.session()
    await session.execute("x = 1", {})
    errors: list[BaseException] = []

    async def run() -> None:
        try:
            await session.execute("while True:\n    x += 1", {}, timeout=30)
        except RuntimeClosedError as exc:
            errors.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await anyio.sleep(0.2)
        await session.aclose()
    assert len(errors) == 1 and "session" in str(errors[0])
    assert wait_until(lambda: not busy_snippet_threads())


async def test_pending_async_tool_calls_are_cancelled_at_the_timeout(runtime: Any) -> None:
    cancelled = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    tools = {"slow": DirectProjection("slow", slow)}
    for code in ("slow()", "import asyncio\nawait asyncio.gather(slow(), slow())"):
        cancelled.clear()
        # the calls must have started before the deadline: 2 s is ample on a loaded machine
        result = await runtime.execute(code, tools, timeout=2)
        assert result.timed_out and result.tool_calls, result
        with anyio.fail_after(5):
            await cancelled.wait()
        assert all(not call.ok for call in result.tool_calls)


async def test_reserved_extra_global_names_raise_before_running(runtime: Any) -> None:
    with pytest.raises(ValueError, match="reserved"):
        await runtime.execute("print(1)", {}, extra_globals={"_print_": print})
    assert (await runtime.execute("print(1)", {})).stdout == "1\n"


async def test_the_stop_never_lands_inside_a_running_tool(runtime: Any) -> None:
    finished = threading.Event()

    def crunch() -> int:
        end = time.monotonic() + 5
        n = 0
        while time.monotonic() < end:  # pure-Python work: a bytecode boundary every step
            n += 1
        finished.set()
        return n

    tools = {"crunch": DirectProjection("crunch", crunch)}
    started = time.monotonic()
    result = await runtime.execute("crunch()\nwhile True:\n    pass", tools, timeout=0.2)
    # the result comes at the deadline, before the tool's 5 s of work end
    assert time.monotonic() - started < 0.2 + 4
    assert result.timed_out
    assert await anyio.to_thread.run_sync(finished.wait, 30)
    assert wait_until(lambda: not busy_snippet_threads())


async def test_tasks_left_behind_by_a_failing_async_snippet_are_cancelled(runtime: Any) -> None:
    code = (
        "import asyncio\n"
        "async def worker():\n"
        "    try:\n"
        "        await asyncio.sleep(30)\n"
        "    finally:\n"
        "        print('cleaned up')\n"
        "t = asyncio.create_task(worker())\n"
        "await asyncio.sleep(0)\n"
        "1 / 0"
    )
    result = await runtime.execute(code, {}, timeout=5)
    assert result.error_type == "ZeroDivisionError"
    assert result.stdout == "cleaned up\n"


async def test_warning_hooks_chain_with_third_party_hooks(runtime: Any) -> None:
    original = warnings.showwarning
    seen: list[str] = []

    def bottom(*args: Any) -> None:
        seen.append("bottom")

    try:
        warnings.showwarning = bottom
        await runtime.execute("1", {})  # ptcbox wraps bottom
        ours = warnings.showwarning

        def third_party(*args: Any) -> None:  # installed later, wrapping ptcbox's hook
            seen.append("third party")
            ours(*args)

        warnings.showwarning = third_party
        await runtime.execute("1", {})  # ptcbox wraps the third-party hook in turn
        warnings.showwarning("host warning", UserWarning, "host.py", 1)
        assert seen == ["third party", "bottom"]  # each hook once, no loop
    finally:
        warnings.showwarning = original


async def test_errors_in_snippet_finalizers_go_to_its_stderr(runtime: Any) -> None:
    code = (
        "def g():\n"
        "    try:\n"
        "        yield 1\n"
        "    finally:\n"
        "        raise ValueError('in finalizer')\n"
        "x = g()\n"
        "next(x)\n"
        "del x\n"
        "print('after')"
    )
    result = await runtime.execute(code, {})
    assert result.ok, result.error
    assert result.stdout == "after\n"
    assert "Exception ignored in a finalizer: ValueError: in finalizer" in result.stderr


async def test_tools_handed_to_host_code_work_only_in_the_snippet_thread(
    runtime: Any, trusted: Any
) -> None:
    def add(a: int, b: int) -> int:
        return a + b

    def apply(fn: Any) -> Any:
        return fn(a=1, b=2)

    tools = {"add": DirectProjection("add", add), "apply": DirectProjection("apply", apply)}
    # restricted policies hand tools plain data: a callable never reaches host code
    refused = await runtime.execute("apply(fn=add)", tools)
    assert refused.error_type == "TypeError"  # the tool's own exception type
    assert refused.error is not None
    assert "'str' object is not callable" in refused.error
    # the trusted policy passes live objects; a tool may call a snippet tool back
    runtime = trusted
    same_thread = await runtime.execute("apply(fn=add)", tools)
    assert same_thread.value == 3
    assert [c.name for c in same_thread.tool_calls] == ["apply", "add"]  # start order
    elsewhere = await runtime.execute("import asyncio\nawait apply(fn=add)", tools)
    assert elsewhere.error_type == "RuntimeError"
    assert elsewhere.error is not None
    assert "can only be called by the snippet" in elsewhere.error


async def test_snippet_callback_inside_a_tool_runs_on_until_the_tool_returns(
    trusted: Any,
) -> None:
    """What is guaranteed when a tool calls snippet code back (the documented limit):
    the result still comes at the deadline, and the thread stops right after the tool
    returns, before any more snippet code runs."""

    def apply(fn: Any) -> Any:
        return fn()

    code = (
        "import time\n"
        "def slow():\n"
        "    end = time.monotonic() + 5\n"
        "    while time.monotonic() < end:\n"
        "        pass\n"
        "    return 'callback done'\n"
        "print(apply(fn=slow))\n"
        "print('after the tool')"
    )
    started = time.monotonic()
    result = await trusted.execute(code, {"apply": DirectProjection("apply", apply)}, timeout=0.2)
    assert time.monotonic() - started < 0.2 + 4  # at the deadline, before the 5 s callback
    assert result.timed_out and result.stdout == ""
    assert wait_until(lambda: not busy_snippet_threads(), deadline_s=30)


async def test_code_that_ends_after_the_deadline_while_the_loop_was_blocked_timed_out(
    runtime: Any,
) -> None:
    """A C call holding the GIL blocks the host's loop, deadline included; simulated here
    by blocking the loop itself while the snippet runs past its deadline and finishes.
    Before, the late result came back as a success; it is a timeout."""
    task = asyncio.ensure_future(
        runtime.execute("import time\ntime.sleep(0.4)\nprint('late')\n7", {}, timeout=0.1)
    )
    await asyncio.sleep(0)  # the snippet starts
    time.sleep(1.0)  # the loop cannot run: the snippet finishes at 0.4 s, after 0.1 s
    result = await task
    assert result.timed_out
    assert result.error_type == "TimeoutError"
    assert result.value is None
    assert result.error is not None and "held the GIL" in result.error
    assert result.stdout == "late\n"

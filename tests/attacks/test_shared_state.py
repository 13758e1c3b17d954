"""Issue 12: process-wide and thread-wide stdlib state must not carry a snippet's objects
to other executions or to the host (ThreadRuntime; SubprocessRuntime where it applies).

Attacks that poison process-wide state run in a child Python, so that a success cannot
poison the test process itself. The positive control of each is the same snippet under
``SandboxPolicy.trusted()``, which has no such protection, or plain host code.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import fractions
import logging
import threading
from typing import Any

import pytest

from attacks._child import child_output
from ptcbox import ThreadRuntime, resolve_tools
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# == 1. typing's subscription caches (items 1 and 2) =====================================

TYPING_CHILD = """
import asyncio, sys, typing
from ptcbox import ThreadRuntime, resolve_tools
from ptcbox.sandbox import SandboxPolicy
trusted = sys.argv[1] == "trusted"
policy = SandboxPolicy.trusted() if trusted else SandboxPolicy()
calls = []
def secret_tool() -> str:
    \"\"\"A's tool.\"\"\"
    calls.append("called")
    return "tool-ran"
A = '''
import typing
class K:
    def __init__(self, tool):
        self.secret = "A-secret"
        self.tool = tool
    def __call__(self):
        pass
    def __hash__(self):
        return hash(complex)
    def __eq__(self, other):
        return True
typing.Optional[K(secret_tool)]
typing.List[K(secret_tool)]
'''
B = '''
import typing
class Probe:
    def __call__(self):
        pass
    def __hash__(self):
        return hash(complex)
    def __eq__(self, other):
        return True
got = typing.get_args(typing.List[Probe()])[0]
print(type(got).__name__, getattr(got, "secret", None))
if hasattr(got, "tool"):
    print(got.tool())
'''
async def main():
    async with ThreadRuntime(policy) as runtime:
        a = await runtime.execute(A, resolve_tools([secret_tool]), timeout=10)
        b = await runtime.execute(B, {}, timeout=10)
    print("A", a.ok, a.error)
    print("B", b.ok, repr(b.stdout), b.error)
asyncio.run(main())
print("host Optional[complex] args", typing.get_args(typing.Optional[complex]))
print("host List[complex] args", typing.get_args(typing.List[complex]))
print("tool calls", calls)
"""


@pytest.mark.parametrize("mode", ["trusted", "restricted"])
def test_typing_caches_carry_no_snippet_object(mode: str) -> None:
    """Execution A subscribes typing with an object that hashes like ``str`` and equals
    everything; B's equal probe must not get A's object (and A's tool) back, nor may the
    host's own ``Optional[complex]``. Trusted code has no protection: the positive control."""
    out = child_output(TYPING_CHILD, mode, timeout=30)
    assert "A True None" in out, out
    if mode == "trusted":  # the leak is real without the guard
        assert "K A-secret" in out, out
        # ... but A's tool is refused: it is not in B's namespace (item 5)
        assert "secret_tool() is not a tool of this execution" in out, out
        assert "host Optional[complex] args (<class 'complex'>, <class 'NoneType'>)" not in out, out
        return
    assert "B True 'Probe None\\n' None" in out, out
    assert "host Optional[complex] args (<class 'complex'>, <class 'NoneType'>)" in out, out
    assert "host List[complex] args (<class 'complex'>,)" in out, out
    assert "tool calls []" in out, out


# == 2. the decimal context (item 3) =====================================================

DECIMAL_CHILD = """
import asyncio, decimal, gc, threading
from ptcbox import ThreadRuntime, resolve_tools
D = decimal.Decimal
def price() -> str:
    \"\"\"A host tool: a price with tax.\"\"\"
    return str(D("1234.56") * D("1.19"))
OPEN = '''
import decimal
def g():
    with decimal.localcontext(prec=2):
        with decimal.localcontext():
            yield
it = g()
next(it)
keep = [it]
keep.append(keep)
print(decimal.Decimal("1234.56") * decimal.Decimal("1.19"), price())
'''
CHECK = 'import decimal\\nprint(decimal.Decimal("1234.56") * decimal.Decimal("1.19"), price())'
def control():  # the same generator in plain Python, in a thread: it leaks
    out = []
    def body():
        namespace = {}
        exec(OPEN.replace("price()", "0"), namespace)
        out.append(str(D("1234.56") * D("1.19")))
        namespace["keep"][0].close()  # not left for the collector below
    t = threading.Thread(target=body)
    t.start()
    t.join()
    print("control", out[0])
async def main():
    gc.disable()
    tools = resolve_tools([price])
    before = decimal.getcontext()
    async with ThreadRuntime() as runtime:
        a = await runtime.execute(OPEN, tools, timeout=10)
        print("A", a.stdout.strip(), a.error)
        for _ in range(3):  # the pool reuses A's thread
            b = await runtime.execute(CHECK, tools, timeout=10)
            print("B", b.stdout.strip(), b.error)
        gc.collect()  # closes A's generator in the host's loop thread, in this task
        print("task", D("1234.56") * D("1.19"), decimal.getcontext() is before)
control()
asyncio.run(main())
"""


def test_decimal_context_is_private_to_each_execution_and_tool_call() -> None:
    """A ``localcontext()`` left open in a suspended generator (and exited later by the
    collector, in C) changes neither later executions, nor host tools, nor host tasks."""
    out = child_output(DECIMAL_CHILD, timeout=30)
    assert "control 1.5E+3" in out, out  # plain Python: the thread keeps prec=2
    assert "A 1.5E+3 1469.1264 None" in out, out  # the snippet's own context; the tool's
    assert out.count("B 1469.1264 1469.1264 None") == 3, out
    assert "task 1469.1264 True" in out, out


# == 3. context variables of reused tool threads (item 4, both runtimes) =================

REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="unset")


def remember(value: str) -> str:
    """A sync host tool that sets a context variable and reports what it saw first."""
    seen = REQUEST.get()
    REQUEST.set(value)
    return seen


async def aremember(value: str) -> str:
    """The same, as an async tool."""
    seen = REQUEST.get()
    REQUEST.set(value)
    return seen


async def test_a_tool_never_sees_context_variables_an_earlier_call_set(
    make_runtime: Any, runtime_name: str
) -> None:
    """Each tool call runs in a fresh copy of the caller's context: what one execution's
    tool sets is not seen by a later execution's tools (sync tools run in reused
    threads), nor by the next call of the same execution; the caller's value is."""
    runtime = make_runtime()
    tools = resolve_tools([remember, aremember])
    codes = (
        "print(remember(value='A'), remember(value='A2'))",
        "print(aremember(value='B'))",
        "import asyncio\nprint(*await asyncio.gather(remember(value='C'), aremember(value='D')))",
    )
    outputs = []
    token = REQUEST.set("caller")
    try:
        for code in codes * 3:
            result = await runtime.execute(code, tools, timeout=10)
            assert result.ok, result.error
            outputs += result.stdout.split()
    finally:
        REQUEST.reset(token)
    assert outputs == ["caller"] * 15, outputs
    # control: calls that share a context do see what an earlier one set
    context = contextvars.copy_context()
    context.run(remember, "x")
    assert context.run(remember, "y") == "x"


PER_THREAD = threading.local()


def stash(value: str) -> str:
    """A sync host tool that keeps per-thread data (as many libraries do) and reports
    what its thread held before."""
    seen = getattr(PER_THREAD, "value", "unset")
    PER_THREAD.value = value
    return str(seen)


LOCAL_CODES = (
    "print(stash(value='A1'), stash(value='A2'))",  # sync code: the snippet's thread
    "import asyncio\nprint(*await asyncio.gather(stash(value='B1'), stash(value='B2')))",
    "import asyncio\nasync def main():\n    return await stash(value='C')\n"
    "print(asyncio.run(main()))",
)


async def test_a_tool_never_sees_thread_locals_an_earlier_execution_set(
    make_runtime: Any, runtime_name: str
) -> None:
    """A ``threading.local`` a sync tool sets in one execution is not seen by a later,
    unrelated execution's tools (issue 12, item 4): the snippet's own thread
    (ThreadRuntime), the channel thread (SubprocessRuntime) and the threads of sync tools
    called from asyncio code serve one execution each. Control: within one execution
    the tool's thread keeps what it set (the first line's second call sees ``A1``)."""
    runtime = make_runtime()
    tools = resolve_tools([stash])
    first: list[str] = []
    later: list[str] = []
    for _ in range(4):
        for code in LOCAL_CODES:
            result = await runtime.execute(code, tools, timeout=10)
            assert result.ok, result.error
            words = result.stdout.split()
            first.append(words[0])
            later += words[1:]
    assert first == ["unset"] * 12, first
    assert later[::2] == ["A1"] * 4, later  # control: the same thread in one execution
    others = [w for i, w in enumerate(later) if i % 2]
    assert set(others) <= {"unset", "B1"}, others  # gather: one thread or two


async def test_host_callables_in_extra_globals_leave_no_thread_locals_either(
    make_runtime: Any, runtime_name: str
) -> None:
    """A snippet thread in which no host code ran (no tool call, no ``extra_globals``) may
    serve the next execution; one where a host function from ``extra_globals`` ran
    (it stores per-thread data too) never does."""
    if runtime_name != "thread":
        pytest.skip("extra_globals cross to the worker as data")
    runtime = make_runtime()
    seen = []
    for _ in range(6):
        result = await runtime.execute("print(stash('E'))", {}, extra_globals={"stash": stash})
        assert result.ok, result.error
        seen.append(result.stdout.strip())
        quiet = await runtime.execute("print(1)", {})  # no host code: its thread is kept
        assert quiet.stdout == "1\n", quiet.error
    assert seen == ["unset"] * 6, seen


def test_thread_locals_do_cross_when_a_thread_is_reused() -> None:
    """The control of the test above: a reused thread (a plain thread pool) hands what
    one task's tool stored to the next task."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(stash, "first").result()
        assert pool.submit(stash, "second").result() == "first"


# == 4. a tool removed from a session's namespace (item 5) ===============================


async def test_a_session_name_kept_from_an_earlier_execution_cannot_call_a_removed_tool(
    make_runtime: Any, runtime_name: str
) -> None:
    """A tool callable checks at each call that its tool is in the current execution's
    namespace; the control: while it is, the kept name works."""
    runtime = make_runtime()
    calls: list[str] = []

    def secret(q: str) -> str:
        """A tool the next execution does not get."""
        calls.append(q)
        return "s:" + q

    async with runtime.session() as session:
        kept = await session.execute("t = secret\nprint(t(q='a'))", resolve_tools([secret]))
        assert kept.stdout == "s:a\n", kept.error
        again = await session.execute("print(t(q='b'))", resolve_tools([secret]))
        assert again.stdout == "s:b\n", again.error  # control: still in the namespace
        removed = await session.execute("print(t(q='c'))", {})
        awaited = await session.execute("import asyncio\nawait t(q='d')", {})
        after = await session.execute("print(t.__name__)", {})  # the session goes on
        back = await session.execute("print(t(q='e'))", resolve_tools([secret]))
    assert not removed.ok and removed.stdout == ""
    assert calls == ["a", "b", "e"] and back.stdout == "s:e\n", back.error
    assert after.stdout == "secret\n", after.error
    # the tool callable's own check, in both runtimes alike (the worker's stub used to
    # call anyway; the host took the unknown name for a forged call and ended the session;
    # a forged call still does: test_redteam2's "the worker called an unknown tool")
    for result, line in ((removed, 1), (awaited, 2)):
        assert result.error_type == "RuntimeError", result.error
        assert (
            str(result.error)
            .rstrip()
            .endswith(
                "RuntimeError: secret() is not a tool of this execution (it is not in the "
                "namespace the execution was given); call only the tools listed for this run"
            )
        )
        assert f'File "<snippet>", line {line}' in str(result.error)


# == 5. exception attributes that carry the sandbox's internals (item 6) =================

ATTRIBUTE_ERROR_OBJ = """
import fractions, operator
def obj_of(f):
    try:
        f()
    except AttributeError as e:
        return e.obj
print(obj_of(lambda: operator.pow.nope) is operator.pow)
inner = obj_of(lambda: fractions.Fraction.nope)
print(inner is fractions.Fraction)
inner("1e2000000")
"""


async def test_attribute_error_obj_is_the_object_the_snippet_read(make_runtime: Any) -> None:
    """``AttributeError.obj`` of a failed read is the object the snippet holds, not the
    real class or function inside a sandbox wrapper (the unchecked ``Fraction``,
    ``Limits.pow`` callable with a forged ``self``): the size check still refuses."""
    runtime = make_runtime()
    result = await runtime.execute(ATTRIBUTE_ERROR_OBJ, {}, timeout=10)
    assert result.stdout == "True\nTrue\n", (result.stdout, result.error)
    assert result.error_type == "ArithmeticLimitExceeded", result.error
    assert 'line 11, in <module>\n    inner("1e2000000")' in str(result.error), result.error
    # Control: the real class the wrapper holds (what ``e.obj`` was before the fix) has no
    # size check: it builds the 6.6-million-bit number the wrapper refuses. (The refusal
    # above is the wrapper's: the same as the snippet's own ``fractions.Fraction``.)
    assert fractions.Fraction("1e2000000").numerator.bit_length() > 6_000_000
    same = await runtime.execute(
        ATTRIBUTE_ERROR_OBJ.replace('inner("1e2000000")', 'fractions.Fraction("1e2000000")'),
        {},
        timeout=10,
    )
    assert same.error_type == "ArithmeticLimitExceeded", same.error
    assert str(same.error).endswith(str(result.error).splitlines()[-1])


# == 6. event loops a snippet makes (item 7) =============================================

UNRETRIEVED = """
import asyncio
async def boom():
    raise ValueError("forged\\nERROR:host:a forged record")
async def main():
    task = asyncio.create_task(boom())
    await asyncio.sleep(0.01)
asyncio.run(main())
print("done")
"""


async def test_a_snippet_loop_reports_to_the_snippet_stderr_not_the_host_logger(
    make_runtime: Any, runtime_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """'Task exception was never retrieved' of the snippet's ``asyncio.run`` loop goes
    to the execution's stderr; the host's ``asyncio`` logger gets nothing. Control:
    trusted code's loop logs through the host's logger, as plain asyncio does."""
    if runtime_name != "thread":
        pytest.skip("the worker's logger is the worker's own")
    with caplog.at_level(logging.DEBUG, logger="asyncio"):
        result = await make_runtime().execute(UNRETRIEVED, {}, timeout=10)
        assert result.stdout == "done\n", result.error
        assert "Task exception was never retrieved" in result.stderr
        assert "ValueError: forged" in result.stderr
        reports = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert not reports, caplog.text
        control = await make_runtime(SandboxPolicy.trusted()).execute(UNRETRIEVED, {}, timeout=10)
        assert control.stdout == "done\n", control.error
        assert "Task exception was never retrieved" in caplog.text


TIMEOUT_CHILD = """
import asyncio
from ptcbox import ThreadRuntime
CODE = '''
import asyncio
async def spin(i):
    while True:
        await asyncio.sleep(0)
async def main():
    await asyncio.gather(*(spin(i) for i in range(20)))
asyncio.run(main())
'''
async def main():
    async with ThreadRuntime() as runtime:
        result = await runtime.execute(CODE, {}, timeout=0.5)
        print("result", result.error_type, repr(result.stderr))
        await asyncio.sleep(0.5)
asyncio.run(main())
import gc
gc.collect()
print("end")
"""


def test_a_snippet_loop_stopped_at_its_timeout_prints_nothing_on_the_host() -> None:
    out = child_output(TIMEOUT_CHILD, timeout=30)
    assert out.startswith("result TimeoutError ''\nend\n"), out
    assert out == "result TimeoutError ''\nend\n", out


# == 7. extra_globals (item 8) ===========================================================


async def test_extra_globals_reach_the_snippet_as_copies(
    make_runtime: Any, runtime_name: str
) -> None:
    """A snippet mutating the data it got through ``extra_globals`` changes its own copy,
    never the host's objects. Control: trusted code gets the live objects."""
    rows: list[int] = [1, 2]
    meta = {"k": "v", "nested": [[5]]}
    code = "rows.append(3)\nmeta['k'] = 'x'\nmeta['nested'][0].append(4)\nprint(rows, meta['k'])"
    result = await make_runtime().execute(code, {}, extra_globals={"rows": rows, "meta": meta})
    assert result.stdout == "[1, 2, 3] x\n", result.error
    assert rows == [1, 2]
    assert meta == {"k": "v", "nested": [[5]]}
    if runtime_name == "thread":
        control = await make_runtime(SandboxPolicy.trusted()).execute(
            code, {}, extra_globals={"rows": rows, "meta": meta}
        )
        assert control.ok, control.error
        assert rows == [1, 2, 3]
        assert meta == {"k": "x", "nested": [[5, 4]]}


# == 8. a catastrophic regular expression (item 9) =======================================


REGEX_CHILD = """
import asyncio, sys, time
from ptcbox import ThreadRuntime
code, deadline = sys.argv[1], float(sys.argv[2])
gaps = []
async def tick():
    last = time.perf_counter()
    while True:
        await asyncio.sleep(0.01)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
async def main():
    async with ThreadRuntime() as runtime:
        ticker = asyncio.ensure_future(tick())
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        result = await runtime.execute(code, {}, timeout=deadline)
        elapsed = time.perf_counter() - started
        ticker.cancel()
    matched = result.stdout == "None\\n"
    print("result", result.timed_out, "matched", matched, "after", elapsed, "max gap", max(gaps))
asyncio.run(main())
"""


async def test_a_catastrophic_regex_obeys_the_deadline_and_leaves_the_host_responsive(
    make_runtime: Any, runtime_name: str
) -> None:
    """``re.match(r"(a+)+$", "a" * 27 + "b")`` backtracks exponentially in CPython's
    engine, which holds the GIL all along (~8 s here; minutes at 32 characters). The
    sandbox's ``re`` matches with the execution's time limit, releasing the GIL: the
    result comes back by the deadline and the host's loop keeps ticking."""
    if runtime_name != "thread":
        pytest.skip("the worker is killed at the deadline")
    # Control: with CPython's own engine (switch ``regex``) a shorter input, ~2 s of
    # backtracking unloaded, holds the GIL past a 0.3 s deadline: the result comes back
    # late and the host's loop stalls for most of the match (load only makes both longer).
    short = 'import re\nprint(re.match(r"(a+)+$", "a" * 25 + "b"))'
    control = child_output(REGEX_CHILD, short, "0.3", timeout=60, ablate="regex")
    words = control.split()
    assert words[:2] == ["result", "True"], control
    after, stall = float(words[words.index("after") + 1]), float(words[-1])
    assert after > 3 * 0.3, control
    assert stall > 2 * 0.3, control
    code = 'import re\nprint(re.match(r"(a+)+$", "a" * 27 + "b"))'
    out = child_output(REGEX_CHILD, code, "1", timeout=60)
    words = out.split()
    timed_out, matched = words[1] == "True", words[3] == "True"
    elapsed, stall = float(words[words.index("after") + 1]), float(words[-1])
    assert matched or timed_out, out
    assert elapsed < 1 + 3, out
    assert stall < 2.0, out


async def test_cpu_clocks_start_at_each_execution_in_the_thread_runtime() -> None:
    """redteam24: ``time.process_time()`` read the host's CPU time and ``thread_time()``
    that of a pool thread earlier executions ran on: the next execution read how much
    CPU the earlier one used (0.3 s here). Positive control: under the trusted policy
    (CPython's own ``time``) the probe reads at least the 0.3 s the burn used in this
    process; under the default policy both clocks count from the execution's start
    (under 0.3 s: the window from ``import time`` to the probe, whatever other threads of
    a loaded test process do in it, is far shorter)."""
    burn = (
        "import time\nstart = time.thread_time()\n"
        "while time.thread_time() - start < 0.3:\n    pass\n"
    )
    probe = "import time\nprint(time.process_time() < 0.3, time.thread_time() < 0.3)"
    async with ThreadRuntime(SandboxPolicy.trusted()) as runtime:
        assert (await runtime.execute(burn, {})).ok
        control = await runtime.execute(probe, {})
    async with ThreadRuntime() as runtime:
        first = await runtime.execute(burn, {})
        second = await runtime.execute(probe, {})
    assert control.stdout.startswith("False "), control
    assert first.ok, first.error
    assert second.stdout == "True True\n", second

"""The host's pre-flight check and compile of a new snippet (``subprocess/_prepared.py``).

A short new snippet (up to ``HOST_INLINE_MAX_CHARS``) on a machine without an idle CPU
is checked, then compiled by the host from the tree the check parsed, before any worker
is taken: a refusal takes no worker, and the worker gets the code object. A longer one,
or a short one while a CPU is idle, is sent as source first and checked while the worker
compiles it, before anything the worker sends is read. Either way a refusal comes
before any tool runs, however early the worker calls one, and a worker that started a
refused snippet is never used again.
"""

from __future__ import annotations

import ast
import asyncio
import time
import warnings
from typing import Any

import pytest

from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.runtimes._shared._host import ToolTable
from ptcbox.runtimes._shared._preflight import preflight_parsed
from ptcbox.runtimes._wire import FrameDecoder, parse_message
from ptcbox.runtimes.subprocess import _compile, _execution, _prepared
from ptcbox.runtimes.subprocess._compile import HOST_INLINE_MAX_CHARS, host_compiled
from ptcbox.runtimes.subprocess.worker._config import decode_compiled
from ptcbox.sandbox import SandboxPolicy, compile_snippet
from runtimes._leaks import no_leaks

pytestmark = pytest.mark.anyio

_BAD = 'send_email(to="ops@example.com", subject="hi")\nprint("after")\nget_weather(town="Oslo")\n'
_LONG = "#" * HOST_INLINE_MAX_CHARS + "\n"  # a trailing comment: past the inline compile


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _tools(sent: list[str]) -> dict[str, DirectProjection]:
    def send_email(to: str, subject: str) -> str:
        """A side effect the check must prevent."""
        sent.append(to)
        return "sent"

    def get_weather(city: str) -> dict[str, Any]:
        """Weather in a city."""
        return {"city": city}

    return {f.__name__: DirectProjection(f.__name__, f) for f in (send_email, get_weather)}


def _record_runs(monkeypatch: pytest.MonkeyPatch, order: list[str], frames: list[bytes]) -> None:
    real_run = _execution.HostExecution.run

    async def run(self: Any, frame: bytes, *args: Any, **kwargs: Any) -> Any:
        order.append("run")
        frames.append(frame)
        return await real_run(self, frame, *args, **kwargs)

    monkeypatch.setattr(_execution.HostExecution, "run", run)


def _record_checks(monkeypatch: pytest.MonkeyPatch, name: str, order: list[str]) -> None:
    """Append ``"check"`` to ``order`` at each call of ``_prepared.<name>`` (the check
    that overlaps the worker, ``preflight``, or the one run first, ``preflight_parsed``)."""
    real_check = getattr(_prepared, name)

    def check(*args: Any) -> Any:
        order.append("check")
        return real_check(*args)

    monkeypatch.setattr(_prepared, name, check)


def _run_message(frame: bytes) -> dict[str, Any]:
    """The ``run`` message of a frame (after an ``id`` message in reuse mode)."""
    for kind, payload in FrameDecoder().feed(frame):
        message: dict[str, Any] = parse_message(kind, payload)
        if message["t"] == "run":
            return message
    raise AssertionError("no run message")


@pytest.mark.parametrize("uses", [1, 50], ids=["fresh", "reuse"])
async def test_a_slow_check_of_a_long_snippet_still_refuses_before_the_first_call(
    monkeypatch: pytest.MonkeyPatch, uses: int
) -> None:
    checked: list[float] = []
    real = _prepared.preflight

    def slow_check(*args: Any) -> Any:
        time.sleep(0.3)  # the worker has compiled and sent its first call meanwhile
        checked.append(time.perf_counter())
        return real(*args)

    monkeypatch.setattr(_prepared, "preflight", slow_check)
    sent: list[str] = []
    async with no_leaks(), SubprocessRuntime(min_idle=1, max_executions_per_worker=uses) as rt:
        await rt.start()
        code = _BAD + f"# {time.perf_counter_ns()}\n" + _LONG
        result = await rt.execute(code, _tools(sent))
        assert checked, "the check did not run"
        assert sent == [] and result.tool_calls == () and result.stdout == ""
        assert result.error_type == "TypeError"
        assert "get_weather() got an unexpected keyword argument 'town'" in (result.error or "")
        # the worker that began the snippet is gone; the next execution gets another
        fine = await rt.execute("send_email(to='a@b', subject='s')\nprint('ok')\n", _tools(sent))
        assert fine.ok, fine.error
        assert fine.stdout == "ok\n" and sent == ["a@b"]


async def test_the_check_of_a_long_new_snippet_runs_once_its_frame_is_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The overlap itself: the check runs inside ``HostExecution.run`` (which sends the
    frame first), once; a repeated snippet is checked before, from its cached analysis."""
    order: list[str] = []
    _record_checks(monkeypatch, "preflight", order)
    _record_runs(monkeypatch, order, [])
    code = f"print(get_weather(city='x'))  # {time.perf_counter_ns()}\n" + _LONG
    async with SubprocessRuntime(min_idle=1, max_executions_per_worker=5) as rt:
        for _ in range(3):  # new, seen (compiled off the loop), then a cached frame
            result = await rt.execute(code, _tools([]))
            assert result.ok, result.error
            assert result.stdout == "{'city': 'x'}\n"
    assert order[:4] == ["run", "check", "run", "check"]
    assert order[4:] in (["check", "run"], ["run", "check"])


@pytest.mark.parametrize("uses", [1, 50], ids=["fresh", "reuse"])
async def test_a_short_new_snippet_is_checked_and_compiled_before_a_worker_is_taken(
    monkeypatch: pytest.MonkeyPatch, uses: int
) -> None:
    """Its first run carries the host's code object; a refusal takes no worker at all."""
    order: list[str] = []
    frames: list[bytes] = []
    _record_checks(monkeypatch, "preflight_parsed", order)
    monkeypatch.setattr(_prepared, "a_cpu_is_free", lambda: False)
    _record_runs(monkeypatch, order, frames)
    sent: list[str] = []
    code = f"print(get_weather(city='x'))  # {time.perf_counter_ns()}\n"
    async with no_leaks(), SubprocessRuntime(min_idle=1, max_executions_per_worker=uses) as rt:
        result = await rt.execute(code, _tools(sent))
        assert (result.ok, result.stdout) == (True, "{'city': 'x'}\n"), result.error
        assert order == ["check", "run"]
        assert _run_message(frames[0])["compiled"] is not None  # the first sight
        refused = await rt.execute(_BAD + f"# {time.perf_counter_ns()}\n", _tools(sent))
        assert refused.error_type == "TypeError" and "town" in (refused.error or "")
        assert order == ["check", "run", "check"]  # no worker ran it
        assert sent == [] and refused.tool_calls == () and refused.stdout == ""


@pytest.mark.parametrize(
    "code",
    [
        "x = [i * i for i in range(4)]\nprint(f'{x!r:>20}')\nsum(x)\n",
        "async def f(n):\n    return n * 2\nvalue = await f(3)\nvalue + 1\n",
        "import json\nrows = tool(limit=3)\njson.dumps({'n': len(rows)})\n",
        "best = max({'a': 1}, key=lambda k: k)\n@staticmethod\ndef g(*a, **k): ...\nbest\n",
        "try:\n    1 / 0\nexcept* ZeroDivisionError:\n    pass\n",
        "match [1, 2]:\n    case [a, *rest] if a:\n        print(a, rest)\n",
    ],
)
def test_the_code_compiled_from_the_checks_tree_is_what_the_worker_compiles(code: str) -> None:
    """Exactness: the host compiles from the tree the pre-flight check parsed (with its
    flags), and the worker gets the very code object its own compile would make."""

    def tool(limit: int) -> list[int]:
        """Rows."""
        return []

    specs = ToolTable().resolve({"tool": DirectProjection("tool", tool)})
    for policy in (SandboxPolicy(), SandboxPolicy.trusted()):
        source = f"{code}# {policy.restricted} {time.perf_counter_ns()}\n"
        failure, tree = preflight_parsed(source, specs, set())
        assert failure is None and tree is not None
        fields = host_compiled(source, policy, block=False, inline=True, tree=tree)
        shipped = decode_compiled(fields)
        own = compile_snippet(source, policy, filename="<snippet>", os_enforced_limits=True)
        assert shipped is not None
        assert shipped.code == own.code
        assert (shipped.is_async, shipped.has_value) == (own.is_async, own.has_value)


def test_a_refused_or_broken_short_snippet_is_left_to_the_worker() -> None:
    """The host refuses nothing itself: the worker compiles and reports as always."""
    policy = SandboxPolicy()
    for code in ("obj.__globals__\n", "def f(:\n", "x = 1\0\n"):
        source = f"{code}# {time.perf_counter_ns()}\n"
        assert host_compiled(source, policy, block=False, inline=True) is None
    long = "x = 1\n" + _LONG
    assert host_compiled(long, policy, block=False, inline=True) is None  # first sight


async def test_a_short_snippet_gives_the_same_results_on_both_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Host-compiled at first sight (short) or compiled by the worker (padded past the
    inline limit with a trailing comment: the same line numbers)."""
    monkeypatch.setattr(_prepared, "a_cpu_is_free", lambda: False)
    cases = [
        "print(get_weather(city='Oslo'))\n",
        "get_weather(city=1 / 0)\n",
        "().__class__.__bases__\n",
        "import os\n",
        "def f(:\n",
        "async def f():\n    return await get_weather(city='a')\nawait f()\n",
        "raise ValueError('no')\n",
    ]
    async with no_leaks(), SubprocessRuntime(min_idle=1) as runtime:
        for case in cases:
            code = f"{case}# {time.perf_counter_ns()}\n"
            short = await runtime.execute(code, _tools([]))
            long = await runtime.execute(code + _LONG, _tools([]))
            assert (short.ok, short.stdout, short.value, short.error_type) == (
                long.ok,
                long.stdout,
                long.value,
                long.error_type,
            ), case
            assert short.error == long.error, case


async def test_with_an_idle_cpu_a_short_new_snippet_overlaps_its_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The source goes out first (the worker compiles it) and the check follows; a
    refusal still comes before any tool runs, and a session still checks first."""
    order: list[str] = []
    frames: list[bytes] = []
    _record_checks(monkeypatch, "preflight", order)
    monkeypatch.setattr(_prepared, "a_cpu_is_free", lambda: True)
    _record_runs(monkeypatch, order, frames)
    sent: list[str] = []
    code = f"print(get_weather(city='x'))  # {time.perf_counter_ns()}\n"
    async with no_leaks(), SubprocessRuntime(min_idle=1) as rt:
        result = await rt.execute(code, _tools(sent))
        assert (result.ok, result.stdout) == (True, "{'city': 'x'}\n"), result.error
        assert order == ["run", "check"]
        assert _run_message(frames[0])["compiled"] is None  # the worker compiles it
        refused = await rt.execute(_BAD + f"# {time.perf_counter_ns()}\n", _tools(sent))
        assert refused.error_type == "TypeError" and sent == [] and refused.stdout == ""
        async with rt.session() as session:
            again = await session.execute(code + "# session\n", _tools(sent))
        assert again.stdout == "{'city': 'x'}\n"
        assert _run_message(frames[-1])["compiled"] is not None  # checked, host-compiled


@pytest.mark.parametrize(
    ("loadavg", "free"),
    [(b"0.50 0.40 0.30 1/120 4242\n", True), (b"3.10 2.00 1.00 64/130 4242\n", False)],
)
def test_a_cpu_is_free_reads_the_runnable_count(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, loadavg: bytes, free: bool
) -> None:
    path = tmp_path / "loadavg"
    path.write_bytes(loadavg)
    monkeypatch.setattr(_prepared, "_LOADAVG_PATH", str(path))
    assert _prepared.a_cpu_is_free() is free
    path.write_bytes(b"garbled")
    assert _prepared.a_cpu_is_free() is False  # unreadable: the serial path
    monkeypatch.setattr(_prepared, "_LOADAVG_PATH", str(tmp_path / "absent"))
    assert _prepared.a_cpu_is_free() is False


def _folding_bomb() -> str:
    """1 KiB whose ``compile`` folds a 430 KB string into a 256-tuple (and interns every
    reference, scanning the string each time): ~45 ms of CPU, other shapes ~1-3 ms."""
    return "x = (" + "+".join(["'a'*4096"] * 105) + ",)*256\nprint(len(x))\n"


@pytest.mark.parametrize(
    ("code", "inline"),
    [
        (_folding_bomb(), False),
        ("x = ('ab',) * 3\n" + "y = 'c' * 2\n" * 8, False),
        ("x = -(1,) * (2 + 1)\n" + "# *\n" * 8, False),
        ("x = ('ab',) * 3\n", True),  # folds ~2 ms at most with up to 8 stars
        ("x = " + "*".join(["1"] * 150) + "\n", True),  # numbers only
        ("y = 2 * 3\n" * 60, True),
        ("x = 60 * 60 * 24\ny = [1] * 3\nz = x * 2\n", True),  # numbers, a list, a name
        ("def f(*a, **k): return a\nprint(*f(2))\n", True),
    ],
)
def test_a_snippet_that_folds_a_repeated_sequence_is_not_compiled_on_the_loop(
    code: str, inline: bool
) -> None:
    """Constant folding adds repeated sequences without a size limit: such a snippet is
    left to the worker (or the background compile) like a long one; others are not."""
    specs = ToolTable().resolve(_tools([]))
    for parsed in (True, False):  # the check's tree (tools), or none (no tools)
        source = f"{code}# {time.perf_counter_ns()}\n"
        assert len(source) <= HOST_INLINE_MAX_CHARS
        failure, tree = preflight_parsed(source, specs if parsed else {}, set())
        assert failure is None and (tree is not None) == parsed
        fields = host_compiled(source, SandboxPolicy(), block=False, inline=True, tree=tree)
        assert (fields is not None) == inline


async def test_a_folding_bomb_does_not_hold_the_event_loop_for_its_compile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loop's CPU per tick while running it stays below half its compile (it held
    the loop for the whole compile when the host compiled it inline)."""
    monkeypatch.setattr(_prepared, "a_cpu_is_free", lambda: False)
    code = _folding_bomb() + f"# {time.perf_counter_ns()}\n"
    started = time.thread_time()
    compile_snippet(code, SandboxPolicy(), os_enforced_limits=True, cache=False)
    compile_cpu = time.thread_time() - started
    ticks: list[float] = []
    stop = False

    async def tick() -> None:
        while not stop:
            before = time.thread_time()
            await asyncio.sleep(0)
            ticks.append(time.thread_time() - before)

    async with no_leaks(), SubprocessRuntime(min_idle=1) as rt:
        baseline = await rt.execute("print(1)\n", {})  # the pool is up: no start-up tick
        assert baseline.ok, baseline.error
        ticker = asyncio.create_task(tick())
        while not ticks:  # the ticker runs before the execution's prepare
            await asyncio.sleep(0)
        result = await rt.execute(code, {})
        stop = True
        await ticker
    assert (result.ok, result.stdout) == (True, "256\n"), result.error
    assert max(ticks) < compile_cpu / 2, (max(ticks), compile_cpu)


@pytest.mark.parametrize(
    "code",
    [
        "x = 1000\nprint(x is 1000)\n",
        "x = 1\nassert (x, 'why')\n",
        "try:\n    [1, 2](3)\nexcept TypeError:\n    print('not callable')\n",
        "print(1 is not -1)\n",
    ],
)
async def test_compile_warnings_are_the_snippets_on_every_path(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], code: str
) -> None:
    """The compiler's ``SyntaxWarning`` is in the result's stderr whoever compiles: new
    (inline or in the worker) or repeated (compiled off the loop); none reaches the
    host's stderr. A host compile wrote it to the host's stderr, and the result had
    none."""
    free = [True]
    monkeypatch.setattr(_prepared, "a_cpu_is_free", lambda: free[0])
    stamp = time.perf_counter_ns()
    results = []
    async with no_leaks(), SubprocessRuntime(min_idle=1) as rt:
        for worker_first in (True, False):
            free[0] = worker_first
            source = f"{code}# {worker_first} {stamp}\n"
            for _ in range(4):  # new, seen twice (compiled off the loop), then shipped
                results.append(await rt.execute(source, {}))
                await asyncio.sleep(0.05)
    assert all(r.ok for r in results), [r.error for r in results]
    assert "SyntaxWarning" in results[0].stderr
    assert {(r.stdout, r.stderr) for r in results} == {(results[0].stdout, results[0].stderr)}
    assert "SyntaxWarning" not in capfd.readouterr().err


def test_every_compile_warning_is_foreseen() -> None:
    """Operands in the shapes compile.c warns about: each snippet whose compile warns is
    one the host leaves to the worker (text and tree both say it may warn)."""
    operands = ["1", "'a'", "(1, 2)", "()", "[1]", "{1}", "{1: 2}", "(x for x in y)", "f'{x}'"]
    operands += ["lambda: 1", "-1", "1 + 1", "None", "...", "1j", "x", "x.y", "x()"]
    shapes = ["{a} is {b}", "{a} is not {b}", "{a}({b})", "{a} \\\n ({b})", "{a}[{b}]"]
    shapes += ["assert ({a}, {b})"]
    warned = 0
    for a, b in ((a, b) for a in operands for b in operands):
        for shape in shapes:
            source = "y = []\nx = 1\n" + shape.format(a=a, b=b) + "\n"
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    compile(source, "<snippet>", "exec")
                except SyntaxError:
                    continue
            if any(issubclass(w.category, SyntaxWarning) for w in caught):
                warned += 1
                assert _compile._may_warn(source), source
                assert _compile._compile_may_warn(ast.parse(source)), source
    assert warned > 300

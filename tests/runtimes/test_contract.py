"""The contract every runtime passes (parametrized over the ``runtime`` fixture).

Results, errors, timeouts, tools (sync, async, concurrent), the tool-call limit and
trace, observers, sessions, output caps, value conversion, 50 concurrent executions
and closed runtimes.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import anyio
import pytest

from ptcbox import CodeResult, CodeRuntime, DirectProjection, ToolCallRecord
from ptcbox.errors import RuntimeClosedError
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["ray", "subprocess", "thread"])
def runtime_name(request: pytest.FixtureRequest) -> str:
    """Every runtime, RayRuntime included (``CONTRACT_RUNTIMES`` of the conftest)."""
    return str(request.param)


HOST_PATHS = ("/work", "site-packages", "ptcbox/", '.py"')


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def fail(reason: str) -> None:
    """Always raises."""
    raise ValueError(f"cannot do {reason}")


async def fetch(q: str) -> str:
    """An async tool."""
    await asyncio.sleep(0.01)
    return f"fetched {q}"


def tools(**extra: Any) -> dict[str, DirectProjection]:
    functions = {"add": add, "fail": fail, "fetch": fetch, **extra}
    return {name: DirectProjection(name, fn) for name, fn in functions.items()}


def assert_no_host_paths(text: str | None) -> None:
    assert text is not None
    for marker in HOST_PATHS:
        assert marker not in text, f"host path {marker!r} leaked into: {text}"


# --- results --------------------------------------------------------------------


async def test_runtime_satisfies_the_protocol(runtime: Any) -> None:
    assert isinstance(runtime, CodeRuntime)


async def test_stdout_value_and_success_fields(runtime: Any) -> None:
    result = await runtime.execute('print("hi", 2, sep="-")\nx = 20\nx + 1', tools())
    assert isinstance(result, CodeResult)
    assert result.stdout == "hi-2\n"
    assert (result.return_code, result.error, result.error_type) == (0, None, None)
    assert result.value == 21
    assert not result.timed_out and not result.truncated
    assert result.duration_s > 0
    json.dumps(result.to_dict())


@pytest.mark.parametrize(
    ("code", "value"),
    [
        ("x = 1", None),
        ("None", None),
        ("[1, (2, 3), {'a': {4}}]", [1, [2, 3], {"a": [4]}]),
        ("import datetime\ndatetime.date(2024, 5, 17)", "2024-05-17"),
        ("import decimal\ndecimal.Decimal('1.10')", "1.10"),
        ("b'raw'", "raw"),
        ("{3, 1, 2}", [1, 2, 3]),
        ("class Thing:\n    pass\nThing()", "<Thing object>"),
        ("float('nan')", "NaN"),
    ],
)
async def test_trailing_expression_value_is_json_compatible(
    runtime: Any, code: str, value: Any
) -> None:
    result = await runtime.execute(code, tools())
    assert result.ok, result.error
    assert result.value == value
    json.dumps(result.to_dict(), allow_nan=False)


async def test_value_conversion_never_calls_a_snippet_repr(make_runtime: Any) -> None:
    runtime = make_runtime(SandboxPolicy.trusted())
    code = (
        "class Evil:\n"
        "    def __repr__(self):\n"
        "        print('repr ran')\n"
        "        return 'evil'\n"
        "    __str__ = __repr__\n"
        "Evil()"
    )
    result = await runtime.execute(code, tools())
    assert result.ok, result.error
    assert result.value == "<Evil object>"
    assert "repr ran" not in result.stdout
    assert "repr ran" not in result.render()


# --- errors -----------------------------------------------------------------------


async def test_exception_traceback_shows_only_snippet_frames(runtime: Any) -> None:
    code = "def outer():\n    return inner()\ndef inner():\n    return 1 / 0\nprint('x')\nouter()"
    result = await runtime.execute(code, tools())
    assert result.return_code == 1
    assert result.error_type == "ZeroDivisionError"
    assert result.stdout == "x\n"
    assert result.error is not None
    assert "line 6, in <module>" in result.error
    assert "line 4, in inner" in result.error
    assert "return 1 / 0" in result.error
    assert result.error.rstrip().endswith("ZeroDivisionError: division by zero")
    assert_no_host_paths(result.error)


async def test_chained_exceptions_are_shown(runtime: Any) -> None:
    code = "try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('no key') from e"
    result = await runtime.execute(code, tools())
    assert result.error_type == "ValueError"
    assert result.error is not None
    assert "KeyError: 'k'" in result.error
    assert "direct cause" in result.error
    assert result.error.rstrip().endswith("ValueError: no key")


async def test_syntax_error_is_a_failed_result(runtime: Any) -> None:
    result = await runtime.execute("x = 1\nif x\n    pass", tools())
    assert result.return_code == 1
    assert result.error_type == "SyntaxError"
    assert result.error is not None and "line 2" in result.error
    assert_no_host_paths(result.error)


async def test_policy_violation_is_a_failed_result(runtime: Any) -> None:
    result = await runtime.execute("x = ().__class__", tools())
    assert (result.return_code, result.error_type) == (1, "PolicyViolation")
    assert result.error is not None and "__class__" in result.error


async def test_deep_recursion_is_a_failed_result(runtime: Any) -> None:
    result = await runtime.execute("def f(n):\n    return f(n + 1)\nf(0)", tools())
    assert result.error_type == "RecursionError"
    assert result.error is not None
    assert "more times" in result.error  # repeated frames are folded
    assert len(result.error) < 5000


# --- timeouts ---------------------------------------------------------------------


async def test_timeout_keeps_output_written_before_it(runtime: Any) -> None:
    started = time.monotonic()
    result = await runtime.execute("print('before')\nwhile True:\n    pass", tools(), timeout=0.5)
    assert time.monotonic() - started < 0.5 + 4  # at the deadline; the loop never ends
    assert result.timed_out
    assert (result.return_code, result.error_type) == (1, "TimeoutError")
    assert result.stdout == "before\n"
    assert result.error is not None and "0.5 seconds" in result.error


async def test_policy_timeout_is_the_default(make_runtime: Any) -> None:
    runtime = make_runtime(SandboxPolicy(timeout=0.3))
    result = await runtime.execute("while True:\n    pass", tools())
    assert result.timed_out


@pytest.mark.parametrize("timeout", [0, -1, float("nan")])
async def test_non_positive_timeout_raises(runtime: Any, timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        await runtime.execute("print(1)", tools(), timeout=timeout)


async def test_runtime_is_usable_after_a_timeout(runtime: Any) -> None:
    await runtime.execute("while True:\n    pass", tools(), timeout=0.2)
    result = await runtime.execute("print(add(a=1, b=2))", tools())
    assert result.ok and result.stdout == "3\n"


async def test_caller_cancellation_propagates(runtime: Any) -> None:
    started = time.monotonic()
    with anyio.move_on_after(0.3) as scope:
        await runtime.execute("while True:\n    pass", tools(), timeout=30)
    assert scope.cancelled_caught
    assert time.monotonic() - started < 0.3 + 4  # at the cancellation, not the 30 s timeout
    result = await runtime.execute("print('still fine')", tools())
    assert result.stdout == "still fine\n"


# --- tools ------------------------------------------------------------------------


async def test_tools_keyword_and_positional_calls(runtime: Any) -> None:
    result = await runtime.execute("print(add(a=1, b=2), add(3, 4), add(5, b=6))", tools())
    assert result.stdout == "3 7 11\n"
    assert [c.arguments for c in result.tool_calls] == [
        {"a": 1, "b": 2},
        {"a": 3, "b": 4},
        {"a": 5, "b": 6},
    ]
    assert all(isinstance(c, ToolCallRecord) and c.ok for c in result.tool_calls)


async def test_wrong_arguments_raise_type_error_naming_the_signature(runtime: Any) -> None:
    code = "try:\n    add(1, c=3)\nexcept TypeError as e:\n    print(str(e), e.args)\nadd(1)"
    result = await runtime.execute(code, tools())
    # CPython's words for a function of that signature; the signature in a PEP 678 note
    message = "add() got an unexpected keyword argument 'c'"
    assert result.stdout == f"{message} ({message!r},)\n"
    assert result.error_type == "TypeError"
    assert result.error is not None and "tool signature: add(a: int, b: int)" in result.error
    assert "TypeError: add() missing 1 required positional argument: 'b'" in result.error
    # one clean traceback, not the binder's internal failure chained in front of it
    assert result.error.count("TypeError") == 1, result.error
    assert "During handling" not in result.error
    assert [c.ok for c in result.tool_calls] == [False, False]


async def test_failing_tool_raises_catchable_tool_error(runtime: Any) -> None:
    code = (
        "try:\n"
        "    fail(reason='x')\n"
        "except ToolError as e:\n"
        "    print('caught:', e.message, isinstance(e, ValueError))\n"
        "fail(reason='y')"
    )
    result = await runtime.execute(code, tools())
    assert result.stdout == "caught: ValueError: cannot do x True\n"
    assert result.error_type == "ValueError"  # the tool's own type (also a ToolError)
    assert result.error is not None and "cannot do y" in result.error
    assert_no_host_paths(result.error)
    records = result.tool_calls
    assert [(c.name, c.ok, c.error) for c in records] == [
        ("fail", False, "ValueError: cannot do x"),
        ("fail", False, "ValueError: cannot do y"),
    ]


async def test_tool_calls_are_recorded_in_start_order(runtime: Any) -> None:
    code = "for i in range(5):\n    add(a=i, b=i)\nfetch(q='z')"
    result = await runtime.execute(code, tools())
    assert result.ok, result.error
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        *[("add", {"a": i, "b": i}) for i in range(5)],
        ("fetch", {"q": "z"}),
    ]
    assert all(c.duration_s >= 0 for c in result.tool_calls)


async def test_async_tool_from_sync_code_returns_the_value(runtime: Any) -> None:
    result = await runtime.execute("r = fetch(q='a')\nprint(r)\nr", tools())
    assert result.stdout == "fetched a\n"
    assert result.value == "fetched a"


async def test_async_tools_run_on_the_callers_event_loop(runtime: Any) -> None:
    seen: list[bool] = []
    host_loop = asyncio.get_running_loop()

    async def where() -> str:
        seen.append(asyncio.get_running_loop() is host_loop)
        return "ok"

    code = (
        "import asyncio\nwhere()\nasync def main():\n    return await where()\nasyncio.run(main())"
    )
    result = await runtime.execute(code, tools(where=where))
    assert result.ok, result.error
    assert result.value == "ok"
    assert seen == [True, True]


async def test_top_level_await_and_gather_run_calls_concurrently(runtime: Any) -> None:
    in_flight = 0
    peak = 0

    async def slow(n: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.1)
        in_flight -= 1
        return n * 10

    code = "import asyncio\nr = await asyncio.gather(*[slow(n=i) for i in range(4)])\nprint(r)"
    result = await runtime.execute(code, tools(slow=slow))
    assert result.ok, result.error
    assert result.stdout == "[0, 10, 20, 30]\n"
    assert peak == 4
    assert [c.arguments for c in result.tool_calls] == [{"n": i} for i in range(4)]


async def test_sync_tools_also_run_concurrently_under_gather(runtime: Any) -> None:
    barrier = threading.Barrier(2, timeout=10)

    def meet(who: str) -> str:
        barrier.wait()  # passes only if both calls run at the same time
        return who

    code = "import asyncio\nprint(await asyncio.gather(meet(who='a'), meet(who='b')))"
    result = await runtime.execute(code, tools(meet=meet))
    assert result.ok, result.error
    assert result.stdout == "['a', 'b']\n"


async def test_concurrent_tool_calls_are_bounded_by_the_policy(make_runtime: Any) -> None:
    runtime = make_runtime(SandboxPolicy(max_concurrent_tool_calls=2))
    in_flight = 0
    peak = 0

    async def slow(n: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.05)
        in_flight -= 1
        return n

    code = "import asyncio\nawait asyncio.gather(*[slow(n=i) for i in range(6)])"
    result = await runtime.execute(code, tools(slow=slow))
    assert result.ok, result.error
    assert result.value == list(range(6))
    assert peak == 2


async def test_tool_call_limit(make_runtime: Any) -> None:
    runtime = make_runtime(SandboxPolicy(max_tool_calls=3))
    code = "for i in range(10):\n    add(a=i, b=0)\n    print(i)"
    result = await runtime.execute(code, tools())
    assert result.error_type == "ToolCallLimitExceeded"
    assert result.stdout == "0\n1\n2\n"
    assert result.error is not None and "max_tool_calls" in result.error
    assert [c.ok for c in result.tool_calls] == [True, True, True, False]


async def test_code_over_max_code_chars_is_refused_before_anything_runs(
    make_runtime: Any,
) -> None:
    """A compile cannot be stopped by the time limit (ThreadRuntime's holds the host's
    GIL): a snippet over ``max_code_chars`` is refused before it is parsed or run."""
    runtime = make_runtime(SandboxPolicy(max_code_chars=40))
    code = "print('x')\nadd(a=1, b=2)\n" + "#" * 40
    result = await runtime.execute(code, tools())
    assert result.error_type == "CodeSizeLimitExceeded"
    assert (result.stdout, result.tool_calls, result.timed_out) == ("", (), False)
    assert result.error is not None
    assert result.error.startswith(
        "CodeSizeLimitExceeded: max_code_chars exceeded: 65 characters > limit 40 characters\n"
        "The code was not run."
    ), result.error
    fits = await runtime.execute("print('x')\nadd(a=1, b=2)", tools())  # 24 characters
    assert fits.ok, fits.error
    assert (fits.stdout, fits.value) == ("x\n", 3)


async def test_on_tool_call_runs_on_the_loop_for_each_finished_call(runtime: Any) -> None:
    seen: list[tuple[ToolCallRecord, bool]] = []
    loop_thread = threading.get_ident()

    def observe(record: ToolCallRecord) -> None:
        seen.append((record, threading.get_ident() == loop_thread))

    code = "add(a=1, b=2)\ntry:\n    fail(reason='r')\nexcept ToolError:\n    pass\nfetch(q='q')"
    result = await runtime.execute(code, tools(), on_tool_call=observe)
    assert result.ok, result.error
    assert [record for record, _ in seen] == list(result.tool_calls)
    assert all(on_loop for _, on_loop in seen)


async def test_on_output_receives_everything_on_the_loop(runtime: Any) -> None:
    chunks: list[tuple[str, str]] = []
    loop_thread = threading.get_ident()
    on_loop: list[bool] = []

    def observe(stream: str, text: str) -> None:
        chunks.append((stream, text))
        on_loop.append(threading.get_ident() == loop_thread)

    code = "for i in range(300):\n    print('line', i)"
    result = await runtime.execute(code, tools(), on_output=observe)
    assert result.ok
    assert "".join(text for stream, text in chunks if stream == "stdout") == result.stdout
    assert all(on_loop)


async def test_an_observer_that_raises_is_reported_and_the_execution_goes_on(
    runtime: Any,
) -> None:
    """A raising observer is the caller's bug: every runtime reports it to the loop's
    exception handler and runs the snippet to its end (it used to stop a
    SubprocessRuntime execution after its first tool call and raise out of execute)."""
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))

    def broken(*_args: Any) -> None:
        raise RuntimeError("observer bug")

    code = "for i in range(3):\n    print(add(a=i, b=1))\n'end'"
    try:
        result = await runtime.execute(code, tools(), on_tool_call=broken, on_output=broken)
        await asyncio.sleep(0.2)  # observers are scheduled on the loop
    finally:
        loop.set_exception_handler(previous)
    assert result.ok, result.error
    assert result.stdout == "1\n2\n3\n"
    assert result.value == "end"
    assert [call.ok for call in result.tool_calls] == [True, True, True]
    assert len(reported) >= 4  # three tool calls and at least one output chunk
    assert {context["message"] for context in reported} == {"ptcbox: an execution observer raised"}
    assert all(str(context["exception"]) == "observer bug" for context in reported)


# --- namespace and globals ----------------------------------------------------------


async def test_bad_namespace_raises_before_running(runtime: Any) -> None:
    calls: list[int] = []

    def spy() -> None:
        calls.append(1)

    with pytest.raises(ValueError, match="does not match"):
        await runtime.execute("spy()", {"other": DirectProjection("spy", spy)})
    with pytest.raises(TypeError):
        await runtime.execute("spy()", {"spy": spy})  # type: ignore[dict-item]
    assert calls == []


async def test_extra_globals_and_tools_win_on_clashes(runtime: Any) -> None:
    result = await runtime.execute(
        "print(limit, add(a=limit, b=1))", tools(), extra_globals={"limit": 5, "add": "shadow"}
    )
    assert result.stdout == "5 6\n"


# --- output caps ---------------------------------------------------------------------


async def test_output_is_capped_keeping_head_and_tail(make_runtime: Any) -> None:
    runtime = make_runtime(SandboxPolicy(max_output_bytes=2000))
    result = await runtime.execute("for i in range(20000):\n    print(i)", tools())
    assert result.ok
    assert result.truncated
    assert result.stdout.startswith("0\n1\n2\n")
    assert result.stdout.endswith("19998\n19999\n")
    assert "[truncated " in result.stdout
    assert len(result.stdout.encode()) <= 2000 + 64


async def test_error_text_is_capped(make_runtime: Any) -> None:
    runtime = make_runtime(SandboxPolicy(max_output_bytes=2000))
    result = await runtime.execute("raise ValueError('x' * 100_000)", tools())
    assert result.error_type == "ValueError"
    assert result.truncated
    assert result.error is not None
    assert len(result.error.encode()) <= 2000 + 64
    assert "[truncated " in result.error


# --- sessions --------------------------------------------------------------------------


async def test_session_keeps_globals_across_executions(runtime: Any) -> None:
    async with runtime.session() as session:
        first = await session.execute("x = add(a=1, b=2)\ndef twice(v):\n    return v * 2", tools())
        assert first.ok, first.error
        failed = await session.execute("y = twice(x)\n1 / 0", tools())
        assert failed.error_type == "ZeroDivisionError"
        third = await session.execute("print(x, y, twice(5))", tools())
        assert third.stdout == "3 6 10\n"


async def test_session_refreshes_tools_and_extra_globals(runtime: Any) -> None:
    def mul(a: int, b: int) -> int:
        return a * b

    async with runtime.session() as session:
        await session.execute("keep = 1", tools(), extra_globals={"k": 1})
        result = await session.execute(
            "print(mul(a=k, b=3), keep)",
            {"mul": DirectProjection("mul", mul)},
            extra_globals={"k": 2},
        )
        assert result.stdout == "6 1\n"
        gone = await session.execute("add(a=1, b=1)", {"mul": DirectProjection("mul", mul)})
        assert gone.error_type == "NameError"


async def test_closed_session_refuses_to_execute(runtime: Any) -> None:
    session = runtime.session()
    await session.execute("x = 1", tools())
    await session.aclose()
    with pytest.raises(RuntimeClosedError):
        await session.execute("print(x)", tools())


# --- concurrency and lifecycle ------------------------------------------------------------


async def test_fifty_concurrent_executions_keep_their_own_results(runtime: Any) -> None:
    async def one(n: int) -> tuple[int, CodeResult]:
        code = f"for i in range(50):\n    print({n}, i)\nadd(a={n}, b=0)"
        return n, await runtime.execute(code, tools())

    results = await asyncio.gather(*[one(n) for n in range(50)])
    for n, result in results:
        assert result.ok, result.error
        assert result.stdout == "".join(f"{n} {i}\n" for i in range(50))
        assert result.value == n
        assert [c.arguments for c in result.tool_calls] == [{"a": n, "b": 0}]


async def test_closed_runtime_raises(make_runtime: Any) -> None:
    runtime = make_runtime()
    async with runtime:
        assert (await runtime.execute("1", tools())).value == 1
    with pytest.raises(RuntimeClosedError):
        await runtime.execute("1", tools())


async def test_closing_stops_running_executions(make_runtime: Any) -> None:
    runtime = make_runtime()
    outcome: list[BaseException] = []

    async def run() -> None:
        try:
            await runtime.execute("while True:\n    pass", tools(), timeout=30)
        except RuntimeClosedError as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await anyio.sleep(0.2)
        await runtime.aclose()
    assert len(outcome) == 1


# --- data crossing between snippet and tools --------------------------------------

_HOST_CACHE: dict[str, list[int]] = {"ids": [1, 2, 3]}


def cached() -> dict[str, list[int]]:
    """Returns the host's own cached dict (a tool with internal state)."""
    return _HOST_CACHE


async def test_tool_results_are_copies_the_snippet_cannot_mutate_in_the_host(
    runtime: Any,
) -> None:
    code = "d = cached()\nd['ids'].append(99)\nd['new'] = 1\nprint(cached())"
    result = await runtime.execute(code, tools(cached=cached))
    assert result.ok, result.error
    assert result.stdout == "{'ids': [1, 2, 3]}\n"
    assert _HOST_CACHE == {"ids": [1, 2, 3]}


def describe(item: Any) -> str:
    """Reports the Python type the tool received."""
    return f"{type(item).__name__}:{item!r}"


async def test_tools_receive_plain_data_never_snippet_objects(runtime: Any) -> None:
    code = (
        "class Sneaky:\n"
        "    def __eq__(self, other):\n"
        "        while True:\n"
        "            pass\n"
        "print(describe(Sneaky()))\n"
        "print(describe({3, 1}))\n"
        "print(describe((1, 2)))\n"
    )
    result = await runtime.execute(code, tools(describe=describe), timeout=10)
    assert result.ok, result.error
    # fresh builtin values with their types, never the snippet's object
    assert result.stdout == "str:'<Sneaky object>'\nset:{1, 3}\ntuple:(1, 2)\n"


async def test_async_tools_receive_plain_data_too(runtime: Any) -> None:
    async def adescribe(item: Any) -> str:
        """Async twin of describe."""
        return describe(item)

    code = (
        "import asyncio\n"
        "class Sneaky:\n"
        "    pass\n"
        "print(await asyncio.gather(adescribe(Sneaky()), adescribe({2, 1})))\n"
    )
    result = await runtime.execute(code, tools(adescribe=adescribe))
    assert result.ok, result.error
    assert result.stdout == "[\"str:'<Sneaky object>'\", 'set:{1, 2}']\n"

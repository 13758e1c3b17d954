"""The execute()/aexecute() facade: tools= forms, runtimes, event loops, threads, lifecycle."""

from __future__ import annotations

import asyncio
import functools
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

import ptcbox
from ptcbox import DirectProjection, ToolCallRecord, aexecute, execute, resolve_tools
from ptcbox import _execute as facade
from ptcbox.errors import RuntimeClosedError
from ptcbox.runtimes import ThreadRuntime


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


async def double_later(x: int) -> int:
    """Double ``x`` after a short wait on the event loop."""
    await asyncio.sleep(0.01)
    return 2 * x


class Registry:
    """Stands in for the agent glue's ToolRegistry: anything with projections()."""

    def __init__(self, as_mapping: bool) -> None:
        self.as_mapping = as_mapping

    def projections(self) -> Any:
        items = [DirectProjection(name="add", fn=add), DirectProjection(name="shout", fn=shout)]
        return {p.name: p for p in items} if self.as_mapping else iter(items)


@pytest.fixture
def created(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Record every runtime the facade creates."""
    made: list[Any] = []
    real = facade.make_runtime

    def recording(kind: str, policy: Any = None) -> Any:
        runtime = real(kind, policy)
        made.append(runtime)
        return runtime

    monkeypatch.setattr(facade, "make_runtime", recording)
    yield made


# --- tools= -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tools",
    [
        [add, shout],
        (add, shout),
        {"add": add, "shout": shout},
        {"add": DirectProjection(name="add", fn=add), "shout": shout},
        [DirectProjection(name="add", fn=add), shout],
        Registry(as_mapping=True),
        Registry(as_mapping=False),
    ],
    ids=["list", "tuple", "mapping-fns", "mapping-mixed", "list-mixed", "reg-map", "reg-iter"],
)
def test_every_tools_form_runs(tools: object) -> None:
    result = execute("print(shout(text='hi'))\nadd(2, b=3)", tools=tools)
    assert result.ok, result.error
    assert result.stdout == "HI\n"
    assert result.value == 5
    assert [c.name for c in result.tool_calls] == ["shout", "add"]
    assert result.tool_calls[1].arguments == {"a": 2, "b": 3}


def test_name_and_doc_come_from_the_function() -> None:
    namespace = resolve_tools([add])
    assert list(namespace) == ["add"]
    assert namespace["add"].doc == "Add two integers."


def test_no_tools_is_fine() -> None:
    assert execute("print(6 * 7)").stdout == "42\n"
    assert resolve_tools(None) == {}


@pytest.mark.parametrize(
    ("tools", "error", "message"),
    [
        ("add", TypeError, "got str"),
        (add, TypeError, r"single tool \('add'\); pass a list: tools=\[add\]"),
        ({add}, TypeError, "got set"),
        ([lambda x: x], ValueError, "lambda"),
        ([add, add], ValueError, r"two tools are named 'add' \(tools\[0\] and tools\[1\]\)"),
        ([add, 3], TypeError, r"tools\[1\] is not a function or tool \(got int\)"),
        ([functools.partial(add, 1)], TypeError, "has no __name__"),
        ({"plus": DirectProjection(name="add", fn=add)}, ValueError, "does not match"),
        ({"x": 3}, TypeError, "not callable"),
        ({1: add}, TypeError, "must be strings"),
        ({"bad name": add}, ValueError, "not a valid Python identifier"),
        ({"class": add}, ValueError, "keyword"),
        ({"_private": add}, ValueError, "underscore"),
    ],
)
def test_bad_tools_get_a_clear_error(tools: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        execute("1", tools=tools)
    with pytest.raises(error, match=message):
        asyncio.run(aexecute("1", tools=tools))


def test_a_registry_with_junk_projections_is_refused() -> None:
    class Junk:
        def projections(self) -> list[object]:
            return [add]

    with pytest.raises(TypeError, match=r"Junk.projections\(\) item 0 is not a ToolProjection"):
        resolve_tools(Junk())


def test_code_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="code must be a str"):
        execute(b"print(1)")  # type: ignore[arg-type]


# --- runtime= and policy= -------------------------------------------------------------


def test_runtime_by_name_and_by_instance() -> None:
    assert execute("print(1)", runtime="thread").stdout == "1\n"

    async def main() -> str:
        async with ThreadRuntime() as runtime:
            first = await aexecute("print(2)", runtime=runtime)
            second = await aexecute("print(3)", runtime=runtime)  # not closed by the call
            return first.stdout + second.stdout

    assert asyncio.run(main()) == "2\n3\n"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"runtime": "docker"}, ValueError, "unknown runtime 'docker'"),
        ({"runtime": 42}, TypeError, "runtime= must be None, a name"),
        ({"runtime": ThreadRuntime(), "policy": object()}, ValueError, "cannot be combined"),
        ({"timeout": 0}, ValueError, "timeout"),
        ({"timeout": -1.5, "runtime": "thread"}, ValueError, "timeout"),
        # a preset's name, as `ptcbox run --policy strict` takes it (was an AttributeError)
        (
            {"policy": "strict"},
            TypeError,
            r"policy= takes a SandboxPolicy, e\.g\. SandboxPolicy\.strict",
        ),
        ({"policy": "data", "runtime": "thread"}, TypeError, r"e\.g\. SandboxPolicy\.data\(\)"),
    ],
)
def test_bad_runtime_arguments(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        execute("1", **kwargs)


def test_policy_is_applied() -> None:
    from ptcbox.sandbox import SandboxPolicy

    restricted = execute("print(().__class__.__name__)")
    assert restricted.return_code == 1
    trusted = execute("print(().__class__.__name__)", policy=SandboxPolicy.trusted())
    assert trusted.ok and trusted.stdout == "tuple\n"


def test_options_reach_the_runtime() -> None:
    seen: list[ToolCallRecord] = []
    chunks: list[tuple[str, str]] = []
    result = execute(
        "print(add(a=x, b=1))",
        tools=[add],
        extra_globals={"x": 41},
        on_tool_call=seen.append,
        on_output=lambda stream, text: chunks.append((stream, text)),
    )
    assert result.stdout == "42\n"
    assert [r.name for r in seen] == ["add"] and seen[0].ok
    assert "".join(text for stream, text in chunks if stream == "stdout") == "42\n"
    timed = execute("while True:\n    pass", timeout=0.5)
    assert timed.timed_out and timed.return_code == 1


def test_subprocess_runtime_by_name_with_sync_and_async_tools() -> None:
    code = "print(await add(a=1, b=2), await double_later(x=4))"
    first = execute(code, tools=[add, double_later], runtime="subprocess")
    assert first.ok, first.error
    assert first.stdout == "3 8\n"
    second = execute("add(a=5, b=5)", tools=[add], runtime="subprocess")
    assert second.value == 10


def test_the_shared_subprocess_runtime_leaves_no_process_after_shutdown() -> None:
    facade._LOOP.shutdown()
    before = _children()
    assert execute("print(1)", runtime="subprocess").stdout == "1\n"
    assert _children() - before  # warm workers are kept between calls
    facade._LOOP.shutdown()
    assert not _settle(before)


def _children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def _settle(before: set[int]) -> set[int]:
    """Wait (up to 10 s) until no process beyond ``before`` remains; return the extra ones."""
    deadline = time.monotonic() + 10
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    return _children() - before


def test_aexecute_subprocess_with_a_policy_leaves_no_process_behind(
    created: list[Any],
) -> None:
    from ptcbox.sandbox import SandboxPolicy

    facade._LOOP.shutdown()  # the shared default runtimes (and their warm workers) end
    before = _children()
    assert not _settle(before)
    result = asyncio.run(
        aexecute(
            "print(add(a=1, b=1))",
            tools=[add],
            runtime="subprocess",
            policy=SandboxPolicy.strict(),
        )
    )
    assert result.stdout == "2\n"
    assert len(created) == 1
    facade._LOOP.shutdown()  # the policy's runtime is cached until exit (or evicted)
    assert not _settle(before)
    with pytest.raises(RuntimeClosedError):
        asyncio.run(created[0].execute("print(1)", {}))


def test_aexecute_shares_the_default_runtime_across_event_loops(created: list[Any]) -> None:
    facade._LOOP.shutdown()
    before = _children()
    for n in range(3):  # three asyncio.run() calls: three different caller loops
        result = asyncio.run(aexecute(f"print(add(a={n}, b=1))", tools=[add]))
        assert result.stdout == f"{n + 1}\n"
    assert len(created) == 1  # one shared runtime, warm workers reused
    facade._LOOP.shutdown()  # what interpreter exit does
    assert not _settle(before)


# --- runtime lifetime -------------------------------------------------------------------


def test_aexecute_with_a_policy_reuses_one_runtime_per_policy(created: list[Any]) -> None:
    from ptcbox.sandbox import SandboxPolicy

    facade._LOOP.shutdown()
    for _ in range(3):  # three caller loops, equal policies: one runtime
        result = asyncio.run(aexecute("print(1)", policy=SandboxPolicy.strict()))
        assert result.ok
    assert len(created) == 1
    facade._LOOP.shutdown()  # what interpreter exit does
    with pytest.raises(RuntimeClosedError):
        asyncio.run(created[0].execute("print(1)", {}))


def test_execute_with_a_policy_reuses_its_runtime_until_evicted(created: list[Any]) -> None:
    """Issue 13: a runtime per policy is cached (it was built and torn down per call,
    200-300 ms each); the least recently used beyond POLICY_RUNTIMES is closed."""
    from ptcbox._loop import POLICY_RUNTIMES
    from ptcbox.sandbox import SandboxPolicy

    facade._LOOP.shutdown()
    strict = SandboxPolicy.strict()
    assert execute("print(1)", policy=strict).ok
    assert execute("print(2)", policy=SandboxPolicy.strict()).ok  # equal: shared
    assert len(created) == 1
    others = [SandboxPolicy(timeout=10.0 + n) for n in range(POLICY_RUNTIMES)]
    for policy in others:
        assert execute("print(3)", runtime="thread", policy=policy).ok
    assert len(created) == 1 + POLICY_RUNTIMES
    deadline = time.monotonic() + 10
    while not created[0].closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert created[0].closed  # the least recently used was evicted and closed
    assert not any(runtime.closed for runtime in created[1:])
    facade._LOOP.shutdown()
    assert all(runtime.closed for runtime in created)


def test_execute_shares_one_default_runtime_until_shutdown(created: list[Any]) -> None:
    facade._LOOP.shutdown()
    assert execute("print(1)").ok and execute("print(2)").ok
    assert len(created) == 1  # shared across calls
    loop_threads = [t for t in threading.enumerate() if t.name == "ptcbox-execute-loop"]
    assert len(loop_threads) == 1
    facade._LOOP.shutdown()
    assert not loop_threads[0].is_alive()
    with pytest.raises(RuntimeClosedError):
        asyncio.run(created[0].execute("print(1)", {}))
    assert execute("print(3)").stdout == "3\n"  # starts afresh
    assert len(created) == 2


# --- event loops and threads ----------------------------------------------------------


def test_b25_execute_inside_a_running_event_loop() -> None:
    """B25: execute() from async code; async tools run; no asyncio.run() error, no deadlock."""
    code = textwrap.dedent(
        """
        import asyncio
        async def main():
            return await double_later(x=21)
        print(asyncio.run(main()))
        """
    )

    async def app() -> ptcbox.CodeResult:
        return execute(code, tools=[double_later])

    result = asyncio.run(app())
    assert result.ok, result.error
    assert result.stdout == "42\n"


def test_jupyter_like_thread_with_a_running_loop_calls_the_sync_api() -> None:
    """A kernel thread runs an event loop; a cell calls execute() with async tools."""
    loop = asyncio.new_event_loop()
    kernel = threading.Thread(target=loop.run_forever, name="kernel", daemon=True)
    kernel.start()
    try:

        async def cell() -> ptcbox.CodeResult:
            assert asyncio.get_running_loop() is loop
            snippet = (
                "import asyncio\nsum(await asyncio.gather(*[double_later(x=i) for i in range(5)]))"
            )
            return execute(snippet, tools=[double_later])

        result = asyncio.run_coroutine_threadsafe(cell(), loop).result(timeout=60)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        kernel.join(10)
        loop.close()
    assert result.ok, result.error
    assert result.value == 20
    assert len(result.tool_calls) == 5


def test_aexecute_runs_async_tools_on_the_calling_loop() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def where() -> str:
        """Report the loop it runs on."""
        loops.append(asyncio.get_running_loop())
        return "here"

    async def main() -> tuple[ptcbox.CodeResult, asyncio.AbstractEventLoop]:
        return await aexecute("print(where())", tools=[where]), asyncio.get_running_loop()

    result, loop = asyncio.run(main())
    assert result.stdout == "here\n"
    assert loops == [loop]


def test_execute_from_many_threads_at_once() -> None:
    outputs: dict[int, str] = {}
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for round_ in range(4):
                code = f"for i in range(50):\n    print({n}, {round_}, add(a=i, b={n}))"
                result = execute(code, tools=[add])
                assert result.ok, result.error
                outputs[n * 10 + round_] = result.stdout
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors
    assert len(outputs) == 48
    for key, stdout in outputs.items():
        n, round_ = divmod(key, 10)
        assert stdout == "".join(f"{n} {round_} {i + n}\n" for i in range(50))


def test_execute_called_from_an_async_tool_on_the_private_loop_does_not_deadlock() -> None:
    async def nested() -> str:
        """Run another snippet from inside a tool."""
        return execute("print('inner')").stdout

    result = execute("print(nested().strip(), 'outer')", tools=[nested], timeout=60)
    assert result.ok, result.error
    assert result.stdout == "inner outer\n"


class _Interrupt(BaseException):
    pass


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill")
def test_an_interrupted_caller_cancels_the_execution_and_the_facade_stays_usable() -> None:
    """Ctrl-C while execute() waits: the execution is cancelled, the facade keeps working.

    SIGUSR1 (not SIGALRM, which pytest-timeout uses) is sent to the main thread while it
    waits; its handler raises, as the default SIGINT handler raises KeyboardInterrupt.
    """

    def interrupt(signum: int, frame: object) -> None:
        raise _Interrupt

    ticks: list[float] = []

    def tick() -> None:
        """Record that the snippet is still running."""
        ticks.append(time.monotonic())

    main_thread = threading.get_ident()
    sender = threading.Timer(0.3, signal.pthread_kill, args=(main_thread, signal.SIGUSR1))
    previous = signal.signal(signal.SIGUSR1, interrupt)
    started = time.monotonic()
    try:
        sender.start()
        with pytest.raises(_Interrupt):
            execute(
                "import time\nwhile True:\n    tick()\n    time.sleep(0.02)", [tick], timeout=30
            )
    finally:
        sender.cancel()
        signal.signal(signal.SIGUSR1, previous)
    assert time.monotonic() - started < 15
    assert ticks  # it was running when interrupted
    time.sleep(1.0)
    settled = len(ticks)
    time.sleep(1.0)
    assert len(ticks) == settled  # and it stopped: the execution was cancelled
    assert execute("print('still fine')").stdout == "still fine\n"


# --- process exit and fork --------------------------------------------------------------


def _run_script(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_a_script_exits_promptly_even_with_an_abandoned_snippet() -> None:
    started = time.monotonic()
    done = _run_script(
        """
        import ptcbox
        r = ptcbox.execute("import time\\ntime.sleep(30)", timeout=0.5)
        print(r.timed_out, r.error_type)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "TimeoutError"]
    assert time.monotonic() - started < 25


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
def test_execute_works_in_a_forked_child() -> None:
    done = _run_script(
        """
        import os, ptcbox
        assert ptcbox.execute("print(1)").stdout == "1\\n"
        pid = os.fork()
        if pid == 0:
            ok = ptcbox.execute("print(2)", timeout=20).stdout == "2\\n"
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "child 0"


def test_aexecute_observers_run_on_the_calling_loop() -> None:
    seen: list[tuple[str, bool]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def on_tool_call(record: ToolCallRecord) -> None:
            seen.append((record.name, asyncio.get_running_loop() is loop))

        def on_output(stream: str, text: str) -> None:
            seen.append((stream, asyncio.get_running_loop() is loop))

        result = await aexecute(
            "print(add(a=1, b=2))", tools=[add], on_tool_call=on_tool_call, on_output=on_output
        )
        assert result.stdout == "3\n"
        await asyncio.sleep(0.05)  # callbacks are scheduled with call_soon_threadsafe

    asyncio.run(main())
    assert ("add", True) in seen
    assert ("stdout", True) in seen
    assert all(on_loop for _, on_loop in seen)


def test_cancelling_aexecute_stops_the_snippet_and_the_runtime_stays_usable() -> None:
    async def main() -> None:
        started = time.monotonic()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(aexecute("while True:\n    pass", timeout=60), 0.5)
        assert time.monotonic() - started < 5
        again = await aexecute("print('still here')")
        assert again.stdout == "still here\n"

    asyncio.run(main())

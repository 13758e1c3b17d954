"""The host compiles repeated short snippets and ships the code object to the worker.

The worker must run exactly what the host compiled (same transform, same policy), and
compile the source itself the first time, for long snippets, for failed compiles, for
code objects too large to ship and for another Python's bytecode, reporting compile
errors as it always did.
"""

from __future__ import annotations

import asyncio
import marshal
import time
from typing import Any

import pytest

from ptcbox import SubprocessRuntime
from ptcbox.errors import PolicyViolation
from ptcbox.runtimes.subprocess import _compile, _prepared
from ptcbox.runtimes.subprocess._compile import (
    HOST_COMPILE_MAX_BYTES,
    HOST_COMPILE_MAX_CHARS,
    host_compiled,
)
from ptcbox.runtimes.subprocess.worker._config import decode_compiled, encode_compiled
from ptcbox.sandbox import SandboxPolicy, compile_snippet
from runtimes._leaks import no_leaks

pytestmark = pytest.mark.anyio

RESTRICTED = SandboxPolicy()
TRUSTED = SandboxPolicy.trusted()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _seen_twice(code: str, policy: SandboxPolicy) -> Any:
    """What the host sends the second time it sees ``code`` (the first time: nothing)."""
    host_compiled(code, policy)
    return host_compiled(code, policy)


async def _compiled_off_loop(code: str, policy: SandboxPolicy) -> None:
    """Wait until the background compile of ``code`` (started by a run) has finished."""
    deadline = time.monotonic() + 60
    while (code, policy.restricted) not in _compile._ready:
        assert time.monotonic() < deadline, "the background compile never finished"
        await asyncio.sleep(0.01)


def _same_as_worker(code: str, policy: SandboxPolicy) -> Any:
    return compile_snippet(code, policy, filename="<snippet>", os_enforced_limits=True)


@pytest.mark.parametrize("policy", [RESTRICTED, TRUSTED], ids=["restricted", "trusted"])
def test_a_short_snippet_round_trips_to_what_the_worker_would_compile(
    policy: SandboxPolicy,
) -> None:
    code = "async def f(x):\n    return x * 2\nn = await f(3)\nn + 1\n"
    fields = _seen_twice(code, policy)
    assert fields is not None
    decoded = decode_compiled(fields)
    expected = _same_as_worker(code, policy)
    assert decoded is not None
    assert decoded.code == expected.code
    assert (decoded.is_async, decoded.has_value) == (True, True)


def test_the_host_compiles_with_the_runtime_policy_and_refuses_nothing_itself() -> None:
    """A refused or broken snippet is left to the worker, which reports the error."""
    assert _seen_twice("obj.__globals__\n", RESTRICTED) is None
    with pytest.raises(PolicyViolation):
        _same_as_worker("obj.__globals__\n", RESTRICTED)
    assert _seen_twice("obj.__globals__\n", TRUSTED) is not None
    assert _seen_twice("def f(:\n", RESTRICTED) is None
    assert _seen_twice("x = 1\0\n", RESTRICTED) is None
    nested = "x = " + "-" * 5000 + "1\n"  # too deep for the transform: RecursionError
    assert _seen_twice(nested[:HOST_COMPILE_MAX_CHARS], RESTRICTED) is None


def test_the_first_sight_of_a_snippet_is_left_to_the_worker() -> None:
    code = "first_sight = 1\n"
    assert host_compiled(code, RESTRICTED) is None
    assert host_compiled(code, TRUSTED) is None  # each kind of policy on its own
    assert host_compiled(code, RESTRICTED) is not None
    assert host_compiled(code, TRUSTED) is not None


def test_a_code_object_too_large_to_ship_is_left_to_the_worker() -> None:
    """R4: constant folding makes 2 KiB of source into ~1 MiB of code."""
    code = "+".join(["'a'*4096"] * 200) + "\n"
    assert len(code) <= HOST_COMPILE_MAX_CHARS
    assert len(marshal.dumps(_same_as_worker(code, TRUSTED).code)) > HOST_COMPILE_MAX_BYTES
    for policy in (RESTRICTED, TRUSTED):
        assert _seen_twice(code, policy) is None


def test_long_snippets_are_left_to_the_worker() -> None:
    fits = "x = 1\n" + "#" * (HOST_COMPILE_MAX_CHARS - 7) + "\n"
    assert len(fits) == HOST_COMPILE_MAX_CHARS
    assert _seen_twice(fits, RESTRICTED) is not None
    assert _seen_twice(fits + "\n", RESTRICTED) is None


def test_bytecode_of_another_python_is_not_loaded() -> None:
    fields = encode_compiled(_same_as_worker("1\n", RESTRICTED))
    assert decode_compiled(fields) is not None
    assert decode_compiled(["00000000", *fields[1:]]) is None
    assert decode_compiled(None) is None


def _ship(monkeypatch: pytest.MonkeyPatch, shipped: str, *, magic: str | None = None) -> None:
    """Make the host ship the compiled ``shipped`` whatever the source is."""
    fields = encode_compiled(_same_as_worker(shipped, RESTRICTED))
    if magic is not None:
        fields = [magic, *fields[1:]]
    monkeypatch.setattr(_prepared, "host_compiled", lambda code, policy, **_: fields)


async def test_the_worker_runs_the_code_object_the_host_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _ship(monkeypatch, "print('shipped')\n'value'\n")
    async with no_leaks(), SubprocessRuntime(min_idle=0) as runtime:
        result = await runtime.execute("print('source')\n", {})
    assert result.ok, result.error
    assert (result.stdout, result.value) == ("shipped\n", "value")


async def test_the_worker_compiles_the_source_when_the_bytecode_is_foreign(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _ship(monkeypatch, "print('shipped')\n", magic="00000000")
    async with no_leaks(), SubprocessRuntime(min_idle=0) as runtime:
        result = await runtime.execute("print('source')\n", {})
    assert (result.ok, result.stdout) == (True, "source\n")


async def test_both_paths_report_the_same_results_and_errors() -> None:
    """Short snippets take the host's code, long ones the worker's compile."""
    padding = "#" * HOST_COMPILE_MAX_CHARS + "\n"  # a trailing comment: same line numbers
    cases = [
        "x = [i * i for i in range(4)]\nprint(x)\nsum(x)\n",
        "import json\njson.dumps({'a': 1})\n",
        "def f(:\n",
        "().__class__.__bases__\n",
        "raise ValueError('no')\n",
        "async def f():\n    return 5\nawait f()\n",
    ]
    async with no_leaks(), SubprocessRuntime(min_idle=0) as runtime:
        for code in cases:
            await runtime.execute(code, {})  # the first time the worker compiles it
            await runtime.execute(code, {})  # the second: the host compiles it off-loop
            await _compiled_off_loop(code, RESTRICTED)
            short = await runtime.execute(code, {})
            long = await runtime.execute(code + padding, {})
            assert short.ok == long.ok, code
            assert (short.stdout, short.value, short.error_type) == (
                long.stdout,
                long.value,
                long.error_type,
            ), code
            if short.error is not None:
                assert long.error is not None
                assert short.error == long.error, code


def test_a_runtime_never_compiles_on_the_calling_thread() -> None:
    """``block=False``: the compile runs in the background; later calls get its result."""
    code = "x = 'off the loop'\n"
    assert host_compiled(code, RESTRICTED, block=False) is None  # first sight
    assert host_compiled(code, RESTRICTED, block=False) is None  # started, not waited for
    deadline = time.monotonic() + 60
    while (fields := host_compiled(code, RESTRICTED, block=False)) is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert fields == encode_compiled(_same_as_worker(code, RESTRICTED))


def _heavy_snippet() -> str:
    """Close to :data:`HOST_COMPILE_MAX_CHARS`, and slow to transform (a guard per read)."""
    lines = ["s = 'x'"]
    while len("\n".join(lines)) < HOST_COMPILE_MAX_CHARS - 60:
        lines.append("s.upper; s.lower; s.strip; s.title; s.count")
    lines.append("print(s)")
    return "\n".join(lines) + "\n"


async def _loop_cpu_per_tick(runtime: SubprocessRuntime, code: str, runs: int) -> float:
    """The most CPU time the loop's own thread spent between two ticks over ``runs``.

    CPU time of the loop thread: the load on the machine does not count in it.
    """
    ticks: list[float] = []
    stop = False

    async def tick() -> None:
        while not stop:
            before = time.thread_time()
            await asyncio.sleep(0.001)
            ticks.append(time.thread_time() - before)

    ticker = asyncio.create_task(tick())
    for _ in range(runs):
        result = await runtime.execute(code, {})
        assert (result.ok, result.stdout) == (True, "x\n"), result.error
        for _ in range(500):  # a background compile finishes (none if it ran on the loop)
            if (code, True) in _compile._ready or len(code) > HOST_COMPILE_MAX_CHARS:
                break
            await asyncio.sleep(0.01)
    stop = True
    await ticker
    return max(ticks)


async def test_the_event_loop_is_not_blocked_by_a_host_compile() -> None:
    """Issue 13, item 3: the host compiles a repeated snippet in a thread, not on the loop.

    The same snippet padded past :data:`HOST_COMPILE_MAX_CHARS` is never compiled by the
    host: its runs show what a tick costs the loop anyway (the pre-flight parse ...).
    The runs of the short one may not cost a tick half a compile more. When the host
    compiled on the loop, one tick held the whole compile.
    """
    code = _heavy_snippet()
    assert len(code) <= HOST_COMPILE_MAX_CHARS
    started = time.thread_time()
    compile_snippet(code, RESTRICTED, os_enforced_limits=True, cache=False)
    compile_cpu = time.thread_time() - started
    async with no_leaks(), SubprocessRuntime(min_idle=1) as runtime:
        baseline = await _loop_cpu_per_tick(runtime, code + "#" * HOST_COMPILE_MAX_CHARS, 4)
        repeated = await _loop_cpu_per_tick(runtime, code, 4)  # 2nd run: the host compiles
    assert repeated < baseline + compile_cpu / 2, (repeated, baseline, compile_cpu)
    assert (code, True) in _compile._ready  # the host did compile it, off the loop

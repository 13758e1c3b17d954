"""The host compiles repeated short snippets and ships the code object to the worker.

The worker must run exactly what the host compiled (same transform, same policy), and
compile the source itself the first time, for long snippets, for failed compiles, for
code objects too large to ship and for another Python's bytecode, reporting compile
errors as it always did.
"""

from __future__ import annotations

import marshal
from typing import Any

import pytest

from ptcbox import SubprocessRuntime
from ptcbox.errors import PolicyViolation
from ptcbox.runtimes.subprocess import _runtime as _subprocess
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
    monkeypatch.setattr(_subprocess, "host_compiled", lambda code, policy: fields)


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

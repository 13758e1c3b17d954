"""ThreadRuntime parses a new snippet once: the pre-flight check's tree is compiled.

The check parses on the event loop thread and hands its tree to the job, whose compile
(in the snippet thread, under the time limit) transforms it instead of parsing again.
The outcome must be exactly the one of the job's own parse: same refusals with the same
message and line, same syntax errors, same run-time errors and values.
"""

from __future__ import annotations

import ast
from typing import Any

import pytest

from ptcbox import DirectProjection, ThreadRuntime
from ptcbox.runtimes._shared._preflight import _ANALYSES, MAX_CHECKED_CHARS, preflight_parsed
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._compile import clear_compile_cache

pytestmark = pytest.mark.anyio


def ping(i: int) -> int:
    """Return ``i``."""
    return i


TOOLS = {"ping": DirectProjection("ping", ping)}

CODES = [
    "x = ping(i=2)\nprint(x * 21)\nx",
    "a = ping(i=1)\na.__globals__\n",  # refused by the transform, line 2
    "ping(i=1)\ndef f():\n    _getattr_ = 1\n",
    "ping(i=1)\nx = (\n",  # does not parse: the job's SyntaxError
    "ping(i=1)\nasync def g():\n    return ping(i=3)\nv = await g()\nv + 1\n",
    "y = ping(i=1)\nfor k in range(3):\n    y = y * k\n1 / y\n",  # ZeroDivisionError line 4
    "vals = [ping(i=k) for k in range(3)]\nsum(v for v in vals if v)\n",
]


def _summary(result: Any) -> tuple[Any, ...]:
    return (result.stdout, result.error, result.error_type, result.value, result.return_code)


@pytest.mark.parametrize("code", CODES)
async def test_the_shared_tree_gives_the_outcome_of_the_jobs_own_parse(code: str) -> None:
    runtime = ThreadRuntime(SandboxPolicy())
    try:
        clear_compile_cache()
        _ANALYSES.clear()
        shared = await runtime.execute(code, TOOLS)  # new source: the check's tree
        clear_compile_cache()
        # the check's analysis is cached now: it parses nothing, the job parses the code
        alone = await runtime.execute(code, TOOLS)
    finally:
        await runtime.aclose()
    assert _summary(shared) == _summary(alone)


async def test_the_job_does_not_parse_again(monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[str] = []
    real = ast.parse

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        parses.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    runtime = ThreadRuntime(SandboxPolicy())
    code = "n = ping(i=41)\nn + 1  # test_the_job_does_not_parse_again\n"
    try:
        result = await runtime.execute(code, TOOLS)
    finally:
        await runtime.aclose()
    assert result.value == 42 and result.error is None
    assert code not in parses


def test_the_check_returns_its_tree_only_when_it_parsed() -> None:
    specs = ThreadRuntime()._table.resolve(TOOLS)
    code = "ping(i=1)  # test_the_check_returns_its_tree_only_when_it_parsed\n"
    failure, tree = preflight_parsed(code, specs, set())
    assert failure is None and isinstance(tree, ast.Module)
    assert ast.dump(tree) == ast.dump(ast.parse(code))
    assert preflight_parsed(code, specs, set()) == (None, None)  # seen: nothing parsed
    assert preflight_parsed("x = (", specs, set()) == (None, None)
    assert preflight_parsed("ping(i=1)", {}, set()) == (None, None)  # no tools: no check
    long = "x = 1\n" * (MAX_CHECKED_CHARS // 6 + 1)
    assert preflight_parsed(long, specs, set()) == (None, None)
    refused, _ = preflight_parsed("ping(j=1)\nping(i=2)\n", specs, set())
    assert refused is not None and refused.error_type == "TypeError"

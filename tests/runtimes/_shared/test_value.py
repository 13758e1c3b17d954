"""Size caps on what a snippet hands back (``runtimes/_shared/_value.py``), per runtime.

One rule in both runtimes: a trailing value whose JSON is over ``max_output_bytes`` is
dropped (``value=None``, ``truncated=True``, a note on stderr); one tool call's
arguments or one tool result over ``MAX_TOOL_DATA_BYTES`` of JSON raise a clear error in
the snippet. Also what ThreadRuntime guarantees at a deadline passed inside a C call
that holds the GIL (reported as a timeout, never as success).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from ptcbox import CodeResult, DirectProjection
from ptcbox._jsonable import to_jsonable
from ptcbox.runtimes._shared._value import (
    MAX_TOOL_DATA_BYTES,
    capped_value,
    encode_json,
    json_size_over,
)
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio

BIG = 20_000_000  # characters: over MAX_TOOL_DATA_BYTES, under max_repeat_bytes


def size_of(text: str) -> int:
    return len(text)


def big_result() -> str:
    """Returns more text than one tool result may carry."""
    return "b" * BIG


NAMESPACE = {fn.__name__: DirectProjection(fn.__name__, fn) for fn in (size_of, big_result)}


async def run(runtime: Any, code: str) -> CodeResult:
    result: CodeResult = await runtime.execute(code, NAMESPACE, timeout=30)
    json.dumps(result.to_dict())
    return result


@pytest.mark.parametrize(
    "code", ["'x' * 5000", "list(range(3000))", "{'k': ['é' * 900, 'ü' * 900]}", "b'z' * 4000"]
)
async def test_a_value_over_max_output_bytes_is_dropped_with_a_note(
    make_runtime: Any, code: str
) -> None:
    runtime = make_runtime(SandboxPolicy(max_output_bytes=2000))
    result = await run(runtime, f"print('before')\n{code}")
    assert result.ok, result.error
    assert result.value is None
    assert result.truncated
    assert result.stdout == "before\n"
    assert "[value omitted: its JSON encoding is" in result.stderr
    assert "over the 2,000-byte limit (max_output_bytes)" in result.stderr
    assert "[value omitted" in result.render()


async def test_a_value_within_max_output_bytes_comes_back_whole(make_runtime: Any) -> None:
    runtime = make_runtime(SandboxPolicy(max_output_bytes=2000))
    result = await run(runtime, "'x' * 1990")
    assert result.ok
    assert result.value == "x" * 1990
    assert not result.truncated and result.stderr == ""


async def test_a_ten_million_item_value_is_dropped_quickly(runtime: Any) -> None:
    result = await run(runtime, "list(range(10**7))")
    assert result.ok, result.error
    assert result.value is None and result.truncated
    assert "more than 1,000,000 bytes" in result.stderr


async def test_a_tool_argument_over_the_limit_raises_value_error(runtime: Any) -> None:
    code = (
        f"text = 'a' * {BIG}\n"
        "try:\n"
        "    size_of(text=text)\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
        "size_of(text='ok')"
    )
    result = await run(runtime, code)
    assert result.ok, result.error
    assert "the arguments of size_of(...) are at least 20,000,0" in result.stdout
    assert f"over the {MAX_TOOL_DATA_BYTES:,}-byte limit for one tool call" in result.stdout
    assert result.value == 2
    assert [(c.name, c.ok) for c in result.tool_calls] == [("size_of", True)]


async def test_a_tool_result_over_the_limit_is_a_tool_error(runtime: Any) -> None:
    code = "try:\n    big_result()\nexcept ToolError as exc:\n    print(exc)\n"
    result = await run(runtime, code)
    assert result.ok, result.error
    assert "the result of big_result(...) is at least" in result.stdout
    assert f"over the {MAX_TOOL_DATA_BYTES:,}-byte limit for one tool result" in result.stdout
    assert [(c.name, c.ok) for c in result.tool_calls] == [("big_result", False)]


@pytest.mark.slow
async def test_a_c_call_holding_the_gil_past_the_deadline_is_a_timeout(runtime: Any) -> None:
    """What is guaranteed when the deadline passes inside a C call that holds the GIL:
    the result is a timeout, never a success (ThreadRuntime cannot return before the
    call ends: the call blocks the whole process; SubprocessRuntime kills the worker)."""
    started = time.perf_counter()
    result = await run_with_timeout(runtime, "sum(range(3 * 10**8))", 0.5)
    assert result.timed_out
    assert result.error_type == "TimeoutError"
    assert result.value is None
    assert result.duration_s >= 0.5
    assert time.perf_counter() - started >= 0.5


async def run_with_timeout(runtime: Any, code: str, timeout: float) -> CodeResult:
    result: CodeResult = await runtime.execute(code, NAMESPACE, timeout=timeout)
    return result


# --- the size functions themselves ------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "abc",
        "é" * 10,
        'quote " and \\ and \n',
        [1, 2.5, None, True, "x"],
        {"a": [1, {"b": "c"}], "": []},
        (1, 2),
        {1, 2, 3},
        b"bytes",
        list(range(100)),
        [[[[]]]],
    ],
)
def test_json_size_over_is_a_lower_bound(value: Any) -> None:
    exact = len(encode_json(to_jsonable(value)))
    assert json_size_over(value, exact) == 0  # never claims more than the real size
    assert json_size_over(value, 0) <= exact


def test_json_size_over_stops_early_and_never_calls_snippet_code() -> None:
    class Evil(list[int]):
        def __len__(self) -> int:
            raise AssertionError("called")

        def __iter__(self) -> Any:
            raise AssertionError("called")

    assert json_size_over(Evil(range(10)), 5) > 5
    long_list, wide_nested = list(range(10**7)), [["x" * 100] * 10**6]  # built untimed
    started = time.perf_counter()
    assert json_size_over(long_list, 1000) > 1000
    assert json_size_over(wide_nested, 1000) > 1000
    assert time.perf_counter() - started < 5  # generous: O(limit), not O(size)


def test_capped_value_checks_the_exact_encoding() -> None:
    # Escapes make the JSON larger than the lower bound sees: the exact check drops it.
    data, note = capped_value("\x01" * 500, 1000)
    assert data is None and note is not None and "3,002 bytes" in note
    assert capped_value("\x01" * 100, 1000) == ("\x01" * 100, None)

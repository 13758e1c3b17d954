"""A runaway print loop is stopped with OutputLimitExceeded (issue 13), in both runtimes.

Output past ``max_output_bytes`` is truncated (head and tail kept); far past it
(``output_stop_bytes``: 4x the cap, at least the cap + 1 MiB) the execution ends with a
limit error instead of running to the timeout, also when the snippet catches
``BaseException`` around its loop.
"""

from __future__ import annotations

from typing import Any

import pytest

from ptcbox.errors import OutputLimitExceeded
from ptcbox.runtimes._shared._output import output_flood, output_stop_bytes
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio

LIMITS: dict[str, Any] = {"max_output_bytes": 10_000, "timeout": 60.0}
POLICY = SandboxPolicy(**LIMITS)


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
async def test_a_print_loop_is_stopped_with_head_and_tail_kept(
    make_runtime: Any, stream: str
) -> None:
    # stderr needs sys (trusted code); restricted code writes stdout
    policy = POLICY if stream == "stdout" else SandboxPolicy.trusted().replace(**LIMITS)
    runtime = make_runtime(policy)
    target = "" if stream == "stdout" else ", file=sys.stderr"
    code = (
        "print('HEAD')\n"
        "n = 0\n"
        "while True:\n"
        "    n += 1\n"
        f"    print(f'line {{n}} ' + 'x' * 100{target})\n"
    )
    if stream == "stderr":
        code = "import sys\n" + code.replace("print('HEAD')", "print('HEAD', file=sys.stderr)")
    result = await runtime.execute(code, {}, timeout=60)
    assert result.error_type == "OutputLimitExceeded", result.error
    assert not result.timed_out
    assert result.duration_s < 30  # stopped by the flood, not the 60 s timeout
    assert result.error is not None
    assert result.error.startswith("OutputLimitExceeded: max_output_bytes exceeded: ")
    assert "> limit 10,000 bytes" in result.error
    assert "so it was stopped; the head and the tail of its output are kept" in result.error
    text = getattr(result, stream)
    assert text.startswith("HEAD\n") and "[truncated " in text
    assert text.rstrip("\n").split("\n")[-1].startswith("line ")  # the tail is there
    assert result.truncated


async def test_catching_baseexception_does_not_keep_it_writing(make_runtime: Any) -> None:
    runtime = make_runtime(POLICY)
    code = "try:\n    while True:\n        print('y' * 100)\nexcept BaseException:\n    pass\n"
    code += "while True:\n    print('z' * 100)\n"
    result = await runtime.execute(code, {}, timeout=60)
    assert result.error_type == "OutputLimitExceeded", result.error
    assert result.duration_s < 30


async def test_output_a_little_over_the_cap_is_only_truncated(make_runtime: Any) -> None:
    """Control: 2x the cap is cut as before and the code finishes normally."""
    runtime = make_runtime(POLICY)
    result = await runtime.execute("for _ in range(200):\n    print('x' * 99)\n'end'", {})
    assert result.ok, result.error
    assert result.value == "end" and result.truncated


def test_the_stop_point_and_the_error() -> None:
    assert output_stop_bytes(1_000_000) == 4_000_000
    assert output_stop_bytes(10_000) == 10_000 + (1 << 20)
    exc = OutputLimitExceeded(10, 20)
    assert (exc.limit_name, exc.limit, exc.observed, exc.unit) == (
        "max_output_bytes",
        10,
        20,
        "bytes",
    )
    # the stop point reads like the limit beside it: "4,000,000", not "4000000"
    error, note = output_flood(1_000_000, 4_000_030)
    assert f"{error}{note}" == (
        "max_output_bytes exceeded: 4,000,030 bytes > limit 1,000,000 bytes (the code kept "
        "writing past 4,000,000 bytes, far over the output cap, so it was stopped; the head "
        "and the tail of its output are kept)"
    )

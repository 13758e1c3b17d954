"""The runtime-relevant bad-input cases of ``shared/cases/bug_cases.jsonl``, per runtime.

Each test names its case id in its function name (``test_B03_...``); the cases here:
B01, B03, B03b, B04, B06, B07, B07b, B08, B08b, B09, B09b, B12, B14, B15, B17, B18,
B19, B20, B23, B24, B25, B29. B11 and B22 (process-only) are in
``subprocess/test_limits.py`` and ``subprocess/test_runtime.py``; B26 and B28 in
``tests/agent_glue``. The snippets are copied here verbatim so the
suite runs on a machine without the shared folder. Where runtimes differ (B15, B17:
the thread runtime refuses the code with the policy's size guards because it cannot
stop a C call that holds the GIL), the expectation is marked per runtime.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from typing import Any

import psutil
import pytest

from ptcbox import CodeResult, DirectProjection
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio


def search(query: str = "") -> list[str]:
    """A tool the escape attempts aim at."""
    return [query]


async def fetch_async(q: str) -> str:
    """An async host tool."""
    await asyncio.sleep(0.01)
    return f"{q}-result"


NAMESPACE = {
    "search": DirectProjection("search", search),
    "fetch_async": DirectProjection("fetch_async", fetch_async),
}


async def run(runtime: Any, code: str, **kwargs: Any) -> CodeResult:
    result: CodeResult = await runtime.execute(code, NAMESPACE, **kwargs)
    json.dumps(result.to_dict())
    return result


def assert_refused(result: CodeResult, *, mentions: str = "") -> None:
    assert result.return_code == 1
    assert result.error_type in {"PolicyViolation", "ImportError", "AttributeError"}, result.error
    assert result.error is not None and mentions in result.error
    assert "__globals__" not in result.stdout and "function" not in result.stdout


# --- escapes ------------------------------------------------------------------------


async def test_B01_generator_frame_walk_is_blocked(runtime: Any) -> None:
    code = (
        "def gen():\n    fr = g.gi_frame.f_back\n    yield fr.f_back.f_globals\n"
        "g = gen()\nfor result in g:\n    break"
    )
    result = await run(runtime, code)
    assert_refused(result, mentions="gi_frame")
    assert result.stdout == ""


async def test_B03_str_format_traversal_is_blocked(runtime: Any) -> None:
    result = await run(runtime, 'a = "{0.__globals__}".format(search)\nprint(a)')
    assert_refused(result)
    assert result.stdout == ""


async def test_B03b_format_map_traversal_is_blocked(runtime: Any) -> None:
    result = await run(runtime, 'b = "{t.__class__}".format_map({"t": search})\nprint(b)')
    assert_refused(result)
    assert result.stdout == ""


async def test_B04_string_formatter_get_field_is_blocked(runtime: Any) -> None:
    code = 'import string\nprint(string.Formatter().get_field("0.__globals__", [search], {})[0])'
    result = await run(runtime, code)
    assert_refused(result, mentions="Formatter")
    assert result.stdout == ""


async def test_B06_try_except_star_is_refused_or_safe(runtime: Any) -> None:
    code = (
        'try:\n    raise ExceptionGroup("g", [ValueError(1)])\n'
        'except* ValueError:\n    print("ran")'
    )
    result = await run(runtime, code)
    if result.ok:
        assert result.stdout == "ran\n"
    else:
        assert result.error_type in {"PolicyViolation", "SyntaxError"}
        assert result.error is not None and "except*" in result.error


@pytest.mark.parametrize(
    "code",
    [
        "import math\ndef f(_write_=lambda o: o, /):\n    math.pi = 3\nf()\nprint(math.pi)",
        "import math\nmath.pi = 3\nprint(math.pi)",
    ],
    ids=["B07", "B07b"],
)
async def test_B07_B07b_modules_are_read_only(runtime: Any, code: str) -> None:
    result = await run(runtime, code)
    assert_refused(result)
    assert math.pi == 3.141592653589793
    later = await run(runtime, "import math\nprint(math.pi)")
    assert later.stdout == f"{math.pi}\n"


async def test_B08_dunder_class_hierarchy_traversal_is_blocked(runtime: Any) -> None:
    result = await run(runtime, "a = ().__class__.__base__.__subclasses__()\nprint(len(a))")
    assert_refused(result, mentions="__class__")


async def test_B08b_getattr_with_dunder_strings_is_blocked(runtime: Any) -> None:
    result = await run(runtime, 'b = getattr(getattr((), "__class__"), "__base__")\nprint(b)')
    assert_refused(result, mentions="__class__")
    assert result.stdout == ""


async def test_B09_private_module_attribute_is_blocked(runtime: Any) -> None:
    result = await run(runtime, "import random\nprint(random._os)")
    assert_refused(result, mentions="_os")
    assert result.stdout == ""


@pytest.mark.parametrize(
    "module", ["importlib", "ctypes", "subprocess", "os", "pickle", "socket", "builtins"]
)
async def test_B09b_dangerous_imports_raise_import_error(runtime: Any, module: str) -> None:
    result = await run(runtime, f"import {module}")
    assert result.error_type == "ImportError"
    assert result.error is not None and module in result.error


# --- host safety ----------------------------------------------------------------------


@pytest.mark.parametrize("exc", ["SystemExit(3)", "KeyboardInterrupt()", "GeneratorExit()"])
async def test_B12_system_exit_and_keyboard_interrupt_become_failed_results(
    runtime: Any, exc: str
) -> None:
    result = await run(runtime, f'print("before")\nraise {exc}')
    assert result.stdout == "before\n"
    assert result.return_code == 1
    assert result.error_type == exc.split("(", maxsplit=1)[0]
    again = await run(runtime, "print('host alive')")
    assert again.stdout == "host alive\n"


# --- timeouts and resources ---------------------------------------------------------------


async def test_B14_infinite_loop_times_out_and_the_worker_stops(
    runtime: Any, wait_for_threads: Any
) -> None:
    await run(runtime, "1")  # warm up: pool threads / workers exist before the baseline
    baseline = threading.active_count()
    started = time.monotonic()
    result = await run(runtime, "n = 0\nwhile True:\n    n += 1", timeout=1.0)
    assert time.monotonic() - started < 1.0 + 0.5
    assert result.timed_out and result.error_type == "TimeoutError"
    assert wait_for_threads(baseline) <= baseline


async def test_B15_huge_power_is_refused_before_running(runtime: Any, runtime_name: str) -> None:
    """B15: the thread runtime cannot interrupt a C call that holds the GIL, so the
    policy's arithmetic guard refuses ``10 ** (10 ** 8)`` before any work starts."""
    started = time.monotonic()
    result = await run(runtime, "x = 10 ** (10 ** 8)", timeout=5)
    assert time.monotonic() - started < 5 + 0.5
    assert result.return_code == 1
    if runtime_name == "thread":
        assert result.error_type == "ArithmeticLimitExceeded"
        assert time.monotonic() - started < 2.0
    else:
        assert result.error_type in {"ArithmeticLimitExceeded", "TimeoutError"}


async def test_B17_memory_bomb_is_refused_and_the_host_stays_alive(
    runtime: Any, runtime_name: str
) -> None:
    rss_before = psutil.Process().memory_info().rss
    result = await run(runtime, 's = "a" * 10**10', timeout=10)
    assert result.return_code == 1
    expected = {"ArithmeticLimitExceeded", "MemoryError"}
    if runtime_name != "thread":
        expected |= {"MemoryLimitExceeded", "WorkerCrashed"}
    assert result.error_type in expected
    assert psutil.Process().memory_info().rss - rss_before < 512 << 20
    assert (await run(runtime, "print('alive')")).stdout == "alive\n"


async def test_B18_int_str_conversion_limit_is_a_fast_value_error(runtime: Any) -> None:
    started = time.monotonic()
    result = await run(runtime, "print(10 ** 5000)")
    assert time.monotonic() - started < 5
    assert result.error_type == "ValueError"
    assert result.error is not None and "digits" in result.error


async def test_B19_deeply_nested_source_is_a_failed_result(runtime: Any, make_runtime: Any) -> None:
    code = "x = 0" + "+1" * 210_000  # 420,005 characters
    refused = await run(runtime, code, timeout=20)  # over the default max_code_chars
    assert refused.error_type == "CodeSizeLimitExceeded", refused.error
    assert refused.duration_s < 1  # before any parse
    # A policy that lets it through reaches the nesting itself
    roomy = make_runtime(SandboxPolicy(max_code_chars=1_000_000))
    result = await run(roomy, code, timeout=20)
    assert result.return_code == 1
    assert result.error_type in {"RecursionError", "SyntaxError", "MemoryError"}, result.error
    assert (await run(roomy, "print('alive')")).stdout == "alive\n"


async def test_B20_blocking_sleep_returns_at_the_timeout(
    runtime: Any, wait_for_threads: Any
) -> None:
    await run(runtime, "1")
    baseline = threading.active_count()
    started = time.monotonic()
    result = await run(runtime, "import time\ntime.sleep(30)", timeout=1.0)
    assert time.monotonic() - started < 1.0 + 0.5
    assert result.timed_out
    after = time.monotonic()
    quick = await run(runtime, "print('next')")
    assert quick.stdout == "next\n"
    assert time.monotonic() - after < 2.0  # the caller is not blocked afterwards
    assert wait_for_threads(baseline) <= baseline


# --- isolation and output ------------------------------------------------------------------


async def test_B23_concurrent_executions_never_mix_stdout(runtime: Any) -> None:
    markers = [f"M{n}" for n in range(50)]
    code = 'for i in range(2000):\n    print("{m}", i)'
    results = await asyncio.gather(*[run(runtime, code.format(m=m), timeout=60) for m in markers])
    for marker, result in zip(markers, results, strict=True):
        assert result.ok, result.error
        lines = result.stdout.splitlines()
        assert lines == [f"{marker} {i}" for i in range(2000)]


async def test_B24_output_flood_is_capped_and_memory_bounded(make_runtime: Any) -> None:
    """B24 verbatim (10**7 prints): cut off by the timeout, the output stays capped."""
    runtime = make_runtime(SandboxPolicy(max_output_bytes=20_000))
    rss_before = psutil.Process().memory_info().rss
    result = await run(runtime, "for i in range(10**7):\n    print(i)", timeout=2)
    assert result.truncated
    assert result.stdout.startswith("0\n1\n2\n")
    assert "[truncated " in result.stdout
    assert len(result.stdout.encode()) <= 20_000 + 64
    assert psutil.Process().memory_info().rss - rss_before < 200 << 20


async def test_B24_output_flood_that_finishes_keeps_head_and_tail(make_runtime: Any) -> None:
    runtime = make_runtime(SandboxPolicy(max_output_bytes=10_000))
    result = await run(runtime, "for i in range(10**5):\n    print(i)", timeout=30)
    assert result.ok and result.truncated
    assert result.stdout.startswith("0\n1\n")
    assert result.stdout.endswith("99998\n99999\n")
    dropped = int(result.stdout.split("[truncated ")[1].split(" bytes]")[0])
    total = sum(len(f"{i}\n") for i in range(10**5))
    assert dropped == total - len(result.stdout.encode()) + len(f"\n[truncated {dropped} bytes]\n")


async def test_B24_giant_error_message_is_capped(runtime: Any) -> None:
    result = await run(runtime, "raise ValueError('x' * 50_000_000)", timeout=30)
    assert result.error_type == "ValueError"
    assert result.truncated
    assert result.error is not None
    assert len(result.error.encode()) <= SandboxPolicy().max_output_bytes + 64
    assert "[truncated " in result.error


# --- async and encoding ----------------------------------------------------------------------


async def test_B25_asyncio_run_inside_a_host_that_runs_a_loop(runtime: Any) -> None:
    code = (
        "import asyncio\nasync def main():\n"
        '    return await fetch_async(q="x")\nprint(asyncio.run(main()))'
    )
    result = await run(runtime, code, timeout=10)
    assert result.ok, result.error
    assert result.stdout == "x-result\n"
    assert [(c.name, c.ok) for c in result.tool_calls] == [("fetch_async", True)]


async def test_B29_lone_surrogates_on_stdout(runtime: Any) -> None:
    result = await run(runtime, 'print("ok \\ud800")')
    assert result.return_code == 0
    assert result.stdout == "ok \ufffd\n"
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")

"""Script exit semantics (issue 11 class 8) on both runtimes, sessions included."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "stop",
    [
        "import sys\nsys.exit(0)",
        "import sys\nsys.exit()",
        "import sys\nsys.exit(None)",
        "exit()",
        "quit()",
        "raise SystemExit(0)",
        "raise SystemExit(None)",
        "raise SystemExit",
        "import sys\nsys.exit(False)",
    ],
)
async def test_exit_with_no_or_zero_code_is_a_success(runtime: Any, stop: str) -> None:
    result = await runtime.execute(f"print('answer: 42')\n{stop}\nprint('never')", {})
    assert (result.return_code, result.error, result.error_type) == (0, None, None)
    assert result.stdout == "answer: 42\n"


@pytest.mark.parametrize("stop", ["import sys\nsys.exit(2)", "exit(2)", "raise SystemExit(3)"])
async def test_non_zero_exit_is_a_failure_naming_the_status(runtime: Any, stop: str) -> None:
    result = await runtime.execute(f"print('partial')\n{stop}", {})
    status = stop[-2]
    assert (result.return_code, result.error_type, result.stdout) == (1, "SystemExit", "partial\n")
    assert result.error is not None and f"exited with status {status}" in result.error


async def test_string_exit_code_goes_to_stderr_like_cpython(runtime: Any) -> None:
    result = await runtime.execute("import sys\nprint('x')\nsys.exit('no data for Q3')", {})
    assert (result.return_code, result.error_type) == (1, "SystemExit")
    assert (result.stdout, result.stderr) == ("x\n", "no data for Q3\n")


async def test_systemexit_can_be_caught_as_in_cpython(runtime: Any) -> None:
    code = "import sys\ntry:\n    sys.exit(4)\nexcept SystemExit as e:\n    print('code', e.code)"
    result = await runtime.execute(code, {})
    assert (result.return_code, result.stdout) == (0, "code 4\n")


async def test_a_session_survives_exit(runtime: Any) -> None:
    async with runtime.session() as session:
        first = await session.execute("total = 5\nimport sys\nsys.exit(1)", {})
        assert (first.return_code, first.error_type) == (1, "SystemExit")
        second = await session.execute("print(total)\nexit()", {})
        assert (second.return_code, second.stdout) == (0, "5\n")
        third = await session.execute("print(total + 1)", {})
        assert third.stdout == "6\n"

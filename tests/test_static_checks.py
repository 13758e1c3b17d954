"""CI runs the linters and the type checker the project promises (ruff, ruff format, mypy).

Each tool runs as a subprocess from the same environment as the tests; a tool that is not
installed skips its test (it is in the ``dev`` extra, so CI has it).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ["src", "tests", "examples", "benchmarks"]


def _tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def _existing(paths: list[str]) -> list[str]:
    return [path for path in paths if (ROOT / path).exists()]


def test_ruff_check() -> None:
    done = _run(_tool("ruff"), "check", "--no-cache", *_existing(TARGETS))
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format() -> None:
    done = _run(_tool("ruff"), "format", "--check", "--no-cache", *_existing(TARGETS))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)  # mypy on a cold cache takes minutes on a loaded 2-core machine
def test_mypy_strict_on_src() -> None:
    done = _run(_tool("mypy"), "--strict", "src")
    assert done.returncode == 0, done.stdout + done.stderr

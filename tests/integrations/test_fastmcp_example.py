"""examples/fastmcp_code_mode.py runs and prints what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastmcp")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fastmcp_code_mode.py"


def test_fastmcp_code_mode_example() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tools the model sees: ['execute', 'get_schema', 'search']" in done.stdout
    assert "result: {'most_expensive': 'C3', 'median': 12.5}" in done.stdout

"""`ptcbox run -` with hostile input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PTCBOX = [sys.executable, "-m", "ptcbox.cli"]


def run(stdin: bytes, *args: str, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    exe = Path(sys.executable).with_name("ptcbox")
    cmd = [str(exe), "run", "-", *args] if exe.exists() else [*PTCBOX, "run", "-", *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=30, cwd=tmp, check=False)


def test_nul_byte_is_a_failed_result(tmp_path: Path) -> None:
    proc = run(b"print(1)\x00\n", "--json", tmp=tmp_path)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error_type"] == "SyntaxError"


def test_invalid_utf8_is_a_failed_result(tmp_path: Path) -> None:
    proc = run(b'print("\xff\xfe")\n', tmp=tmp_path)
    assert proc.returncode == 1
    assert b"Traceback" not in proc.stderr


@pytest.mark.parametrize("timeout", ["nan", "1e400", "-1", "0"])
def test_bad_timeouts_are_usage_errors(tmp_path: Path, timeout: str) -> None:
    assert run(b"print(1)", "--timeout", timeout, tmp=tmp_path).returncode == 2


def test_cli_default_runtime_does_not_leak_host_modules(tmp_path: Path) -> None:
    code = (
        b"import functools\ndef f(): pass\n"
        b"functools.update_wrapper(f, print, assigned=(), updated=('__globals__',))\n"
        b"print('ESCAPED', type(sys).__name__)\n"
    )
    proc = run(code, tmp=tmp_path)
    assert b"ESCAPED" not in proc.stdout

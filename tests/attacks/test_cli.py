"""`ptcbox run -` with hostile input.

The escape through the CLI follows the ``_proof`` pattern: its control runs the same CLI
with only the module views switched off (``PTCBOX_TEST_ABLATE``) and escapes; the default
CLI refuses it exactly. The other tests are bad input, not attacks on a guard: CPython
itself refuses a NUL byte; what is checked is that the CLI turns each into a clean,
failed result or a usage error (never a host traceback).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from ptcbox.sandbox._ablation import ENV_VAR

from ._proof import Attack, assert_refused

PTCBOX = [sys.executable, "-m", "ptcbox.cli"]


def run(
    stdin: bytes, *args: str, tmp: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    exe = Path(sys.executable).with_name("ptcbox")
    cmd = [str(exe), "run", "-", *args] if exe.exists() else [*PTCBOX, "run", "-", *args]
    return subprocess.run(
        cmd, input=stdin, capture_output=True, timeout=60, cwd=tmp, env=env, check=False
    )


def test_nul_byte_is_a_failed_result(tmp_path: Path) -> None:
    proc = run(b"print(1)\x00\n", "--json", tmp=tmp_path)
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert (result["error_type"], result["error"]) == (
        "SyntaxError",
        "SyntaxError: source code string cannot contain null bytes",
    )
    assert proc.stderr == b""


def test_invalid_utf8_is_a_usage_error(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are refused before anything runs (they used to become lone
    surrogates and fail inside the run as a UnicodeEncodeError)."""
    proc = run(b'print("\xff\xfe")\n', "--json", tmp=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert proc.stderr == (
        b"ptcbox run: cannot read stdin: it is not valid utf-8 text (byte 0xff on line 1); "
        b"save the code as UTF-8\n"
    )


def test_bad_timeouts_are_usage_errors(tmp_path: Path) -> None:
    assert run(b"print(1)", "--timeout", "5", tmp=tmp_path).returncode == 0  # control
    for timeout in ("nan", "1e400", "-1", "0"):
        proc = run(b"print(1)", "--timeout", timeout, tmp=tmp_path)
        assert proc.returncode == 2, timeout
        assert proc.stderr.decode().endswith(
            f"error: argument --timeout: must be a positive number of seconds, got {timeout}\n"
        )


TOOLS_MODULE = 'import sys\n\n\ndef search(q: str) -> str:\n    """Search for q."""\n    return q\n'
UPDATE_WRAPPER = Attack(
    "cli_update_wrapper",
    "import functools\ndef f(): pass\n"
    "functools.update_wrapper(f, search, assigned=(), updated=('__globals__',))\n"
    "print('ESCAPED', type(os).__name__)\n",  # the worker stub's module imports os
    3,
    "PolicyViolation",
    "functools.update_wrapper copies only __module__, __name__, __qualname__, __doc__, "
    "__annotations__ (assigned) and __dict__ (updated) in the sandbox, not '__globals__'",
    "module_views",
    "ESCAPED module",
    runtime="subprocess",
)


def test_cli_default_runtime_does_not_leak_host_modules(tmp_path: Path) -> None:
    """A tool's module imports ``os``: merging its globals would hand the snippet ``os``
    (the old test used ``print``, which has no ``__globals__``). In the worker the tool
    is its stub, whose module (``worker/_io.py``) imports ``os``."""
    (tmp_path / "hosttools.py").write_text(TOOLS_MODULE)
    args = ("--tools", "hosttools.py:search", "--json")
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    control = run(
        UPDATE_WRAPPER.code.encode(), *args, tmp=tmp_path, env={**env, ENV_VAR: "module_views"}
    )
    assert json.loads(control.stdout)["stdout"] == "ESCAPED module\n", control  # the escape
    proc = run(UPDATE_WRAPPER.code.encode(), *args, tmp=tmp_path)  # this process's switches
    assert proc.returncode == 1
    assert_refused(UPDATE_WRAPPER, SimpleNamespace(**json.loads(proc.stdout)))

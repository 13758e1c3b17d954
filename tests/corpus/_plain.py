"""Plain CPython, the reference: run a snippet with ``exec`` and the tools as plain functions.

``run_isolated`` starts a fresh interpreter per snippet (``python _plain.py``, the code on
stdin, ``PYTHONHASHSEED`` set), so module state a snippet sets up (logging handlers,
warning filters, ``random``'s seed) never reaches the next one. In the child, the snippet
is compiled with ``ast.PyCF_ALLOW_TOP_LEVEL_AWAIT``; a module that awaits at top level runs
under ``asyncio.run``. A snippet that awaits anywhere gets the ``async def`` tools, any
other the plain functions, as ptcbox hands awaitable tools to code that awaits.

Outcome, as ``python script.py`` would end: ``return_code`` 0 on success and for
``sys.exit()`` / ``sys.exit(0)`` / ``exit()``, 1 for an uncaught exception and for a
non-zero or string exit code; ``error_type`` is the uncaught exception's class name
(``"SystemExit"`` for a failing exit) or ``None``.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import inspect
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from _atools import ASYNC_TOOLS
from _tools import SYNC_TOOLS

__all__ = ["run_in_this_process", "run_isolated"]

_HERE = Path(__file__).resolve().parent
_ASYNC_NODES = (ast.Await, ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith)
_CHILD_TIMEOUT_S = 60


def _exit_outcome(exc: SystemExit, stderr: io.StringIO) -> tuple[int, str | None]:
    code = exc.code
    if code is None or code == 0:
        return 0, None
    if not isinstance(code, int):
        print(code, file=stderr)  # what the interpreter does with sys.exit("message")
    return 1, "SystemExit"


def run_in_this_process(code: str) -> dict[str, Any]:
    """Run ``code`` here; return {stdout, stderr, return_code, error_type}."""
    awaits = any(isinstance(node, _ASYNC_NODES) for node in ast.walk(ast.parse(code)))
    tools = ASYNC_TOOLS if awaits else SYNC_TOOLS
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins, **tools}
    stdout, stderr = io.StringIO(), io.StringIO()
    return_code, error_type = 0, None
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:  # dont_inherit: this module's `from __future__ import annotations` must not leak
            compiled = compile(
                code, "<snippet>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
            )
            if compiled.co_flags & inspect.CO_COROUTINE:
                asyncio.run(eval(compiled, namespace))
            else:
                exec(compiled, namespace)
        except SystemExit as exc:
            return_code, error_type = _exit_outcome(exc, stderr)
        except BaseException as exc:
            import traceback

            traceback.print_exc(file=stderr)
            return_code, error_type = 1, type(exc).__name__
    return {
        "stdout": stdout.getvalue(),
        "stderr": stderr.getvalue(),
        "return_code": return_code,
        "error_type": error_type,
    }


def run_isolated(code: str, hash_seed: int) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter under ``PYTHONHASHSEED=hash_seed``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONHASHSEED"] = str(hash_seed)
    env["TZ"] = "UTC"
    done = subprocess.run(
        [sys.executable, "-X", "utf8", str(Path(__file__))],
        input=code,
        capture_output=True,
        text=True,
        env=env,
        cwd=_HERE,
        timeout=_CHILD_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the plain runner itself failed:\n{done.stderr}")
    outcome: dict[str, Any] = json.loads(done.stdout)
    return outcome


if __name__ == "__main__":
    result = run_in_this_process(sys.stdin.read())
    sys.stdout.write(json.dumps(result))

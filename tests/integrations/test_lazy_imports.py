"""``import ptcbox`` (and ``ptcbox.integrations``) imports no optional framework or SDK."""

from __future__ import annotations

import subprocess
import sys

OPTIONAL = ("anthropic", "agents", "pydantic_ai", "langchain_core", "opentelemetry")


def test_import_ptcbox_stays_lean() -> None:
    code = (
        "import sys, ptcbox, ptcbox.agent_glue, ptcbox.integrations\n"
        f"print(sorted(m for m in {OPTIONAL!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_each_adapter_imports_only_its_framework() -> None:
    code = (
        "import sys, ptcbox.integrations.langchain\n"
        "print('pydantic_ai' in sys.modules, 'agents' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]

"""ptcbox.mcp stays optional: ``import ptcbox`` never imports the MCP SDK."""

from __future__ import annotations

import subprocess
import sys

import ptcbox.mcp


def test_import_ptcbox_does_not_import_mcp() -> None:
    code = "import sys, ptcbox; ptcbox.execute('1'); print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_public_names_are_exported_and_sorted() -> None:
    assert ptcbox.mcp.__all__ == sorted(ptcbox.mcp.__all__)
    for name in ptcbox.mcp.__all__:
        assert getattr(ptcbox.mcp, name) is not None

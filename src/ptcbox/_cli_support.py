"""Pieces of the ``ptcbox`` command line shared by its commands: usage errors and
loading a Python file as a module (``--tools path.py:attr``, ``benchmarks/*.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

__all__ = ["UsageError", "import_file"]


class UsageError(Exception):
    """Bad command-line input; reported on stderr with exit code 2."""


def import_file(path: Path, module_name: str) -> Any:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    directory = str(path.resolve().parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise UsageError(f"cannot import {path}: {type(exc).__name__}: {exc}") from exc
    return module

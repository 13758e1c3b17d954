"""Pieces of the ``ptcbox`` command line shared by its commands: usage errors, reading
source code (a file or stdin) and loading a Python file as a module (``--tools
path.py:attr``, ``benchmarks/*.py``)."""

from __future__ import annotations

import importlib.util
import io
import sys
import tokenize
from pathlib import Path
from typing import Any

__all__ = ["UsageError", "import_file", "read_source"]


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


def read_source(file: str) -> str:
    """The source code in ``file`` (``"-"``: stdin), decoded as CPython decodes a script:
    UTF-8 unless a PEP 263 coding line or a BOM says otherwise, universal newlines.

    stdin is read as bytes, never through its text layer: under a C/POSIX locale that
    layer turns invalid bytes into lone surrogates, which then failed inside the run.

    Raises:
        UsageError: The file cannot be read, or its bytes are not text in its encoding
            (the message names the first bad byte and its line).
    """
    name = "stdin" if file == "-" else file
    try:
        if file == "-":
            if sys.stdin is None:
                raise UsageError("cannot read stdin: there is no standard input")
            buffer = getattr(sys.stdin, "buffer", None)
            if buffer is None:  # a text-only stand-in (an embedding host's StringIO)
                return str(sys.stdin.read())
            data = buffer.read()
        else:
            data = Path(file).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc}") from exc
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        return importlib.util.decode_source(data)
    except UnicodeDecodeError as exc:
        raise _not_text(name, data, exc, encoding) from exc
    except (SyntaxError, LookupError) as exc:  # a bad coding line, or bad bytes before it
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise _not_text(name, data, bad, "utf-8") from exc
        raise UsageError(f"cannot read {name}: {exc}") from exc


def _not_text(name: str, data: bytes, exc: UnicodeDecodeError, encoding: str) -> UsageError:
    line = data.count(b"\n", 0, exc.start) + 1
    return UsageError(
        f"cannot read {name}: it is not valid {encoding} text (byte 0x{data[exc.start]:02x} "
        f"on line {line}); save the code as UTF-8"
    )

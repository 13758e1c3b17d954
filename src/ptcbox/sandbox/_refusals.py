"""One-line explanations a model can act on, for what the sandbox refuses.

A missing builtin stays the ``NameError`` CPython raises (``except NameError`` and
``callable``-style probes behave as in plain Python); the error text the model reads gets
one more line saying why the name is missing and what to do instead. Compile-time
refusals of ``eval``/``exec``/``__import__`` get the same kind of line.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BUILTIN_HINTS", "builtin_hint", "explain_compile_error"]

_NO_FILES = "files are not accessible; get data through the tools (io.StringIO for text)"
_NO_CODE = "running strings as code is not possible; write the code in the snippet itself"

BUILTIN_HINTS: Final[dict[str, str]] = {
    "open": f"open() is not available in the sandbox: {_NO_FILES}",
    "input": "input() is not available in the sandbox: there is no stdin; get data through "
    "the tools",
    "eval": f"eval() is not available in the sandbox: {_NO_CODE}",
    "exec": f"exec() is not available in the sandbox: {_NO_CODE}",
    "compile": f"compile() is not available in the sandbox: {_NO_CODE}",
    "breakpoint": "breakpoint() is not available in the sandbox: there is no debugger; print "
    "what you need to see",
    "help": "help() is not available in the sandbox: it is interactive; the tools' "
    "docstrings are in their descriptions",
    "memoryview": "memoryview() is not available in the sandbox: no raw buffer access; use "
    "bytes / bytearray slices",
    "copyright": "copyright is not available in the sandbox (an interactive helper)",
    "credits": "credits is not available in the sandbox (an interactive helper)",
    "license": "license is not available in the sandbox (an interactive helper)",
}
"""Builtin name -> the line added to a ``NameError`` for it."""

_COMPILE_HINTS: Final[dict[str, str]] = {
    "Eval calls are not allowed.": BUILTIN_HINTS["eval"],
    "Exec calls are not allowed.": BUILTIN_HINTS["exec"],
    '"__import__" is a reserved name and cannot be used': "__import__() is not available in "
    "the sandbox: use an import statement (import json); allowed modules are listed in the "
    "ImportError of any other",
}


def builtin_hint(exc: BaseException) -> str | None:
    """The explanation for a ``NameError`` of a builtin the sandbox leaves out, else None."""
    if type(exc) is not NameError:
        return None
    name = exc.name
    return BUILTIN_HINTS.get(name) if type(name) is str else None


def explain_compile_error(error: str) -> str:
    """``error`` (one refusal line, ``"Line 1: ..."``) with its explanation, if any."""
    for key, hint in _COMPILE_HINTS.items():
        if error.endswith(key):
            return f"{error.rstrip('.')}: {hint}"
    return error

"""Script exit semantics: what ``sys.exit(code)`` / ``exit()`` / ``raise SystemExit`` mean.

As for ``python script.py``: a code of ``None`` or ``0`` is a success (the output so far
is kept), another integer is a failure with that exit status, and any other object is a
failure whose ``str()`` goes to stderr (CPython prints it and exits with status 1). Both
runtimes (and the worker process) apply it, sessions included: the session lives on.
"""

from __future__ import annotations

__all__ = ["exit_note", "exit_status"]


def exit_status(exc: SystemExit) -> tuple[int, str | None]:
    """The exit status of ``exc`` and the text CPython would print to stderr for it.

    Runs the snippet's ``__str__`` for a non-integer code: call it within the time limit.

    Returns:
        ``(status, stderr_text)``: status ``0`` is a success; ``stderr_text`` is ``None``
        or a line ending in a newline.
    """
    code = exc.code
    if code is None:
        return 0, None
    if isinstance(code, int):
        return int.__index__(code), None
    try:
        text = str(code)
    except Exception:
        text = "<the exit message could not be read>"
    return 1, text + "\n"


def exit_note(status: int) -> str:
    """The line added to the error text of a failed exit, e.g. for ``sys.exit(2)``."""
    return f"the code exited with status {status} (sys.exit / SystemExit with a non-zero code)"

"""The note a ``NameError`` for a missing tool gets: the closest tool names.

Model code often calls a tool by a name that does not exist (``get_forecast`` where the
tool is ``get_weather``). The error keeps CPython's words (``name 'get_forecast' is not
defined``) and gets a PEP 678 note listing the closest tools (``difflib``), which the
error text of :class:`~ptcbox.CodeResult` shows. Both runtimes and the pre-flight check
(:mod:`~ptcbox.runtimes._shared._preflight`) use it; the worker process too.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection

__all__ = ["add_name_hint", "name_hint"]

_MAX_LISTED = 10


def name_hint(name: str, tools: Collection[str]) -> str | None:
    """The note for ``NameError`` of ``name``, or ``None`` when there are no tools.

    Args:
        name: The undefined name.
        tools: The tool names of the execution.

    Returns:
        E.g. ``"no tool is named 'get_forecast'; did you mean: get_weather?"``.
    """
    if not tools:
        return None
    close = difflib.get_close_matches(name, list(tools), n=3, cutoff=0.6)
    if close:
        return f"no tool is named {name!r}; did you mean: {', '.join(close)}?"
    listed = sorted(tools)
    more = f", ... ({len(listed)} in all)" if len(listed) > _MAX_LISTED else ""
    return f"no tool is named {name!r}; the tools are: {', '.join(listed[:_MAX_LISTED])}{more}"


def add_name_hint(exc: BaseException, tools: Collection[str]) -> None:
    """Add :func:`name_hint`'s note to an uncaught ``NameError`` (not its subclasses)."""
    if type(exc) is not NameError:
        return
    name = exc.name
    if not isinstance(name, str) or name in tools:
        return
    note = name_hint(name, tools)
    notes = getattr(exc, "__notes__", None)
    if note is not None and (notes is None or note not in notes):
        exc.add_note(note)

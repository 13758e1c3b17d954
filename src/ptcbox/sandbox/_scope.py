"""``dir()`` without an argument: the snippet's own names, not the sandbox's.

CPython's ``dir()`` lists the names of the calling scope. A restricted snippet's module
namespace also holds what the sandbox binds for its compiled code (``_alive_``, the
snippet mark ``_ptc_sandbox_``), and the restricted compile adds temporaries of its own
(``_exc_star_`` in an ``except*`` clause). A snippet can neither bind nor read a name
that starts with one underscore (the restricted compile refuses such names), so every
such name is the sandbox's: :func:`snippet_dir` leaves them out, and shows what CPython
shows otherwise (``__builtins__``, ``__name__``, the snippet's names, tools and
``extra_globals``). ``dir(obj)`` leaves out the sandbox's marks (``_ptc_...``).
"""

from __future__ import annotations

import builtins
import sys
from typing import Any

__all__ = ["snippet_dir", "visible_name"]

_MARK = "_ptc_"


def visible_name(name: object) -> bool:
    """Whether a snippet could bind ``name`` itself (or CPython puts it there: dunders)."""
    if type(name) is not str or name[:1] != "_":
        return True
    return name[:2] == "__" and name[-2:] == "__" and len(name) > 4


def snippet_dir(*args: Any) -> list[str]:
    """dir([object]) -> list of strings, as CPython's ``dir``.

    Without an argument, the sorted names of the calling scope (module, function or
    class body) without the sandbox's own (see the module docstring); with one, the
    builtin ``dir(object)`` without the attributes the sandbox marks the snippet's own
    classes with (``_ptc_owned_``; a snippet cannot set an attribute named ``_...``).

    Raises:
        TypeError: More than one argument (CPython's message).
    """
    if args:  # the sandbox's marks on the snippet's classes (``_ptc_owned_``) left out
        return [name for name in builtins.dir(*args) if name[:5] != _MARK]
    frame = sys._getframe(1)
    try:
        return sorted(name for name in frame.f_locals if visible_name(name))
    finally:
        del frame


snippet_dir.__name__ = snippet_dir.__qualname__ = "dir"

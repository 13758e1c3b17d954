"""``dir()``, ``globals()``, ``locals()`` and ``vars()`` of a snippet: its names, not the
sandbox's.

CPython's versions read the calling scope. A restricted snippet's module namespace also
holds what the sandbox binds for its compiled code (``__builtins__`` with the guards,
``_alive_``, the snippet mark ``_ptc_sandbox_``), and the restricted compile adds
temporaries of its own (``_exc_star_`` in an ``except*`` clause). A snippet can neither
bind nor read a name that starts with one underscore (the restricted compile refuses
such names), so every such name is the sandbox's and is left out, as is
``__builtins__``:

* ``dir()`` lists the other names of the calling scope, as CPython does (names only:
  ``__builtins__`` too);
* ``globals()`` (and ``locals()`` / ``vars()`` at module level or in a class body) is a
  live, read-only :class:`NamespaceView` of the snippet's names: ``'x' in globals()``,
  ``globals().get('x')``, ``globals()['f']`` and iteration work; a write raises a
  ``TypeError`` saying to assign the name itself. Unlike CPython's, it has no
  ``__builtins__`` (``'__builtins__' in globals()`` is False, ``globals()['__builtins__']``
  a ``KeyError`` with a note saying to call builtins by name): the sandbox's builtins
  dict holds the guards its compiled code calls, which snippet code must not reach, and
  handing out a filtered copy would buy nothing models need (what they do with
  ``globals()`` is look their own names up);
* ``locals()`` / ``vars()`` in a function is a new dict of its local names, as in CPython
  (where writing to it does not change the variables either).

Only snippet code may call them: the calling frame must run in a sandbox namespace (the
snippet mark), never host code the snippet handed one of them to (``loop.call_soon(
globals)`` would otherwise read the globals of asyncio's own module).
"""

from __future__ import annotations

import builtins
import inspect
import reprlib
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._owner import SANDBOX_MARK, SANDBOX_MARK_NAME

__all__ = [
    "NamespaceView",
    "frame_locals",
    "snippet_dir",
    "snippet_frame",
    "snippet_globals",
    "snippet_locals",
    "visible_name",
]

_MARK = "_ptc_"
_READ_ONLY = (
    "globals() and locals() are read-only in the sandbox: assign the name itself "
    "(x = 1; in a function, after 'global x'), or keep your values in a dict of your own"
)


_NO_BUILTINS = (
    "the sandbox does not expose its builtins namespace (CPython's globals() has it): "
    "call builtins by name (len, print, getattr ...); 'import builtins' is not allowed"
)


def visible_name(name: object) -> bool:
    """Whether a snippet could bind ``name`` itself (or CPython puts it there: dunders)."""
    if type(name) is not str or name[:1] != "_":
        return True
    return name[:2] == "__" and name[-2:] == "__" and len(name) > 4


def _shown(name: object) -> bool:
    # exactly a str: a key of another type (a str subclass whose __ne__ says True, an
    # object with the hash of '_alive_' whose __eq__ says True) would pass the name
    # checks and then match the hidden entry in the dict lookup
    return type(name) is str and visible_name(name) and name != "__builtins__"


class NamespaceView(Mapping[str, Any]):
    """A snippet's module (or class body) namespace as ``globals()`` returns it: live,
    read-only, without the sandbox's names (see the module docstring).

    Args:
        namespace: The namespace dict.
    """

    __slots__ = ("_namespace",)

    def __init__(self, namespace: dict[str, Any]) -> None:
        self._namespace = namespace

    def __getitem__(self, key: str) -> Any:
        if _shown(key):
            return self._namespace[key]
        error = KeyError(key)
        if key == "__builtins__" and type(key) is str:
            error.add_note(_NO_BUILTINS)
        raise error

    def __iter__(self) -> Iterator[str]:
        return iter([key for key in self._namespace if _shown(key)])

    def __len__(self) -> int:
        return sum(1 for key in self._namespace if _shown(key))

    def __contains__(self, key: object) -> bool:
        return _shown(key) and key in self._namespace

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def copy(self) -> dict[str, Any]:
        """A dict of the names and their values now."""
        return dict(self.items())

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(_READ_ONLY)

    __setitem__ = __delitem__ = update = pop = popitem = setdefault = clear = _refuse
    __ior__ = _refuse


def snippet_frame(what: str) -> types.FrameType:
    """The frame that called ``what`` (two levels up); refused unless it is snippet code."""
    frame = sys._getframe(2)
    if frame.f_globals.get(SANDBOX_MARK_NAME) is not SANDBOX_MARK:
        raise PolicyViolation(f"{what} can be called only from the snippet's own code")
    return frame


def frame_locals(frame: types.FrameType) -> Mapping[str, Any]:
    """``locals()`` of ``frame``: a view at module level and in a class body, a new dict
    in a function."""
    if frame.f_code.co_flags & inspect.CO_OPTIMIZED:
        return {key: value for key, value in frame.f_locals.items() if _shown(key)}
    return NamespaceView(frame.f_locals)


def snippet_dir(*args: Any) -> list[str]:
    """dir([object]) -> list of strings, as CPython's ``dir``.

    Without an argument, the sorted names of the calling scope (module, function or
    class body) without the sandbox's own (see the module docstring); with one, the
    builtin ``dir(object)`` without the attributes the sandbox marks the snippet's own
    classes with (``_ptc_owned_``; a snippet cannot set an attribute named ``_...``).

    Raises:
        TypeError: More than one argument (CPython's message).
        PolicyViolation: Called without an argument by host code.
    """
    if args:
        return [name for name in builtins.dir(*args) if name[:5] != _MARK]
    frame = snippet_frame("dir()")
    try:
        return sorted(name for name in frame.f_locals if visible_name(name))
    finally:
        del frame


def snippet_globals() -> NamespaceView:
    """globals() -- the snippet's module namespace, read-only (see the module docstring).

    Raises:
        PolicyViolation: Called by host code.
    """
    frame = snippet_frame("globals()")
    try:
        return NamespaceView(frame.f_globals)
    finally:
        del frame


def snippet_locals() -> Mapping[str, Any]:
    """locals() -- the calling scope's names (see the module docstring).

    Raises:
        PolicyViolation: Called by host code.
    """
    frame = snippet_frame("locals()")
    try:
        return frame_locals(frame)
    finally:
        del frame


snippet_dir.__name__ = snippet_dir.__qualname__ = "dir"
snippet_globals.__name__ = snippet_globals.__qualname__ = "globals"
snippet_locals.__name__ = snippet_locals.__qualname__ = "locals"

"""Which objects belong to the snippet (and may therefore be changed by it)."""

from __future__ import annotations

import types
import weakref
from typing import Any, Final

from ptcbox.errors import PolicyViolation

__all__ = [
    "SANDBOX_MARK",
    "SANDBOX_MARK_NAME",
    "describe",
    "is_owned",
    "private_ok",
    "register_class",
    "require_owned",
]


class _Mark:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<ptcbox sandbox>"


SANDBOX_MARK: Final = _Mark()
SANDBOX_MARK_NAME: Final = "_ptc_sandbox_"
"""Global set in every sandboxed namespace; a function whose ``__globals__`` carries it was
defined by a snippet."""

_SNIPPET_CLASSES: weakref.WeakSet[type] = weakref.WeakSet()
_PRIVATE_OK: weakref.WeakSet[type] = weakref.WeakSet()
_FunctionType = types.FunctionType


def register_class(cls: type) -> None:
    """Record ``cls`` as created by a snippet (its class statement ran in the sandbox)."""
    _SNIPPET_CLASSES.add(cls)


def is_owned(obj: Any) -> bool:
    """True for the snippet's own functions, classes and instances of its classes."""
    tp = type(obj)
    if tp in _SNIPPET_CLASSES:
        return True
    if tp is _FunctionType:
        return obj.__globals__.get(SANDBOX_MARK_NAME) is SANDBOX_MARK
    return isinstance(obj, type) and obj in _SNIPPET_CLASSES


def private_ok(obj: Any) -> bool:
    """True when ``obj``'s private (``_x``) attributes are all the snippet's own.

    That holds for snippet functions, and for snippet classes and their instances when
    every class of the MRO was written by the snippet or is a builtin type (which has no
    private attributes). A snippet subclass of, say, ``asyncio.Queue`` fails: its private
    attributes include the host's event loop.
    """
    if type(obj) is _FunctionType:
        return obj.__globals__.get(SANDBOX_MARK_NAME) is SANDBOX_MARK
    cls = obj if isinstance(obj, type) else type(obj)
    if cls in _PRIVATE_OK:
        return True
    if cls not in _SNIPPET_CLASSES:
        return False
    for base in cls.__mro__:
        if base not in _SNIPPET_CLASSES and base.__module__ != "builtins":
            return False
    _PRIVATE_OK.add(cls)
    return True


def describe(obj: Any) -> str:
    """A short, safe description of ``obj`` for error messages (never calls its repr)."""
    if isinstance(obj, type):
        return f"class {obj.__qualname__!r}"
    tp = type(obj)
    name = getattr(tp, "_ptc_module_name", None)
    if isinstance(name, str):
        return f"module {name!r}"
    return f"{tp.__qualname__!r} object"


def require_owned(obj: Any, what: str) -> None:
    """Raise unless ``obj`` belongs to the snippet.

    Raises:
        PolicyViolation: ``obj`` is shared with the host or other executions.
    """
    if not is_owned(obj):
        raise PolicyViolation(
            f"{what} cannot change {describe(obj)}: only functions, classes and objects "
            "created by the snippet can be modified"
        )

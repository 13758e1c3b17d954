"""Which objects belong to the snippet (and may therefore be changed by it)."""

from __future__ import annotations

import types
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

OWNED_ATTR: Final = "_ptc_owned_"
PRIVATE_ATTR: Final = "_ptc_private_ok_"
_NOT_PRIVATE_OK: Final = object()
_FunctionType = types.FunctionType
# Marks live on the classes themselves (``_x_`` names, which snippets can neither read nor
# write): a type-attribute lookup is cached by the interpreter, far cheaper than a WeakSet
# membership test, and the mark dies with the class.


def register_class(cls: Any) -> None:
    """Record ``cls`` as created by a snippet (its class statement ran in the sandbox)."""
    if isinstance(cls, type):
        type.__setattr__(cls, OWNED_ATTR, SANDBOX_MARK)


def is_owned(obj: Any) -> bool:
    """True for the snippet's own functions, classes and instances of its classes."""
    tp = type(obj)
    if getattr(tp, OWNED_ATTR, None) is SANDBOX_MARK:
        return True  # an instance of a snippet class (subclasses of one are the snippet's)
    if tp is _FunctionType:
        return obj.__globals__.get(SANDBOX_MARK_NAME) is SANDBOX_MARK
    return isinstance(obj, type) and getattr(obj, OWNED_ATTR, None) is SANDBOX_MARK


def _own_mark(cls: type) -> bool:
    return cls.__dict__.get(OWNED_ATTR) is SANDBOX_MARK


def private_ok_class(cls: type) -> bool:
    """True when every class in ``cls``'s MRO is the snippet's or a builtin type."""
    cached = getattr(cls, PRIVATE_ATTR, None)
    if cached is cls:  # set on cls itself (an inherited value names the parent)
        return True
    if not _own_mark(cls):
        return False
    if cached is not None and cls.__dict__.get(PRIVATE_ATTR) is _NOT_PRIVATE_OK:
        return False
    ok = all(_own_mark(base) or base.__module__ == "builtins" for base in cls.__mro__)
    type.__setattr__(cls, PRIVATE_ATTR, cls if ok else _NOT_PRIVATE_OK)
    return ok


def private_ok(obj: Any) -> bool:
    """True when ``obj``'s private (``_x``) attributes are all the snippet's own.

    That holds for snippet functions, and for snippet classes and their instances when
    every class of the MRO was written by the snippet or is a builtin type (which has no
    private attributes). A snippet subclass of, say, ``asyncio.Queue`` fails: its private
    attributes include the host's event loop.
    """
    tp = type(obj)
    if getattr(tp, PRIVATE_ATTR, None) is tp:
        return True
    if tp is _FunctionType:
        return obj.__globals__.get(SANDBOX_MARK_NAME) is SANDBOX_MARK
    return private_ok_class(obj if isinstance(obj, type) else tp)


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

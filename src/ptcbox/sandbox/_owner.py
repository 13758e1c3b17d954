"""Which objects belong to the snippet (and may therefore be changed by it)."""

from __future__ import annotations

import builtins
import types
from typing import Any, Final

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._ablation import off

__all__ = [
    "PLAIN_BASES",
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
# Marks live in the classes' own ``__dict__`` (``_x_`` names, which snippets can neither
# read nor write) and are always read from there, never with an attribute lookup: a
# lookup runs descriptors and metaclass hooks, so a class whose dict held a descriptor
# under a mark's name could answer whatever it liked (F2). A class's ``__dict__`` cannot
# be redirected: only a metaclass could, and snippets get no metaclasses.

PLAIN_BASES: set[type] = {v for v in vars(builtins).values() if isinstance(v, type)}
"""Classes a snippet class may inherit from and keep private-attribute access: the builtin
types (by identity; a class *named* like one, or with ``__module__ = "builtins"``, does not
count) and the sandbox's own size-checked stand-ins for them (added by ``_builtins``)."""


def register_class(cls: Any) -> None:
    """Record ``cls`` as created by a snippet (its class statement ran in the sandbox)."""
    if isinstance(cls, type):
        type.__setattr__(cls, OWNED_ATTR, SANDBOX_MARK)
        if PRIVATE_ATTR in cls.__dict__:  # a stale copy (dataclass(slots=True) copies dicts)
            type.__delattr__(cls, PRIVATE_ATTR)


def is_owned(obj: Any) -> bool:
    """True for the snippet's own functions, classes and instances of its classes."""
    tp = type(obj)
    if tp.__dict__.get(OWNED_ATTR) is SANDBOX_MARK:
        return True  # an instance of a snippet class (each snippet class carries the mark)
    if tp is _FunctionType:
        return obj.__globals__.get(SANDBOX_MARK_NAME) is SANDBOX_MARK
    return issubclass(tp, type) and obj.__dict__.get(OWNED_ATTR) is SANDBOX_MARK


def private_ok_class(cls: type) -> bool:
    """True when every class in ``cls``'s MRO is the snippet's or a builtin type."""
    own = cls.__dict__
    cached = own.get(PRIVATE_ATTR)
    if cached is cls:
        return True
    if cached is _NOT_PRIVATE_OK or own.get(OWNED_ATTR) is not SANDBOX_MARK:
        return False
    ok = all(
        base.__dict__.get(OWNED_ATTR) is SANDBOX_MARK or base in PLAIN_BASES for base in cls.__mro__
    )
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
    if tp.__dict__.get(PRIVATE_ATTR) is tp:
        return True
    if tp is _FunctionType:
        return obj.__globals__.get(SANDBOX_MARK_NAME) is SANDBOX_MARK
    return private_ok_class(obj if issubclass(tp, type) else tp)


def describe(obj: Any) -> str:
    """A short, safe description of ``obj`` for error messages (never calls its repr)."""
    if isinstance(obj, type):
        return f"class {type.__dict__['__qualname__'].__get__(obj)!r}"
    tp = type(obj)
    name = tp.__dict__.get("_ptc_module_name")
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


def _always(obj: Any) -> bool:
    return True


if off("owner"):  # test-only ablation (see _ablation): every object counts as the snippet's
    globals().update(is_owned=_always, private_ok_class=_always, private_ok=_always)

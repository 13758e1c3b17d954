"""Classes whose constructor the sandbox checks, and the sandbox's ``type``.

A :class:`SizedConstructor` stands in for a class whose constructor can do in one C
call what the sandbox must refuse: build a huge object (``bytes(10**10)``), or view raw
memory (``numpy.ndarray(shape, dtype, buffer=..., offset=-4096)`` reads and writes
outside its buffer; with ``dtype=object`` it turns any address into an object). Every
route to the real class answers the stand-in: the builtins and module views hand it out,
``type(obj)`` of an instance returns it, a snippet class statement derives from a checked
subclass, and ``Cls.__mro__`` of a snippet class lists the stand-in (see
:func:`public_mro`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._owner import PLAIN_BASES, is_owned

__all__ = [
    "CHECKED_SUBCLASSES",
    "SizedCheck",
    "SizedConstructor",
    "checked_class",
    "make_safe_type",
    "public_mro",
]

_CLASS_NAMES = frozenset({"__name__", "__qualname__", "__module__"})

SizedCheck = Callable[
    [str, tuple[Any, ...], dict[str, Any]], tuple[tuple[Any, ...], dict[str, Any]]
]

CHECKED_CLASSES: dict[type, Any] = {}
"""Real class -> its stand-in, for classes outside the builtins (filled by module views
such as numpy's; read by ``type(obj)``)."""

CHECKED_SUBCLASSES: dict[type, tuple[SizedCheck, Callable[..., Any]]] = {}
"""Real base -> (check, stand-in factory) for library subclasses met later (``type(obj)`` of a numpy
``recarray`` or ``MaskedArray`` answers a checked stand-in made on first use)."""


def checked_class(tp: type) -> Any:
    """The stand-in ``type(obj)`` answers for an instance of ``tp``, or ``None``."""
    found = CHECKED_CLASSES.get(tp)
    if found is not None or not CHECKED_SUBCLASSES:
        return found
    if is_owned(tp):
        return None  # the snippet's own subclass: its base's constructor is checked
    for base, (check, factory) in CHECKED_SUBCLASSES.items():
        if issubclass(tp, base):
            found = CHECKED_CLASSES[tp] = factory(tp, tp.__name__, check, None)
            return found
    return None


def public_mro(mro: tuple[type, ...]) -> tuple[Any, ...]:
    """``Cls.__mro__`` as the snippet sees it: a checked base is its stand-in, and the
    real class behind it is not listed (``(B, bytes, object)`` for ``class B(bytes)``)."""
    out: list[Any] = []
    hidden: type | None = None
    for klass in mro:
        if klass is hidden:
            continue
        stand_in = klass.__dict__.get("_ptc_stand_in")
        if stand_in is not None:
            out.append(stand_in)
            hidden = stand_in._real
            continue
        out.append(klass)
    return tuple(out)


class _TypeMeta(type):
    """Metaclass of the sandbox's ``type``: behaves like ``type`` in ``isinstance`` and
    ``issubclass``; calling it with one argument returns the object's type, with three it
    is refused."""

    _ptc_sized: dict[type, Any]

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, type)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, type)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) != 1 or kwargs:
            raise PolicyViolation(
                "type() with 3 arguments is not available in the sandbox; use a class "
                "statement (type(obj) with one argument works)"
            )
        tp = type(args[0])
        if tp is type or tp is SizedConstructor:  # type(bytes) is type, as outside
            return cls
        sized = cls._ptc_sized.get(tp) or checked_class(tp)
        if sized is not None:
            return sized
        if issubclass(tp, type):
            raise PolicyViolation(
                f"type() of a class whose metaclass is {tp.__name__!r} is not available in "
                "the sandbox (metaclasses can build classes from arbitrary names)"
            )
        return tp


def make_safe_type(sized: dict[type, Any]) -> type:
    return _TypeMeta(
        "type",
        (),
        {
            "__slots__": (),
            "__module__": "builtins",
            "__doc__": "type(object) -> the object's type (sandboxed: one argument only)",
            "_ptc_sized": sized,
        },
    )


def _sized_base(real: type, kind: str, check: SizedCheck) -> type:
    """The class a snippet's ``class B(bytes)`` really derives from: the real class with its
    size argument checked (``B(10**10)`` would otherwise allocate in one C call)."""
    ns: dict[str, Any] = {
        "__slots__": (),
        "__module__": real.__module__,
        "__qualname__": kind,
        "__doc__": real.__doc__,
    }
    if real is bytearray:  # allocates in __init__

        def __init__(self: bytearray, *args: Any, **kwargs: Any) -> None:  # noqa: N807
            args, kwargs = check(kind, args, kwargs)
            bytearray.__init__(self, *args, **kwargs)

        ns["__init__"] = __init__
    else:

        def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:  # noqa: N807
            args, kwargs = check(kind, args, kwargs)
            return real.__new__(cls, *args, **kwargs)

        ns["__new__"] = __new__
    cls = type(kind, (real,), ns)
    if real.__module__ == "builtins" and real in PLAIN_BASES:
        PLAIN_BASES.add(cls)  # no private attributes: snippet subclasses keep theirs
    return cls


class SizedConstructor:
    """A class whose constructor can build a huge object in one call (``bytes(n)``,
    ``Fraction("1e999999999")``), with its arguments checked; otherwise the real class.

    ``isinstance``/``issubclass``/``==`` work as with the real class; a snippet class
    statement subclassing it derives from a checked subclass of the real class;
    ``type(obj)`` of an instance answers this object (see ``_TypeMeta``).

    Args:
        real: The real class.
        kind: Its name, for messages.
        check: ``check(kind, args, kwargs)`` raises or returns the normalised arguments.
        public: Attribute names handed out from the real class (``None``: every public
            name).
    """

    __slots__ = ("_base", "_check", "_kind", "_public", "_real")

    def __init__(
        self,
        real: type,
        kind: str,
        check: SizedCheck,
        public: frozenset[str] | None = frozenset({"fromhex", "maketrans"}),
    ) -> None:
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_check", check)
        object.__setattr__(self, "_public", public)
        base = _sized_base(real, kind, check)
        type.__setattr__(base, "_ptc_stand_in", self)
        object.__setattr__(self, "_base", base)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = self._check(self._kind, args, kwargs)
        return self._real(*args, **kwargs)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self._real)

    def __subclasscheck__(self, sub: Any) -> bool:
        return issubclass(sub, self._real)

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (self._base,)

    def __eq__(self, other: object) -> bool:
        return other is self or other is self._real

    def __hash__(self) -> int:
        return hash(self._real)

    def __repr__(self) -> str:
        return repr(self._real)

    def __getattr__(self, name: str) -> Any:
        public = self._public
        if name in _CLASS_NAMES:  # type(b"").__name__ == "bytes", as for the real class
            return getattr(self._real, name)
        if (name in public) if public is not None else not name.startswith("_"):
            return getattr(self._real, name)
        raise AttributeError(f"type object {self._kind!r} has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise PolicyViolation(f"cannot modify the builtin {self._kind!r}")

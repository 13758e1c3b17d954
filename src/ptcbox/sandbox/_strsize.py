"""Size checks for methods that can build a huge result in one C call.

``s.ljust(n)``, ``s.center(n)``, ``s.zfill(n)``, ``s.expandtabs(n)``, ``s.replace(a, b)``,
``sep.join(items)``, ``s.translate(table)``, ``n.to_bytes(length)``, ``shake.digest(n)``,
``pattern.sub(repl, s)`` and ``match.expand(template)``: the guarded ``getattr`` hands out a
wrapper that estimates the result size (with the builtin types' own ``len``/``count``,
which subclasses cannot fake), checks it against ``max_repeat_bytes``, and calls the real
method with the normalised arguments.

Which methods are wrapped depends on the *value* read, not on the object it was read from
(F6): the real C method, bound (``s.ljust``, ``super(S, s).ljust``) or unbound (``str.ljust``,
``S.ljust`` for a subclass ``S``), is recognised by identity; a snippet's own method of the
same name is not a C method and is handed out as is.
"""

from __future__ import annotations

import contextlib
import hashlib
import operator
import re
from array import array
from collections import deque
from collections.abc import Callable
from itertools import islice
from typing import TYPE_CHECKING, Any, Final

from ptcbox.sandbox._regexsize import estimate_expand, estimate_sub

if TYPE_CHECKING:
    from ptcbox.sandbox._limits import Limits

__all__ = [
    "SEQ_LEN",
    "as_index",
    "is_size_guarded",
    "real_len",
    "size_checked_method",
]

SEQ_LEN: Final[tuple[tuple[type, Callable[[Any], int], int], ...]] = (
    (str, str.__len__, 1),
    (bytes, bytes.__len__, 1),
    (bytearray, bytearray.__len__, 1),
    (list, list.__len__, 8),
    (tuple, tuple.__len__, 8),
    (deque, deque.__len__, 8),
    (array, array.__len__, 8),
)
"""Builtin sequence type, its real ``len``, and bytes per item (8 for object slots)."""

_TEXT = (str, bytes, bytearray)
_PADDING = ("ljust", "rjust", "center", "zfill")


def _xof_types() -> tuple[type, ...]:
    kinds: set[type] = {type(hashlib.shake_128()), type(hashlib.shake_256())}
    for name in ("shake_128", "shake_256"):
        with contextlib.suppress(ValueError):  # a build without this algorithm
            kinds.add(type(hashlib.new(name)))
    return tuple(kinds)


GUARDED_KINDS: Final[dict[str, tuple[type, ...]]] = {
    **{name: _TEXT for name in (*_PADDING, "expandtabs", "replace", "join", "translate")},
    "to_bytes": (int,),
    "digest": _xof_types(),
    "hexdigest": _xof_types(),
    "sub": (re.Pattern,),
    "subn": (re.Pattern,),
    "expand": (re.Match,),
}
"""Method name -> the C types whose method of that name is size-checked."""

_UNBOUND: Final[dict[Any, tuple[type, str]]] = {
    kind.__dict__[name]: (kind, name)
    for name, kinds in GUARDED_KINDS.items()
    for kind in kinds
    if name in kind.__dict__
}
"""The real unbound C methods (``str.ljust`` ...), keyed by identity."""

_BOUND_TYPES: Final[tuple[type, type]] = (type([].append), type(re.compile("").sub))
_DESCRIPTOR_TYPES: Final = frozenset(type(d) for d in _UNBOUND)


def _guarded_bound(value: Any) -> tuple[Any, str] | None:
    """``(self, name)`` when ``value`` is a bound size-checked C method, else ``None``."""
    tv = type(value)
    if tv is not _BOUND_TYPES[0] and tv is not _BOUND_TYPES[1]:
        return None
    name = value.__name__
    kinds = GUARDED_KINDS.get(name)
    owner = value.__self__
    if kinds is not None and isinstance(owner, kinds):
        return owner, name
    return None


def _guarded_unbound(value: Any) -> tuple[type, str] | None:
    """``(kind, name)`` when ``value`` is an unbound size-checked C method, else ``None``.

    The type test comes first: a dict lookup would call a snippet object's ``__eq__``
    with the stored C methods on a hash collision.
    """
    if type(value) in _DESCRIPTOR_TYPES:
        return _UNBOUND.get(value)
    return None


def is_size_guarded(value: Any) -> bool:
    """True when ``value`` is a size-checked C method, bound or unbound."""
    return _guarded_bound(value) is not None or _guarded_unbound(value) is not None


def as_index(value: Any) -> int | None:
    """The int a count/width argument stands for, read once; ``None`` if not int-like.

    Normalising matters: an ``int`` subclass or an object with ``__index__`` would
    otherwise slip past ``type(x) is int`` checks, and ``__index__`` could answer a small
    number to the check and a huge one to the real call.
    """
    if type(value) is int:
        return value
    if isinstance(value, int):
        return int.__index__(value)  # bool, int subclasses: the real value
    if hasattr(type(value), "__index__"):
        return operator.index(value)
    return None


def real_len(seq: Any) -> int | None:
    """``len`` of a builtin sequence (subclasses cannot fake it); ``None`` otherwise."""
    for kind, length, _ in SEQ_LEN:
        if isinstance(seq, kind):
            return length(seq)
    return None


def _text_len(value: Any) -> int:
    n = real_len(value)
    if n is None:
        raise TypeError  # not str/bytes: let the real method raise its own TypeError
    return n


def _count(obj: Any, sub: Any) -> int:
    kind = str if isinstance(obj, str) else bytes if isinstance(obj, bytes) else bytearray
    return kind.count(obj, sub)


def size_checked_method(limits: Limits, value: Any) -> Callable[..., Any] | None:
    """A size-checked stand-in for ``value`` when it is a guarded C method, else ``None``."""
    bound_to = _guarded_bound(value)
    if bound_to is not None:
        obj, name = bound_to
        method = value

        def bound(*args: Any, **kwargs: Any) -> Any:
            args, kwargs = _estimate(limits, obj, name, args, kwargs)
            return method(*args, **kwargs)

        bound.__name__ = name
        bound.__doc__ = method.__doc__
        return bound
    unbound_of = _guarded_unbound(value)
    if unbound_of is not None:
        kind, uname = unbound_of
        function = value

        def unbound(self_: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(self_, kind):
                args, kwargs = _estimate(limits, self_, uname, args, kwargs)
            return function(self_, *args, **kwargs)

        unbound.__name__ = uname
        unbound.__doc__ = function.__doc__
        return unbound
    return None


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], pos: int, key: str) -> Any:
    return args[pos] if len(args) > pos else kwargs.get(key)


def _set_arg(
    args: tuple[Any, ...], kwargs: dict[str, Any], pos: int, key: str, value: Any
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if len(args) > pos:
        return (*args[:pos], value, *args[pos + 1 :]), kwargs
    if key in kwargs:
        return args, {**kwargs, key: value}
    return args, kwargs


def _estimate(
    limits: Limits, obj: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Raise if ``obj.name(*args, **kwargs)`` would be too large; return normalised args."""
    if name in _PADDING:
        width = as_index(_arg(args, kwargs, 0, "width"))
        if width is not None:
            limits.repeat_bytes(f"{type(obj).__name__}.{name}", width)
            return _set_arg(args, kwargs, 0, "width", width)
    elif name == "expandtabs":
        raw = _arg(args, kwargs, 0, "tabsize")
        tabsize = 8 if raw is None else as_index(raw)
        if tabsize is not None and tabsize > 0:
            tab = "\t" if isinstance(obj, str) else b"\t"
            limits.repeat_bytes("expandtabs", _text_len(obj) + _count(obj, tab) * tabsize)
            if raw is not None:
                return _set_arg(args, kwargs, 0, "tabsize", tabsize)
    elif name == "replace" and len(args) >= 2:
        return _estimate_replace(limits, obj, args, kwargs)
    elif name == "join" and args:
        return _estimate_join(limits, obj, args), kwargs
    elif name == "translate" and args and isinstance(obj, str):
        table = args[0]
        if isinstance(table, dict) and table:
            values = dict.values(table)  # a dict subclass could answer values() with a lie
            longest = max((_text_len(v) for v in values if isinstance(v, str)), default=1)
            if longest > 1:
                limits.repeat_bytes("str.translate", _text_len(obj) * longest)
    elif name in ("to_bytes", "digest", "hexdigest"):
        raw = _arg(args, kwargs, 0, "length")
        length = as_index(raw) if raw is not None else None
        if length is not None:
            limits.repeat_bytes(name, length * (2 if name == "hexdigest" else 1))
            return _set_arg(args, kwargs, 0, "length", length)
    elif name in ("sub", "subn"):
        return estimate_sub(limits, obj, args, kwargs)
    elif name == "expand":
        estimate_expand(limits, obj, _arg(args, kwargs, 0, "template"))
    return args, kwargs


def _estimate_replace(
    limits: Limits, obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    old, new = args[0], args[1]
    if not (isinstance(old, _TEXT) and isinstance(new, _TEXT)):
        return args, kwargs
    raw_count = _arg(args, kwargs, 2, "count")
    count = -1 if raw_count is None else as_index(raw_count)
    grow = _text_len(new) - _text_len(old)
    if grow > 0:
        size = _text_len(obj)
        hits = _count(obj, old) if _text_len(old) else size + 1
        if count is not None and count >= 0:
            hits = min(hits, count)
        limits.repeat_bytes("replace", size + hits * grow)
    if raw_count is not None and count is not None:
        return _set_arg(args, kwargs, 2, "count", count)
    return args, kwargs


def _estimate_join(limits: Limits, sep: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    items = args[0]
    if type(items) is not list and type(items) is not tuple:
        cap = limits.max_repeat_bytes // 8 + 1
        items = list(islice(items, cap + 1))
        if len(items) > cap:
            limits.repeat_bytes("join", len(items) * 8)
    try:
        total = sum(map(_text_len, items)) + max(len(items) - 1, 0) * _text_len(sep)
    except TypeError:
        return (items, *args[1:])  # join itself raises the proper TypeError
    limits.repeat_bytes("join", total)
    return (items, *args[1:])

"""Size checks for str/bytes/int methods that can build a huge result in one C call.

``s.ljust(n)``, ``s.center(n)``, ``s.zfill(n)``, ``s.expandtabs(n)``, ``s.replace(a, b)``,
``sep.join(items)``, ``s.translate(table)`` and ``n.to_bytes(length)``: the guarded
``getattr`` hands out a wrapper that estimates the result size (with the builtin types'
own ``len``/``count``, which subclasses cannot fake), checks it against
``max_repeat_bytes``, and calls the real method with the normalised arguments.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Callable
from itertools import islice
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ptcbox.sandbox._limits import Limits

__all__ = ["SEQ_LEN", "as_index", "real_len", "size_checked_method"]

SEQ_LEN: Final[tuple[tuple[type, Callable[[Any], int], int], ...]] = (
    (str, str.__len__, 1),
    (bytes, bytes.__len__, 1),
    (bytearray, bytearray.__len__, 1),
    (list, list.__len__, 8),
    (tuple, tuple.__len__, 8),
    (deque, deque.__len__, 8),
)
"""Builtin sequence type, its real ``len``, and bytes per item (8 for object slots)."""

_TEXT = (str, bytes, bytearray)
_PADDING = ("ljust", "rjust", "center", "zfill")


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


def size_checked_method(limits: Limits, obj: Any, name: str) -> Callable[..., Any] | None:
    """A size-checked ``obj.name`` for str/bytes/int methods, else ``None``."""
    if isinstance(obj, _TEXT) or (isinstance(obj, int) and name == "to_bytes"):
        method = getattr(obj, name)

        def bound(*args: Any, **kwargs: Any) -> Any:
            args, kwargs = _estimate(limits, obj, name, args, kwargs)
            return method(*args, **kwargs)

        bound.__name__ = name
        bound.__doc__ = method.__doc__
        return bound
    if obj in _TEXT or (obj is int and name == "to_bytes"):
        function = getattr(obj, name)

        def unbound(self_: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(self_, (*_TEXT, int)):
                args, kwargs = _estimate(limits, self_, name, args, kwargs)
            return function(self_, *args, **kwargs)

        unbound.__name__ = name
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
            longest = max((_text_len(v) for v in table.values() if isinstance(v, str)), default=1)
            if longest > 1:
                limits.repeat_bytes("str.translate", _text_len(obj) * longest)
    elif name == "to_bytes":
        raw = _arg(args, kwargs, 0, "length")
        length = as_index(raw) if raw is not None else None
        if length is not None:
            limits.repeat_bytes("int.to_bytes", length)
            return _set_arg(args, kwargs, 0, "length", length)
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

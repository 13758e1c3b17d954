"""One walk that both sizes and copies a sync tool's result (ThreadRuntime's hot path).

A restricted execution gets a tool's result as a plain-data copy, refused when its JSON
would pass :data:`~ptcbox.runtimes._shared._value.MAX_TOOL_DATA_BYTES`
(:func:`~ptcbox.runtimes.thread._calls.plain_result`): the size walk
(:func:`~ptcbox.runtimes._shared._value.json_size_over`) and then the copy
(:func:`~ptcbox.runtimes._shared._codec.clone`) each walked the whole value, a third of a
data-returning snippet's time. :func:`sized_copy` does both in one walk for the values
tools usually return (str, int, float, bool, None and lists, tuples and str-keyed dicts
of them), counting exactly what the size walk counts; for anything else, or a value over
the limit, it returns :data:`UNHANDLED` and the caller takes the two-walk path, so the
copy and the refusal are the same as before, value for value and byte for byte.
"""

from __future__ import annotations

from typing import Any

from ptcbox._jsonable import scrub_text
from ptcbox.runtimes._shared._codec import TAG

__all__ = ["UNHANDLED", "sized_copy"]

UNHANDLED: Any = object()
"""What :func:`sized_copy` returns for a value it leaves to the two-walk path."""

_DEPTH = 15  # containers deeper than this: the two walks (clone's own limit is 16)
_INT_LIMIT = 1 << 63  # larger ints: clone writes huge ones as text; left to it
_AS_IS = frozenset({float, bool, type(None)})


def sized_copy(value: Any, limit: int) -> Any:
    """``clone(value)`` if ``json_size_over(value, limit)`` is ``0``, in one walk.

    Args:
        value: A tool's raw result.
        limit: The byte limit of its JSON.

    Returns:
        The copy, or :data:`UNHANDLED` (a type it leaves to the two walks, or over
        ``limit``).
    """
    size = [0]
    copy = _copy(value, 0, size, limit)
    if copy is UNHANDLED or size[0] > limit:
        return UNHANDLED
    return copy


def _copy(value: Any, depth: int, size: list[int], limit: int) -> Any:
    # size[0] grows by what json_size_over's _walk counts for the value: a str its
    # length + 2, a scalar 1, a list or tuple 2 * len + 1 and a dict 5 * len + 1 plus its
    # keys' lengths, each minus 1 per item (the items' own sizes are added by the items).
    kind = type(value)
    if kind is str:
        size[0] += len(value) + 2
        return scrub_text(value)  # the str itself when it is ASCII
    if kind is int:
        size[0] += 1
        return value if -_INT_LIMIT < value < _INT_LIMIT else UNHANDLED
    if kind in _AS_IS:
        size[0] += 1
        return value
    if depth >= _DEPTH or size[0] > limit:
        return UNHANDLED
    if kind is list or kind is tuple:
        size[0] += len(value) + 1
        items = []
        for item in value:
            copied = _copy(item, depth + 1, size, limit)
            if copied is UNHANDLED:
                return UNHANDLED
            items.append(copied)
        return items if kind is list else tuple(items)
    if kind is dict and TAG not in value:
        size[0] += 4 * len(value) + 1
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                return UNHANDLED
            size[0] += len(key)
            copied = _copy(item, depth + 1, size, limit)
            if copied is UNHANDLED:
                return UNHANDLED
            out[scrub_text(key)] = copied
        return out
    return UNHANDLED

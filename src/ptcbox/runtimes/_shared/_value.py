"""Size caps on data a snippet hands back: the trailing value, tool arguments and results.

One rule for both runtimes:

- ``CodeResult.value``: a value whose JSON encoding is over ``policy.max_output_bytes``
  is dropped (``value=None``, ``truncated=True``) and a note on stderr says so and why
  (:func:`capped_value`).
- One tool call's arguments, and one tool result, may be at most
  :data:`MAX_TOOL_DATA_BYTES` of JSON (SubprocessRuntime's frame cap; ThreadRuntime
  applies it too when tools get plain-data copies, i.e. under restricted policies). Over
  it, the call raises ``ValueError`` in the snippet (arguments) or ``ToolError``
  (result), naming the size and the limit.

Sizes are first bounded from below by :func:`json_size_over`, which stops as soon as the
bound passes the limit, so an oversized value costs at most ``O(limit)`` work and no
copy; only values under the bound are converted and encoded.
"""

from __future__ import annotations

import json
from typing import Any

from ptcbox._jsonable import JSONValue, to_jsonable

__all__ = [
    "MAX_TOOL_DATA_BYTES",
    "argument_size_error",
    "capped_value",
    "encode_json",
    "json_size_over",
    "result_size_error",
]

MAX_TOOL_DATA_BYTES = (16 << 20) - 4096
"""Largest JSON encoding of one tool call's arguments or of one tool result, in bytes
(SubprocessRuntime's 16 MiB frame, less room for the message around it)."""

_MAX_DEPTH = 64
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_SCALAR_TYPES = (int, float, bool, type(None))


def json_size_over(value: Any, limit: int) -> int:
    """A lower bound of the size of ``value``'s JSON encoding, if it is over ``limit``.

    Never calls code the snippet defined (builtin subclasses are read through the
    builtin type's methods), never copies ``value``, and stops walking as soon as the
    bound passes ``limit``.

    Args:
        value: Any value (raw, or already JSON-compatible data).
        limit: The byte limit.

    Returns:
        ``0`` when the bound is within ``limit`` (the value may still be larger: check
        its encoding), else a number of bytes over ``limit`` that the encoding is at
        least.
    """
    total = _walk(value, limit, 0)
    return total if total > limit else 0


def _walk(value: Any, budget: int, depth: int) -> int:
    kind = type(value)
    if kind is str:
        return str.__len__(value) + 2
    if kind in _SCALAR_TYPES:
        return 1
    if depth >= _MAX_DEPTH:
        return 1
    if isinstance(value, str):
        return str.__len__(value) + 2
    if isinstance(value, bytes | bytearray):
        return len(value) + 2
    if isinstance(value, list | tuple):
        if isinstance(value, list):
            size, items = list.__len__(value), list.__iter__(value)
        else:
            size, items = tuple.__len__(value), tuple.__iter__(value)
        total = 2 * size + 1
        if total > budget:
            return total
        for item in items:
            total += _walk(item, budget - total, depth + 1) - 1
            if total > budget:
                return total
        return total
    if isinstance(value, dict):
        total = 5 * dict.__len__(value) + 1
        if total > budget:
            return total
        for key, item in dict.items(value):
            if type(key) is str:
                total += str.__len__(key)
            total += _walk(item, budget - total, depth + 1) - 1
            if total > budget:
                return total
        return total
    if isinstance(value, set | frozenset):
        count = set.__len__(value) if isinstance(value, set) else frozenset.__len__(value)
        return 2 * count + 1
    if isinstance(value, range):
        return 2 * len(value) + 1 if len(value) <= 100_000 else 1
    return 1


def encode_json(data: JSONValue) -> bytes:
    """Encode JSON-compatible data as compact UTF-8 JSON with the standard library.

    Unlike orjson, the standard library checks every allocation: under ``RLIMIT_AS`` a
    failed one raises ``MemoryError`` instead of crashing the process. Its peak memory
    is about twice the encoded size (the text, then its UTF-8 bytes).

    Raises:
        MemoryError: When the process is out of memory.
        ValueError: On NaN or infinities (``to_jsonable`` never produces them).
    """
    text = _ENCODER.encode(data)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (to_jsonable already replaces them)
        return text.encode("utf-8", "replace")


def capped_value(value: Any, max_bytes: int) -> tuple[JSONValue, str | None]:
    """Convert a trailing value for ``CodeResult.value``, dropping it when too large.

    Args:
        value: The snippet's trailing expression value (not ``None``).
        max_bytes: ``policy.max_output_bytes``.

    Returns:
        ``(data, None)``, or ``(None, note)`` when the value's JSON encoding is over
        ``max_bytes``; the note is a stderr line for the model.
    """
    if json_size_over(value, max_bytes):
        return None, value_note(f"more than {max_bytes:,} bytes", max_bytes)
    data = to_jsonable(value)
    if isinstance(data, str | list | dict):
        size = len(encode_json(data))
        if size > max_bytes:
            return None, value_note(f"{size:,} bytes", max_bytes)
    return data, None


def value_note(amount: str, max_bytes: int) -> str:
    """The stderr note for a dropped trailing value whose JSON is ``amount`` long."""
    return (
        f"[value omitted: its JSON encoding is {amount}, over the {max_bytes:,}-byte "
        "limit (max_output_bytes); print or return a smaller part of it]\n"
    )


def argument_size_error(tool: str, size: int) -> ValueError:
    """The ``ValueError`` for a tool call whose arguments are too large."""
    return ValueError(
        f"the arguments of {tool}(...) are at least {size:,} bytes as JSON, over the "
        f"{MAX_TOOL_DATA_BYTES:,}-byte limit for one tool call; pass less data per call"
    )


def result_size_error(tool: str, size: int) -> ValueError:
    """The error (raised as the tool's failure) for a tool result that is too large."""
    return ValueError(
        f"the result of {tool}(...) is at least {size:,} bytes as JSON, over the "
        f"{MAX_TOOL_DATA_BYTES:,}-byte limit for one tool result; ask the tool for less"
    )

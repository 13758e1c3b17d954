"""Size-bounded summaries of tool-call arguments for the trace (both runtimes).

A :class:`~ptcbox.ToolCallRecord` stays in the :class:`~ptcbox.CodeResult` (and in the
host's memory) for as long as the caller keeps the result; a snippet may pass up to
16 MiB to each of up to ``max_tool_calls`` calls. The record in ``tool_calls`` therefore
holds a *summary* of the arguments, at most about :data:`MAX_RECORD_ARGUMENT_BYTES` of
JSON: arguments that fit are kept exactly; larger ones are cut: long strings keep their
head with a ``"…[+N chars]"`` note, long lists their first items and a
``"…[+N items]"`` note, dicts their first keys and a ``"…": "[+N keys]"`` entry, nesting
below a few levels becomes ``"…[list of N items]"``. The record passed to
``on_tool_call`` when the call ends carries the full arguments.
"""

from __future__ import annotations

from typing import Any

from ptcbox.runtimes._shared._value import json_size_over

__all__ = ["MAX_RECORD_ARGUMENT_BYTES", "summarize_arguments"]

MAX_RECORD_ARGUMENT_BYTES = 4096
"""About the most JSON one record's ``arguments`` hold in ``CodeResult.tool_calls``."""

_SCALARS = frozenset({int, float, bool, type(None)})
_STRING_CHARS = 200
_ITEMS = 8
_DEPTH = 3


def summarize_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` (JSON-compatible data) itself when small, else a bounded summary.

    Args:
        arguments: A record's JSON-compatible arguments.

    Returns:
        ``arguments`` when its JSON is at most :data:`MAX_RECORD_ARGUMENT_BYTES`, else
        a new dict of at most about that size.
    """
    small = 0
    for value in arguments.values():  # the usual case: a few scalars and short strings
        kind = type(value)
        if kind is str:
            small += len(value)
        elif kind not in _SCALARS:
            small = MAX_RECORD_ARGUMENT_BYTES
            break
    if small < MAX_RECORD_ARGUMENT_BYTES // 4 and len(arguments) < _ITEMS * 2:
        return arguments
    if not json_size_over(arguments, MAX_RECORD_ARGUMENT_BYTES):
        return arguments
    per_value = max(_STRING_CHARS, MAX_RECORD_ARGUMENT_BYTES // max(1, len(arguments)) // 2)
    out: dict[str, Any] = {}
    for index, (key, value) in enumerate(arguments.items()):
        if index >= _ITEMS * 2:
            out["…"] = f"[+{len(arguments) - index} arguments]"
            break
        out[key] = _summary(value, per_value, 0)
    return out


def _summary(value: Any, chars: int, depth: int) -> Any:
    if isinstance(value, str):
        if len(value) <= chars:
            return value
        return f"{value[:chars]}…[+{len(value) - chars} chars]"
    if isinstance(value, list):
        if depth >= _DEPTH:
            return f"…[list of {len(value)} items]"
        items = [_summary(item, chars // 4, depth + 1) for item in value[:_ITEMS]]
        if len(value) > _ITEMS:
            items.append(f"…[+{len(value) - _ITEMS} items]")
        return items
    if isinstance(value, dict):
        if depth >= _DEPTH:
            return f"…[dict of {len(value)} keys]"
        out: dict[str, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if index >= _ITEMS:
                out["…"] = f"[+{len(value) - _ITEMS} keys]"
                break
            out[str(key)[:chars]] = _summary(item, chars // 4, depth + 1)
        return out
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"…[int of {value.bit_length()} bits]"
    return value

"""Decoding tool-call arguments, with errors a model can act on."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ptcbox.projections._validated import preview

__all__ = ["ArgumentsError", "parse_arguments"]


class ArgumentsError(ValueError):
    """Tool-call arguments that are not one JSON object. The message is for the model."""


def parse_arguments(
    arguments: str | Mapping[str, Any] | None, *, tool_name: str, expected: str
) -> dict[str, Any]:
    """Decode tool-call arguments into a dict.

    Args:
        arguments: JSON text, a mapping, or ``None``. ``None`` and blank text mean ``{}``.
        tool_name: Named in error messages.
        expected: The expected call signature, shown in error messages.

    Returns:
        A new dict.

    Raises:
        ArgumentsError: If the text is not valid JSON or not a JSON object; the message
            says so, shows what is expected and a short preview of what was given.
    """
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if not isinstance(arguments, str):
        raise ArgumentsError(
            f"the arguments of tool {tool_name!r} are invalid: they must be a JSON object "
            f"for {expected}, given {type(arguments).__name__} {preview(arguments)}"
        )
    if not arguments.strip():
        return {}
    try:
        data = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        where = f" at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
        raise ArgumentsError(
            f"the arguments of tool {tool_name!r} are invalid: not valid JSON "
            f"({reason}{where}); "
            f"send one complete JSON object for {expected}. "
            f"Given: {preview(arguments, raw_text=True)}"
        ) from None
    if not isinstance(data, dict):
        kind = _json_kind(data)
        raise ArgumentsError(
            f"the arguments of tool {tool_name!r} are invalid: they must be a JSON object "
            f"with named parameters for {expected}, but {kind} was given: "
            f"{preview(arguments, raw_text=True)}"
        )
    return data


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, bool):
        return "a JSON boolean"
    return "a JSON number"

"""Deterministic conversion of arbitrary Python values to JSON-compatible data.

Used for ``CodeResult.value``, tool-call arguments in the trace and values that cross
the process boundary. The conversion never calls code the snippet defined (no
``__repr__``, ``__str__``, ``__iter__`` or ``__eq__`` of snippet classes): subclasses of
builtin types are read through the builtin type's own methods, and unknown objects
become ``"<TypeName object>"``.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import enum
import json
import math
import re
import sys
import uuid
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ptcbox._datavalues import NOT_DATA, data_value

__all__ = ["JSONValue", "scrub_text", "to_jsonable"]

JSONValue = None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]
"""A value :func:`json.dumps` can encode (strict: no NaN, no lone surrogates)."""

_SURROGATES = re.compile("[\ud800-\udfff]")
_MAX_DEPTH = 64
_MAX_INT_BITS = 8192


def scrub_text(text: str) -> str:
    """Replace lone surrogates (unencodable in UTF-8) with U+FFFD.

    Args:
        text: Any ``str`` (subclasses are read as plain ``str``).

    Returns:
        A string that encodes as UTF-8; ``text`` itself when it already does.
    """
    if type(text) is str and text.isascii():  # the usual case: no copy, no encoding
        return text
    text = str.__str__(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", text)
    return text


def to_jsonable(value: Any) -> JSONValue:
    """Convert ``value`` to JSON-compatible data, deterministically.

    Rules: ``None``/``bool``/``str`` as is (lone surrogates replaced); ints as is up to
    8192 bits, larger ones as ``"<int with N bits>"``; floats as is, NaN and infinities as
    the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; lists, tuples, ranges and
    other sequences of builtin type as lists; sets as lists sorted by their JSON text;
    dicts with keys turned to strings; ``datetime``/``date``/``time`` as ISO 8601;
    ``timedelta`` as seconds (float); ``Decimal``, ``Fraction`` and ``UUID`` as strings;
    ``bytes`` as UTF-8 text when valid, else ``"base64:<data>"``; enums as their value;
    dataclass instances and pydantic models as dicts of their fields; anything else as
    ``"<TypeName object>"``. Cycles become ``"<cycle>"``; nesting deeper than 64 levels
    becomes ``"<too deep>"``.

    Args:
        value: Any Python object.

    Returns:
        Data that ``json.dumps(..., allow_nan=False)`` encodes.
    """
    return _convert(value, 0, set())


def _convert(value: Any, depth: int, seen: set[int]) -> JSONValue:
    kind = type(value)
    if value is None or kind is bool:
        return value  # type: ignore[no-any-return]
    if kind is str:
        return scrub_text(value)
    if kind is int:
        return _int(value)
    if kind is float:
        return _float(value)
    if depth >= _MAX_DEPTH:
        return "<too deep>"
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        marker = id(value)
        if marker in seen:
            return "<cycle>"
        seen.add(marker)
        try:
            return _container(value, depth, seen)
        finally:
            seen.discard(marker)
    if isinstance(value, bool):
        return bool.__bool__(value)
    if isinstance(value, enum.Enum):
        return _convert(value._value_, depth + 1, seen)
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, int):
        return _int(int.__index__(value))
    if isinstance(value, float):
        return _float(float.__float__(value))
    if isinstance(value, _dt.date):
        return (
            _dt.date.isoformat(value)
            if type(value) is _dt.date
            else (
                _dt.datetime.isoformat(value)
                if isinstance(value, _dt.datetime)
                else _dt.date.isoformat(value)
            )
        )
    if isinstance(value, _dt.time):
        return _dt.time.isoformat(value)
    if isinstance(value, _dt.timedelta):
        return _dt.timedelta.total_seconds(value)
    if isinstance(value, Decimal):
        return Decimal.__str__(value)
    if isinstance(value, Fraction):
        return (
            f"{value.numerator}/{value.denominator}"
            if value.denominator != 1
            else (str(int(value.numerator)))
        )
    if isinstance(value, uuid.UUID):
        return uuid.UUID.__str__(value)
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:
            return scrub_text(raw.decode("utf-8"))
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(raw).decode("ascii")
    if isinstance(value, range):
        if len(value) > 100_000:
            return f"<range({value.start}, {value.stop}, {value.step})>"
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: object.__getattribute__(value, f.name) for f in dataclasses.fields(value)}
        return _convert(fields, depth + 1, seen)
    dump = _pydantic_dump(value)
    if dump is not None:
        return _convert(dump, depth + 1, seen)
    data = data_value(value)
    if data is not NOT_DATA:
        return _convert(data, depth + 1, seen)
    return f"<{type.__getattribute__(kind, '__name__')} object>"


def _container(value: Any, depth: int, seen: set[int]) -> JSONValue:
    if isinstance(value, dict):
        out: dict[str, JSONValue] = {}
        for key, item in dict.items(value):
            out[_key(key, depth, seen)] = _convert(item, depth + 1, seen)
        return out
    if isinstance(value, set | frozenset):
        items = [_convert(item, depth + 1, seen) for item in frozenset.__iter__(frozenset(value))]
        return sorted(items, key=_sort_key)
    iterator = list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value)
    return [_convert(item, depth + 1, seen) for item in iterator]


def _key(key: Any, depth: int, seen: set[int]) -> str:
    if type(key) is str:
        return scrub_text(key)
    converted = _convert(key, depth + 1, seen)
    if isinstance(converted, str):
        return converted
    if converted is None or isinstance(converted, bool):
        return {None: "null", True: "true", False: "false"}[converted]
    return _sort_key(converted)


def _sort_key(item: JSONValue) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def _int(value: int) -> JSONValue:
    bits = value.bit_length()
    if bits > _MAX_INT_BITS:
        return f"<int with {bits} bits>"
    return value


def _float(value: float) -> JSONValue:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _pydantic_dump(value: Any) -> Any:
    # Looked up, not imported: a value can only be a pydantic model if pydantic is
    # loaded, and the worker process (which uses this module) imports no pydantic.
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    return None

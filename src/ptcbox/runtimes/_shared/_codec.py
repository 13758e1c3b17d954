"""Values crossing the tool boundary with their Python types: one codec for both sides.

Tool arguments and tool results keep their types between the snippet and the host
(DESIGN.md, "Tools inside code"): a tool returning ``(lat, lon)`` gives the snippet a
tuple, ``datetime.date(2024, 3, 1)`` passed to a tool arrives as a ``date``.

- :func:`encode` turns a value into *tagged JSON*: plain JSON where the value is plain
  (``str``, ``int``, finite ``float``, ``bool``, ``None``, lists, dicts with ``str``
  keys), and ``{"$t": <tag>, "v": <data>}`` objects for the rest. A dict whose keys are
  not all strings, or that has a ``"$t"`` key of its own, is sent as ``{"$t": "dict",
  "v": [[key, value], ...]}``, so no user data is ever read as a tag.
- :func:`decode` rebuilds the value, and builds *only* the types in :data:`TAGS`;
  anything malformed raises ``ValueError`` (the host turns it into a
  :class:`~ptcbox.errors.WireProtocolError`: the worker is assumed hostile).
- :func:`clone` is ``decode(encode(value))`` for in-process use (ThreadRuntime): a fresh
  copy made of builtin values, never the object the other side holds.

Types carried: ``tuple``, ``set``, ``frozenset``, ``bytes`` (``bytearray`` and
``memoryview`` arrive as ``bytes``), ``datetime``/``date``/``time`` (fixed-offset time
zones with their name; ``zoneinfo`` zones by key, falling back to the fixed offset where
the zone cannot be loaded; other ``tzinfo`` classes as their fixed offset), ``timedelta``,
``Decimal``, ``UUID``, ``complex``, ``Fraction``, ``range``, NaN and infinite floats,
and nested containers of them. Subclasses of these types (the snippet's own, a
``namedtuple``, an ``OrderedDict``) arrive as the plain builtin type; enums as their
value; dataclasses and pydantic models as dicts of their fields; any other object as the
text ``"<TypeName object>"``. The conversion never calls code of the value's class
(builtin types' own methods read subclasses), as :mod:`ptcbox._jsonable` does. Ints over
8192 bits become ``"<int with N bits>"``, cycles ``"<cycle>"``, nesting deeper than 64
levels ``"<too deep>"``.

The encoding is JSON all the same, so both sides keep their size caps
(:mod:`~ptcbox.runtimes._shared._value`) and the host never unpickles anything.
The tagging follows the usual practice of typed JSON encodings (e.g. MongoDB's
Extended JSON ``{"$date": ...}``, or ``json.JSONDecoder(object_hook=...)`` recipes).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as _dt
import enum
import math
import re
import sys
import uuid
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ptcbox._datavalues import NOT_DATA, data_value
from ptcbox._jsonable import JSONValue, scrub_text
from ptcbox.runtimes._shared._hashes import few_equal_hashes

__all__ = ["TAG", "TAGS", "clone", "decode", "encode"]

TAG = "$t"
"""The key that marks a tagged object."""

_CONTAINER_TAGS = ("tuple", "set", "frozenset", "dict", "range")
_SCALAR_TAGS = ("bytes", "float", "complex", "decimal", "uuid", "fraction")
_TIME_TAGS = ("date", "time", "datetime", "timedelta")
TAGS = frozenset(_CONTAINER_TAGS + _SCALAR_TAGS + _TIME_TAGS)
"""Every tag :func:`decode` accepts: the only types it ever builds."""

_MAX_DEPTH = 64
_MAX_INT_BITS = 8192
_MAX_TEXT = 100  # longest text of a float, a UUID, a time or a zone key
_ZONE_KEY = re.compile(r"^[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*$")
_PLAIN = frozenset({str, int, float, bool, type(None)})
_SHARED = frozenset(
    {bool, type(None), bytes, Decimal, uuid.UUID, complex, _dt.date, _dt.timedelta, range}
)
_FIXED_ZONES = frozenset({type(None), _dt.timezone})
_DELTA_FIELDS = ("days", "seconds", "microseconds")
_CLONE_DEPTH = 16


# --- encoding ---------------------------------------------------------------------------


def encode(value: Any) -> JSONValue:
    """Encode ``value`` as tagged JSON data (see the module docstring).

    Args:
        value: Any Python object.

    Returns:
        Data that ``json.dumps(..., allow_nan=False)`` encodes.
    """
    kind = type(value)
    if kind is str:
        return scrub_text(value)
    if kind is int:
        return value if -(1 << 62) < value < 1 << 62 else _int(value)
    if kind is bool or value is None or (kind is float and math.isfinite(value)):
        return value  # type: ignore[no-any-return]
    return _encode(value, 0, set())


def _encode(value: Any, depth: int, seen: set[int]) -> JSONValue:
    kind = type(value)
    if kind is str:
        return scrub_text(value)
    if kind is int:
        return _int(value)
    if value is None or kind is bool:
        return value  # type: ignore[no-any-return]
    if kind is float:
        return _float(value)
    if depth >= _MAX_DEPTH:
        return "<too deep>"
    if isinstance(value, list | tuple | dict | set | frozenset):
        marker = id(value)
        if marker in seen:
            return "<cycle>"
        seen.add(marker)
        try:
            return _container(value, depth + 1, seen)
        finally:
            seen.discard(marker)
    if isinstance(value, enum.Enum):
        return _encode(value._value_, depth + 1, seen)
    if isinstance(value, bool):
        return bool.__bool__(value)
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, int):
        return _int(int.__index__(value))
    if isinstance(value, float):
        return _float(float.__float__(value))
    return _scalar(value, depth, seen)


def _container(value: Any, depth: int, seen: set[int]) -> JSONValue:
    if isinstance(value, list):
        return [_encode(item, depth, seen) for item in list.__iter__(value)]
    if isinstance(value, tuple):
        return {TAG: "tuple", "v": [_encode(item, depth, seen) for item in tuple.__iter__(value)]}
    if isinstance(value, dict):
        items = dict.items(value)
        if all(type(key) is str for key, _ in items) and TAG not in dict.keys(value):
            return {scrub_text(key): _encode(item, depth, seen) for key, item in items}
        pairs = [[_encode(key, depth, seen), _encode(item, depth, seen)] for key, item in items]
        return {TAG: "dict", "v": pairs}  # type: ignore[dict-item]
    tag = "set" if isinstance(value, set) else "frozenset"
    members = set.__iter__(value) if isinstance(value, set) else frozenset.__iter__(value)
    return {TAG: tag, "v": [_encode(item, depth, seen) for item in members]}


def _scalar(value: Any, depth: int, seen: set[int]) -> JSONValue:
    if isinstance(value, bytes | bytearray | memoryview):
        return {TAG: "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, _dt.datetime):
        naive = _naive(_dt.datetime.isoformat(value), 19)
        tzinfo, fold = _dt.datetime.tzinfo.__get__(value), _dt.datetime.fold.__get__(value)
        return _with_zone({TAG: "datetime", "v": naive}, value, tzinfo, fold)
    if isinstance(value, _dt.date):
        return {TAG: "date", "v": _dt.date.isoformat(value)}
    if isinstance(value, _dt.time):
        naive = _naive(_dt.time.isoformat(value), 8)
        tzinfo, fold = _dt.time.tzinfo.__get__(value), _dt.time.fold.__get__(value)
        return _with_zone({TAG: "time", "v": naive}, value, tzinfo, fold)
    if isinstance(value, _dt.timedelta):
        parts = [_dt.timedelta.__dict__[name].__get__(value) for name in _DELTA_FIELDS]
        return {TAG: "timedelta", "v": parts}
    if isinstance(value, Decimal):
        return {TAG: "decimal", "v": Decimal.__str__(value)}
    if isinstance(value, uuid.UUID):
        return {TAG: "uuid", "v": uuid.UUID.__str__(value)}
    if isinstance(value, complex):
        real, imag = complex.real.__get__(value), complex.imag.__get__(value)
        return {TAG: "complex", "v": [float.__repr__(real), float.__repr__(imag)]}
    if isinstance(value, Fraction):
        numerator, denominator = Fraction.as_integer_ratio(value)
        if max(numerator.bit_length(), denominator.bit_length()) > _MAX_INT_BITS:
            return f"<Fraction with {numerator.bit_length()} bits>"
        return {TAG: "fraction", "v": [numerator, denominator]}
    if isinstance(value, range):
        bounds = [value.start, value.stop, value.step]  # range has no subclasses
        return {TAG: "range", "v": [_int(bound) for bound in bounds]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: object.__getattribute__(value, f.name) for f in dataclasses.fields(value)}
        return _encode(fields, depth + 1, seen)
    dump = _pydantic_dump(value)
    if dump is not None:
        return _encode(dump, depth + 1, seen)
    data = data_value(value)
    if data is not NOT_DATA:
        return _encode(data, depth + 1, seen)
    return f"<{type.__getattribute__(type(value), '__name__')} object>"


def _naive(iso: str, width: int) -> str:
    """The ISO text without its UTC offset (``width``: the length up to the seconds)."""
    return iso[: width + 7] if iso[width : width + 1] == "." else iso[:width]


def _with_zone(
    out: dict[str, Any], value: _dt.datetime | _dt.time, tzinfo: _dt.tzinfo | None, fold: int
) -> JSONValue:
    if fold:
        out["fold"] = 1
    if tzinfo is None:
        return out
    key = getattr(tzinfo, "key", None) if type(tzinfo).__name__ == "ZoneInfo" else None
    offset = tzinfo.utcoffset(value if isinstance(value, _dt.datetime) else None)
    if offset is not None and not isinstance(offset, _dt.timedelta):
        offset = None
    if isinstance(key, str) and len(key) <= _MAX_TEXT and _ZONE_KEY.match(key):
        out["zone"] = key
    if offset is not None:
        out["offset"] = [offset.days, offset.seconds, offset.microseconds]
        if type(tzinfo) is _dt.timezone and "zone" not in out:
            name = tzinfo.tzname(None)
            if name != _dt.timezone(offset).tzname(None):
                out["name"] = scrub_text(name)[:_MAX_TEXT]
    return out


def _int(value: int) -> JSONValue:
    bits = value.bit_length()
    return f"<int with {bits} bits>" if bits > _MAX_INT_BITS else value


def _float(value: float) -> JSONValue:
    if math.isfinite(value):
        return value
    return {TAG: "float", "v": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def _pydantic_dump(value: Any) -> Any:
    # Looked up, not imported: only a loaded pydantic can have made the value.
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="python")
    return None


# --- decoding ---------------------------------------------------------------------------


def decode(data: Any) -> Any:
    """Rebuild a value from :func:`encode`'s data; builds only the types of :data:`TAGS`.

    Args:
        data: Parsed JSON (``str``, ``int``, ``float``, ``bool``, ``None``, ``list``,
            ``dict`` with ``str`` keys), e.g. from the other side of the wire.

    Returns:
        The value, made of fresh objects.

    Raises:
        ValueError: On a malformed tagged object (unknown tag, wrong field types, an
            unhashable set member or dict key, an invalid date ...).
    """
    kind = type(data)
    if kind in _PLAIN:
        return data
    return _decode(data, 0)


def _decode(data: Any, depth: int) -> Any:
    kind = type(data)
    if kind in _PLAIN:
        return data
    if depth > _MAX_DEPTH + 2:
        raise ValueError("tagged value nested too deeply")
    if kind is list:
        return [_decode(item, depth + 1) for item in data]
    if kind is not dict:
        raise ValueError(f"not JSON data: {kind.__name__}")
    if TAG not in data:
        return {key: _decode(item, depth + 1) for key, item in data.items()}
    tag = data[TAG]
    payload = data.get("v")
    try:
        return _untag(tag, payload, data, depth + 1)
    except (TypeError, OverflowError, ArithmeticError, binascii.Error) as exc:
        raise ValueError(f"malformed {str(tag)[:20]!r} value: {exc}") from None


def _untag(tag: Any, v: Any, data: dict[str, Any], depth: int) -> Any:
    if tag == "tuple":
        return tuple(_decode(item, depth) for item in _list(v))
    if tag == "set":
        return set(few_equal_hashes([_decode(item, depth) for item in _list(v)]))
    if tag == "frozenset":
        return frozenset(few_equal_hashes([_decode(item, depth) for item in _list(v)]))
    if tag == "dict":
        pairs = []
        for pair in _list(v):
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("a dict entry is not a [key, value] pair")
            pairs.append((_decode(pair[0], depth), _decode(pair[1], depth)))
        few_equal_hashes([key for key, _ in pairs])
        return dict(pairs)
    if tag == "bytes":
        return base64.b64decode(_text(v, None), validate=True)
    if tag == "float":
        if v not in ("nan", "inf", "-inf"):
            raise ValueError("a tagged float is 'nan', 'inf' or '-inf'")
        return float(v)
    if tag == "complex":
        parts = _list(v)
        if len(parts) != 2:
            raise ValueError("a complex is [real, imag]")
        return complex(float(_text(parts[0])), float(_text(parts[1])))
    if tag == "decimal":
        return Decimal(_text(v, None))
    if tag == "uuid":
        return uuid.UUID(_text(v))
    if tag == "date":
        return _dt.date.fromisoformat(_text(v))
    if tag == "datetime":
        moment = _dt.datetime.fromisoformat(_text(v))
        return moment.replace(tzinfo=_zone(data), fold=_fold(data))
    if tag == "time":
        clock = _dt.time.fromisoformat(_text(v))
        return clock.replace(tzinfo=_zone(data), fold=_fold(data))
    if tag == "timedelta":
        days, seconds, micros = _ints(v, 3)
        return _dt.timedelta(days=days, seconds=seconds, microseconds=micros)
    if tag == "fraction":
        numerator, denominator = _ints(v, 2)
        return Fraction(numerator, denominator)
    if tag == "range":
        start, stop, step = _ints(v, 3)
        return range(start, stop, step)
    raise ValueError(f"unknown tag {str(tag)[:20]!r}")


def _list(v: Any) -> list[Any]:
    if type(v) is not list:
        raise ValueError("the tagged value's 'v' is not a list")
    return v


def _text(v: Any, limit: int | None = _MAX_TEXT) -> str:
    if type(v) is not str or (limit is not None and len(v) > limit):
        raise ValueError("the tagged value's 'v' is not a short text")
    return v


def _ints(v: Any, count: int) -> list[int]:
    items = _list(v)
    if len(items) != count or any(type(item) is not int for item in items):
        raise ValueError(f"the tagged value's 'v' is not {count} integers")
    return items


def _fold(data: dict[str, Any]) -> int:
    fold = data.get("fold", 0)
    if fold not in (0, 1) or type(fold) is not int:
        raise ValueError("'fold' is 0 or 1")
    return fold


def _zone(data: dict[str, Any]) -> _dt.tzinfo | None:
    offset = data.get("offset")
    key = data.get("zone")
    if key is not None:
        zone = _load_zone(_text(key))
        if zone is not None:
            return zone
    if offset is None:
        if key is not None:
            raise ValueError("a zone without an offset")
        return None
    days, seconds, micros = _ints(offset, 3)
    delta = _dt.timedelta(days=days, seconds=seconds, microseconds=micros)
    name = data.get("name")
    if name is None:
        return _dt.UTC if not delta else _dt.timezone(delta)
    return _dt.timezone(delta, _text(name))


def _load_zone(key: str) -> _dt.tzinfo | None:
    if not _ZONE_KEY.match(key) or ".." in key:
        raise ValueError("not a time zone key")
    try:
        import zoneinfo  # noqa: PLC0415 - rarely needed; not loaded for plain values

        return zoneinfo.ZoneInfo(key)
    except Exception:  # unknown zone, or its data unreadable here: the fixed offset
        return None


# --- in-process copies ---------------------------------------------------------------------


def clone(value: Any) -> Any:
    """A fresh copy of ``value`` made of builtin values: ``decode(encode(value))``.

    What ThreadRuntime hands across the tool boundary, so that the same snippet sees the
    same values as over SubprocessRuntime's wire, a tool never receives the snippet's
    live object and the snippet never holds a tool's live data. Immutable values of
    exact builtin types are shared, not copied (they cannot change).
    """
    return _clone(value, 0)


def _clone(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind is str:
        return scrub_text(value)
    if kind is int:
        return _int(value)
    if kind is float or kind in _SHARED:
        return value
    if depth < _CLONE_DEPTH:  # deeper (or cyclic) data: encode() knows its limits
        if kind is list:
            return [_clone(item, depth + 1) for item in value]
        if kind is dict and TAG not in value:
            out = {}
            for key, item in value.items():
                if type(key) is not str:
                    return decode(encode(value))
                out[scrub_text(key)] = _clone(item, depth + 1)
            return out
        if kind is tuple:
            return tuple([_clone(item, depth + 1) for item in value])
    if (kind is _dt.datetime or kind is _dt.time) and type(value.tzinfo) in _FIXED_ZONES:
        return value
    return decode(encode(value))

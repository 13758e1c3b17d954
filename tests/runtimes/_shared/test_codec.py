"""The value codec (``runtimes/_shared/_codec.py``) and tool values in both runtimes.

Unit checks of encode/decode/clone, then the same values through real tools, as
arguments and as results, on ThreadRuntime and SubprocessRuntime.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import json
import uuid
import zoneinfo
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from ptcbox import DirectProjection
from ptcbox.runtimes._shared._codec import TAGS, clone, decode, encode

pytestmark = pytest.mark.anyio

CET = dt.timezone(dt.timedelta(hours=1), "CET")
VALUES: list[Any] = [
    (1, "a"),
    (),
    {3, 1},
    frozenset({"x"}),
    b"\x89PNG\x00",
    dt.date(2024, 3, 1),
    dt.datetime(2024, 3, 1, 9, 30, 15, 123, tzinfo=dt.UTC),
    dt.datetime(2024, 3, 1, 9, 30),
    dt.datetime(2024, 10, 27, 2, 30, fold=1, tzinfo=zoneinfo.ZoneInfo("Europe/Oslo")),
    dt.datetime(2024, 3, 1, tzinfo=CET),
    dt.time(8, 32, tzinfo=CET),
    dt.time(23, 59, 59, 999999),
    dt.timedelta(days=-2, seconds=3, microseconds=4),
    Decimal("0.9198"),
    Decimal("-Infinity"),
    uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8"),
    complex(50, 6.283185),
    Fraction(22, 7),
    range(3, 30, 4),
    float("inf"),
    {("EUR", "USD"): 1.08, 7: "seven", None: 0, frozenset({1}): "f"},
    {"$t": "bytes", "v": "AAAA"},  # user data that looks like a tag stays a dict
    {"nested": [(1, {2}), {"d": dt.date(2020, 1, 1)}]},
    [1, 2.5, "x", None, True],
]


def roundtrip(value: Any) -> Any:
    text = json.dumps(encode(value), allow_nan=False)  # strict JSON on the wire
    return decode(json.loads(text))


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_values_keep_their_types_and_equality(value: Any) -> None:
    for copy in (roundtrip(value), clone(value)):
        assert type(copy) is type(value)
        assert copy == value or repr(copy) == repr(value) == "inf"
        assert repr(copy) == repr(value)


def test_zones_and_folds_survive() -> None:
    oslo = VALUES[8]
    copy = roundtrip(oslo)
    assert copy.tzinfo == zoneinfo.ZoneInfo("Europe/Oslo") and copy.fold == 1
    assert copy.utcoffset() == oslo.utcoffset()
    assert roundtrip(VALUES[9]).tzname() == "CET"


def test_subclasses_arrive_as_plain_builtins() -> None:
    point = collections.namedtuple("point", "x y")(1, 2)
    ordered = collections.OrderedDict(a=1)

    class Text(str):
        def upper(self) -> str:  # never called by the codec
            raise AssertionError

    for value, kind in [(point, tuple), (ordered, dict), (Text("hi"), str)]:
        assert type(roundtrip(value)) is kind and type(clone(value)) is kind
        assert roundtrip(value) == value


def test_copies_are_fresh_never_the_same_mutable_object() -> None:
    data = {"rows": [[1, 2]], "tags": {"a"}}
    copy = clone(data)
    copy["rows"][0].append(3)
    copy["tags"].add("b")
    assert data == {"rows": [[1, 2]], "tags": {"a"}}


def test_objects_dataclasses_cycles_and_depth() -> None:
    @dataclasses.dataclass
    class Row:
        id: int
        when: dt.date

    loop: list[Any] = [1]
    loop.append(loop)
    deep: list[Any] = []
    for _ in range(100):
        deep = [deep]
    assert roundtrip(Row(1, dt.date(2024, 1, 2))) == {"id": 1, "when": dt.date(2024, 1, 2)}
    assert roundtrip(object()) == "<object object>"
    assert roundtrip(loop) == [1, "<cycle>"]
    assert "<too deep>" in json.dumps(encode(deep))
    assert roundtrip(10**3000) == "<int with 9966 bits>"


@pytest.mark.parametrize(
    "data",
    [
        {"$t": "pickle", "v": "gASV"},  # unknown tag: never another type
        {"$t": "set", "v": [[1, 2]]},  # unhashable member
        {"$t": "dict", "v": [[[1], 2]]},  # unhashable key
        {"$t": "dict", "v": [[1, 2, 3]]},
        {"$t": "tuple", "v": "abc"},
        {"$t": "bytes", "v": "not base64!"},
        {"$t": "float", "v": "1e5"},
        {"$t": "datetime", "v": "2024-13-01"},
        {"$t": "datetime", "v": "2024-01-01", "zone": "../../etc/passwd", "offset": [0, 0, 0]},
        {"$t": "timedelta", "v": [1, 2]},
        {"$t": "fraction", "v": [1, 0]},
        {"$t": "range", "v": [0, 10, 0]},
        {"$t": "uuid", "v": "x" * 1000},
        {"$t": "complex", "v": ["1", "2", "3"]},
    ],
)
def test_the_decoder_refuses_malformed_tags(data: Any) -> None:
    with pytest.raises(ValueError):
        decode(data)


def test_decode_builds_only_the_listed_types() -> None:
    built = {type(roundtrip(v)) for v in VALUES}
    allowed = {list, dict, str, int, float, bool, type(None), dt.timezone}
    allowed |= {tuple, set, frozenset, bytes, complex, Decimal, uuid.UUID, Fraction, range}
    allowed |= {dt.date, dt.time, dt.datetime, dt.timedelta}
    assert built <= allowed
    assert len(TAGS) == 15


# --- through real tools, both runtimes --------------------------------------------------


def echo(value: Any) -> Any:
    """Returns what it got, and checks it got a fresh builtin value."""
    return value


def describe(value: Any) -> str:
    """The type the tool received."""
    return type(value).__name__


SNIPPET = """
import datetime
from decimal import Decimal
import uuid
from fractions import Fraction
values = [
    (1, "a"), {3, 1}, frozenset({"x"}), b"\\x89PNG", bytearray(b"ab"),
    datetime.date(2024, 3, 1), datetime.datetime(2024, 3, 1, 9, tzinfo=datetime.timezone.utc),
    datetime.time(8, 32), datetime.timedelta(minutes=45), Decimal("0.10"),
    uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8"), complex(1, 2), Fraction(1, 3),
    {("EUR", "USD"): 1.08, 3: "x"}, {"$t": "bytes", "v": "AAAA"}, float("nan"),
]
for v in values:
    back = echo(v)
    same = back == v or (v != v and back != back)
    print(describe(v), type(back).__name__, same)
"""


async def test_tool_values_keep_their_types_in_both_runtimes(runtime: Any) -> None:
    tools = {
        "echo": DirectProjection("echo", echo),
        "describe": DirectProjection("describe", describe),
    }
    result = await runtime.execute(SNIPPET, tools)
    assert result.ok, result.error
    lines = result.stdout.splitlines()
    assert lines == [
        "tuple tuple True",
        "set set True",
        "frozenset frozenset True",
        "bytes bytes True",
        "bytes bytes True",  # bytearray arrives as bytes (a fresh copy)
        "date date True",
        "datetime datetime True",
        "time time True",
        "timedelta timedelta True",
        "Decimal Decimal True",
        "UUID UUID True",
        "complex complex True",
        "Fraction Fraction True",
        "dict dict True",
        "dict dict True",
        "float float True",
    ]
    # the trace stays JSON (the documented conversions)
    json.dumps([c.arguments for c in result.tool_calls], allow_nan=False)
    assert result.tool_calls[0].arguments == {"value": [1, "a"]}


async def test_async_tools_keep_types_too(runtime: Any) -> None:
    async def aecho(value: Any) -> Any:
        """Async echo."""
        return value

    code = (
        "import asyncio, datetime\n"
        "r = await asyncio.gather(aecho((1, 2)), aecho({datetime.date(2024, 1, 1)}))\n"
        "print([type(x).__name__ for x in r], r[0] == (1, 2))\n"
        "(1, 2)\n"
    )
    result = await runtime.execute(code, {"aecho": DirectProjection("aecho", aecho)})
    assert result.ok, result.error
    assert result.stdout == "['tuple', 'set'] True\n"
    assert result.value == [1, 2]  # CodeResult.value stays JSON-compatible
    json.dumps(result.to_dict())


async def test_a_snippet_cannot_mutate_a_tools_live_data(runtime: Any) -> None:
    cache = {"rows": [1, 2], "tags": {"a"}}

    def cached() -> dict[str, Any]:
        """Returns the same host dict every time."""
        return cache

    code = "d = cached()\nd['rows'].append(3)\nd['tags'].add('b')\nprint(cached())"
    result = await runtime.execute(code, {"cached": DirectProjection("cached", cached)})
    assert result.ok, result.error
    assert result.stdout == "{'rows': [1, 2], 'tags': {'a'}}\n"
    assert cache == {"rows": [1, 2], "tags": {"a"}}

"""to_jsonable: deterministic JSON conversion that never runs snippet code."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import uuid
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from pydantic import BaseModel

from ptcbox._jsonable import scrub_text, to_jsonable


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Model(BaseModel):
    when: dt.date


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, True),
        (3, 3),
        (1.5, 1.5),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        ("s", "s"),
        ((1, (2,)), [1, [2]]),
        ({3, 1, 2}, [1, 2, 3]),
        (frozenset({"b", "a"}), ["a", "b"]),
        ({1: "a", None: "b", (1, 2): "c"}, {"1": "a", "null": "b", "[1, 2]": "c"}),
        (dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05"),
        (dt.date(2024, 1, 2), "2024-01-02"),
        (dt.time(3, 4), "03:04:00"),
        (dt.timedelta(minutes=1, seconds=30), 90.0),
        (Decimal("1.10"), "1.10"),
        (Fraction(1, 3), "1/3"),
        (Fraction(4, 2), "2"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (b"abc", "abc"),
        (bytearray(b"\x00\xff"), "base64:AP8="),
        (range(3), [0, 1, 2]),
        (Color.RED, "red"),
        (Point(1, 2), {"x": 1, "y": 2}),
        (Model(when=dt.date(2024, 5, 6)), {"when": "2024-05-06"}),
        (2**9000, "<int with 9001 bits>"),
    ],
)
def test_conversions(value: Any, expected: Any) -> None:
    assert to_jsonable(value) == expected
    json.dumps(to_jsonable(value), allow_nan=False)


def test_nan_becomes_a_string() -> None:
    assert to_jsonable(float("nan")) == "NaN"


def test_snippet_dunder_methods_are_never_called() -> None:
    calls: list[str] = []

    class Sneaky:
        def __repr__(self) -> str:
            calls.append("repr")
            return "sneaky"

        __str__ = __repr__

    class SneakyStr(str):
        def __str__(self) -> str:
            calls.append("str")
            return "changed"

    class SneakyList(list[int]):
        def __iter__(self) -> Any:
            calls.append("iter")
            return iter([99])

    class SneakyDict(dict[str, int]):
        def items(self) -> Any:
            calls.append("items")
            return [("z", 0)]

    converted = to_jsonable([Sneaky(), SneakyStr("kept"), SneakyList([1, 2]), SneakyDict(a=1)])
    assert converted == ["<Sneaky object>", "kept", [1, 2], {"a": 1}]
    assert calls == []


def test_cycles_and_depth_are_bounded() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    assert to_jsonable(cyclic) == ["<cycle>"]
    deep: list[Any] = []
    node = deep
    for _ in range(200):
        child: list[Any] = []
        node.append(child)
        node = child
    json.dumps(to_jsonable(deep))
    assert "<too deep>" in json.dumps(to_jsonable(deep))


def test_shared_non_cyclic_references_are_not_cycles() -> None:
    shared = [1]
    assert to_jsonable([shared, shared]) == [[1], [1]]


def test_sets_of_mixed_types_sort_deterministically() -> None:
    assert to_jsonable({1, "a", None}) == to_jsonable({None, "a", 1})


def test_scrub_text_replaces_lone_surrogates_only() -> None:
    assert scrub_text("ok \ud800 é") == "ok \ufffd é"
    plain = "plain"
    assert scrub_text(plain) is plain

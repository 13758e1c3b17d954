"""``sized_copy``: one walk that must copy exactly as ``clone`` does and refuse exactly
when ``json_size_over`` would (else it hands the value to those two)."""

from __future__ import annotations

import datetime as dt
import math
import random
from typing import Any

import pytest

from ptcbox import DirectProjection, ThreadRuntime
from ptcbox.runtimes._shared._codec import TAG, clone
from ptcbox.runtimes._shared._value import MAX_TOOL_DATA_BYTES, json_size_over
from ptcbox.runtimes.thread._plaincopy import UNHANDLED, sized_copy

_LEAVES: list[Any] = [
    "",
    "abc",
    "é✓",
    "lone \ud800 surrogate",
    0,
    -7,
    2**62,
    2**63,
    -(2**70),
    2**9000,
    1.5,
    float("nan"),
    float("inf"),
    True,
    False,
    None,
    b"bytes",
    dt.date(2024, 1, 2),
]


def _value(rng: random.Random, depth: int) -> Any:
    if depth > 4 or rng.random() < 0.4:
        return rng.choice(_LEAVES)
    kind = rng.choice(["list", "tuple", "dict", "dict", "odd_dict"])
    items = [_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    if kind == "list":
        return items
    if kind == "tuple":
        return tuple(items)
    keys: list[Any] = [rng.choice(["k", "ké", "\udc80", "name", TAG, str(i)]) for i in items]
    if kind == "odd_dict":
        keys = [rng.choice([1, "x", (1, 2)]) for _ in items]
    return dict(zip(keys, items, strict=True))


def _same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@pytest.mark.parametrize("seed", range(40))
def test_sized_copy_is_clone_or_hands_over(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        value = _value(rng, 0)
        for limit in (MAX_TOOL_DATA_BYTES, 40, 10):
            copied = sized_copy(value, limit)
            if json_size_over(value, limit):
                assert copied is UNHANDLED  # the refusal stays the two-walk path's
            elif copied is not UNHANDLED:
                assert _same(copied, clone(value)), value


def test_sized_copy_copies_containers_and_shares_nothing_mutable() -> None:
    value = {"rows": [{"a": 1, "b": [1.5, None]}], "t": ("x", 2)}
    copied = sized_copy(value, MAX_TOOL_DATA_BYTES)
    assert copied == value
    assert copied is not value
    assert copied["rows"] is not value["rows"]
    assert copied["rows"][0] is not value["rows"][0]
    assert copied["rows"][0]["b"] is not value["rows"][0]["b"]


def test_sized_copy_hands_over_deep_and_big_values() -> None:
    deep: Any = []
    for _ in range(20):
        deep = [deep]
    assert sized_copy(deep, MAX_TOOL_DATA_BYTES) is UNHANDLED
    assert sized_copy(["x" * 50], 40) is UNHANDLED  # over the limit
    assert sized_copy({1: "a"}, MAX_TOOL_DATA_BYTES) is UNHANDLED
    assert sized_copy([dt.date(2024, 1, 1)], MAX_TOOL_DATA_BYTES) is UNHANDLED


@pytest.mark.anyio
async def test_a_tool_result_reaches_the_snippet_as_a_fresh_copy() -> None:
    shared = {"rows": [{"name": "é", "n": 1}], "pair": (1, "b")}
    code = (
        "data = get()\n"
        "data['rows'][0]['n'] = 99\n"
        "data['rows'].append('x')\n"
        "print(type(data['pair']).__name__, data['rows'][0]['name'])\n"
    )
    namespace = {"get": DirectProjection(name="get", fn=lambda: shared)}
    async with ThreadRuntime() as runtime:
        result = await runtime.execute(code, namespace)
    assert result.ok, result.error
    assert result.stdout == "tuple é\n"
    assert shared == {"rows": [{"name": "é", "n": 1}], "pair": (1, "b")}  # host data intact

"""Host-side helpers of both runtimes: timeouts, the tool table, record arguments."""

from __future__ import annotations

import math

import pytest

from ptcbox import DirectProjection
from ptcbox.runtimes._shared._host import ToolTable, jsonable_arguments, resolve_timeout


def test_resolve_timeout() -> None:
    assert resolve_timeout(None, 30.0) == 30.0
    assert resolve_timeout(2, 30.0) == 2.0
    assert resolve_timeout(math.inf, 30.0) == math.inf
    for bad in (0, -1, math.nan):
        with pytest.raises(ValueError):
            resolve_timeout(bad, 30.0)
    with pytest.raises(TypeError):
        resolve_timeout("1", 30.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        resolve_timeout(True, 30.0)


def test_tool_table_validates_and_caches() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    table = ToolTable(max_entries=2)
    projection = DirectProjection("add", add)
    first = table.resolve({"add": projection})["add"]
    assert first is table.resolve({"add": projection})["add"]
    assert first.call is add and not first.is_async
    with pytest.raises(ValueError):
        table.resolve({"other": projection})
    with pytest.raises(TypeError):
        table.resolve({"add": add})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        table.resolve([projection])  # type: ignore[arg-type]
    for i in range(5):  # the cache stays bounded
        table.resolve({f"t{i}": DirectProjection(f"t{i}", add)})
    assert len(table._cache) <= 2


def test_async_projections_are_detected() -> None:
    async def fetch(q: str) -> str:
        return q

    spec = ToolTable().resolve({"fetch": DirectProjection("fetch", fetch)})["fetch"]
    assert spec.is_async


def test_jsonable_arguments_fast_path_and_conversion() -> None:
    plain = {"a": 1, "b": "x", "c": None, "d": 1.5, "e": True}
    assert jsonable_arguments(plain) is plain
    odd = {"s": {3, 1}, "big": 1 << 70, "u": "é", "nan": math.nan}
    assert jsonable_arguments(odd) == {"s": [1, 3], "big": 1 << 70, "u": "é", "nan": "NaN"}

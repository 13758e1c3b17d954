"""numpy/pandas values as plain data (ptcbox._datavalues, used by the wire and to_jsonable)."""

from __future__ import annotations

import datetime as dt

import pytest

from ptcbox._datavalues import MAX_ELEMENTS, NOT_DATA, data_value
from ptcbox._jsonable import to_jsonable
from ptcbox.runtimes._shared._codec import decode, encode

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


def test_scalars_become_python_numbers() -> None:
    assert data_value(np.int64(3)) == 3 and type(data_value(np.int64(3))) is int
    assert data_value(np.bool_(True)) is True
    assert data_value(np.float32(1.5)) == 1.5
    assert data_value(np.datetime64("2024-03-01")) == dt.date(2024, 3, 1)


def test_arrays_and_frames_become_lists_and_records() -> None:
    assert data_value(np.arange(4).reshape(2, 2)) == [[0, 1], [2, 3]]
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    assert data_value(df) == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    assert data_value(df["a"]) == {0: 1, 1: 2}
    assert data_value(df.columns) == ["a", "b"]
    assert data_value(pd.NaT) is None
    assert data_value([1]) is NOT_DATA and data_value("x") is NOT_DATA


def test_a_named_index_stays_with_its_rows() -> None:
    """A groupby's keys live in the index: records without it lost which row was which.

    ``df.groupby("region").agg(total=...)`` as a snippet's last line gave
    ``[{"total": 4.0}, {"total": 2.0}]``, no region.
    """
    df = pd.DataFrame({"region": ["EU", "US", "EU"], "sku": ["A", "B", "A"], "n": [1, 2, 3]})
    assert data_value(df.groupby("region").agg(total=("n", "sum"))) == [
        {"region": "EU", "total": 4},
        {"region": "US", "total": 2},
    ]
    assert data_value(df.groupby(["region", "sku"])[["n"]].sum()) == [
        {"region": "EU", "sku": "A", "n": 4},
        {"region": "US", "sku": "B", "n": 2},
    ]
    pivot = pd.pivot_table(df, index="region", columns="sku", values="n", aggfunc="sum")
    assert data_value(pivot.fillna(0))[0] == {"region": "EU", "A": 4.0, "B": 0.0}
    # an unnamed index is a row number (a sort or a filter leaves it): left out as before
    assert data_value(df.sort_values("n", ascending=False).head(1)) == [
        {"region": "EU", "sku": "A", "n": 3}
    ]
    # a name that a column already has, or that is not a str: left out, never an error
    clash = df.set_index("region")
    clash["region"] = 0
    assert data_value(clash)[0] == {"sku": "A", "n": 1, "region": 0}
    assert data_value(df.set_index("sku").rename_axis(7))[0] == {"region": "EU", "n": 1}


def test_too_large_and_subclasses_become_a_note() -> None:
    big = np.zeros(MAX_ELEMENTS + 1, dtype=np.uint8)
    assert data_value(big).startswith("<ndarray of shape (1000001,): too large")

    class Mine(pd.DataFrame):
        pass

    assert data_value(Mine({"a": [1]})) is NOT_DATA
    assert to_jsonable(Mine({"a": [1]})) == "<Mine object>"


def test_the_codec_and_to_jsonable_convert_nested_values() -> None:
    value = {"n": np.int64(5), "rows": pd.DataFrame({"t": [pd.Timestamp("2024-03-01")]})}
    assert decode(encode(value)) == {"n": 5, "rows": [{"t": dt.datetime(2024, 3, 1)}]}
    assert to_jsonable(value) == {"n": 5, "rows": [{"t": "2024-03-01T00:00:00"}]}

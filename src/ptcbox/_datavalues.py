"""numpy and pandas values as plain Python data, for the wire and ``CodeResult.value``.

Used by :mod:`ptcbox._jsonable` and the tagged codec
(:mod:`ptcbox.runtimes._shared._codec`) for values of the data preset
(:meth:`~ptcbox.sandbox.SandboxPolicy.data`); numpy and pandas are never imported here
(a value of theirs exists only when they already are). The conversion:

- numpy scalars (``np.int64``, ``np.float32``, ``np.bool_``, ``np.datetime64`` ...) become
  the Python value of ``.item()`` (``int``, ``float``, ``bool``, ``datetime`` ...);
- ``numpy.ndarray`` becomes nested lists (``.tolist()``);
- ``pandas.DataFrame`` becomes a list of row dicts (``to_dict(orient="records")``), a
  named index's levels first (``reset_index()``: a groupby's keys stay with their rows),
  ``pandas.Series`` a dict of index to value (``to_dict()``), ``pandas.Index`` a list;
  ``pandas.Timestamp`` is a ``datetime`` already, ``NaT``/``NA`` become ``None``;
- larger than :data:`MAX_ELEMENTS` elements, or a subclass of these types: the text
  ``"<DataFrame with 3 rows and 2 columns: convert it, e.g. df.head(20).to_dict('records')>"``,
  never an error (the call of the real C or pandas method on the exact type runs no
  snippet code).
"""

from __future__ import annotations

import sys
from typing import Any, Final

__all__ = ["MAX_ELEMENTS", "NOT_DATA", "data_value"]

MAX_ELEMENTS: Final = 1_000_000
"""Largest array or frame (elements) converted; larger ones become a note."""

NOT_DATA: Final = object()
"""What :func:`data_value` returns for a value that is not of numpy or pandas."""


def data_value(value: Any) -> Any:
    """``value`` as plain Python data if it is a numpy/pandas value, else :data:`NOT_DATA`."""
    kind = type(value)
    home = type.__dict__["__module__"].__get__(kind)
    root = home.partition(".")[0] if type(home) is str else ""
    if root == "numpy":
        return _numpy_value(value, kind)
    if root == "pandas":
        return _pandas_value(value, kind)
    return NOT_DATA


def _numpy_value(value: Any, kind: Any) -> Any:
    np: Any = sys.modules.get("numpy")
    if np is None:
        return NOT_DATA
    if kind is np.ndarray:
        size = np.ndarray.size.__get__(value)
        if size > MAX_ELEMENTS:
            shape = np.ndarray.shape.__get__(value)
            return f"<ndarray of shape {shape}: too large to return; print a summary>"
        return np.ndarray.tolist(value)
    if isinstance(value, np.generic):  # a type of numpy itself (see data_value)
        return np.generic.item(value)
    return NOT_DATA


def _pandas_value(value: Any, kind: Any) -> Any:
    pd: Any = sys.modules.get("pandas")
    if pd is None:
        return NOT_DATA
    if kind is pd.DataFrame:
        rows, cols = value.shape
        if rows * max(cols, 1) > MAX_ELEMENTS:
            return (
                f"<DataFrame with {rows} rows and {cols} columns: too large to return; "
                "convert a part, e.g. df.head(20).to_dict('records')>"
            )
        if _named_index_fits(pd, value):  # a groupby's keys, a pivot's rows: keep them
            value = pd.DataFrame.reset_index(value)
        return pd.DataFrame.to_dict(value, orient="records")
    if kind is pd.Series:
        if len(value) > MAX_ELEMENTS:
            return f"<Series of {len(value)} values: too large to return>"
        return pd.Series.to_dict(value)
    if isinstance(value, pd.Index):  # a type of pandas itself (see data_value)
        if len(value) > MAX_ELEMENTS:
            return f"<Index of {len(value)} values: too large to return>"
        return pd.Index.tolist(value)
    if value is pd.NaT or value is pd.NA:
        return None
    return NOT_DATA


def _named_index_fits(pd: Any, frame: Any) -> bool:
    """Whether ``frame``'s index is named (str names only) and no column has such a name.

    A named index carries data (``df.groupby("region").agg(...)`` keeps the regions
    only there), so records without it lose the rows' keys; an unnamed one is a row
    number (``sort_values`` or a filter leaves it) and stays out.
    """
    index = pd.DataFrame.index.__get__(frame)
    kind = pd.MultiIndex if type(index) is pd.MultiIndex else pd.Index
    names = list(kind.names.__get__(index))
    if not all(type(name) is str for name in names) or len(set(names)) < len(names):
        return False
    columns = pd.DataFrame.columns.__get__(frame)
    taken = {label for label in columns if type(label) is str}
    return len(taken) == len(columns) and not taken.intersection(names)

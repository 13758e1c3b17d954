"""Harden pandas' own classes in a worker process of :meth:`SandboxPolicy.data`.

A ``SubprocessRuntime`` template whose policy allows pandas calls :func:`harden_pandas`
once, before it forks any worker; the process (and every worker forked from it) runs
only snippets under that policy, so changing pandas' classes there changes nothing of
the host. Every route to a method reaches the patched one: attribute access,
``operator.methodcaller``, ``super()``, ``Class.method(obj)`` and pandas' own dispatch of
method names given as strings (``df.agg("to_pickle", path)``), which looks attributes up
with the real ``getattr``: names given as strings must be public and not refused.
"""

from __future__ import annotations

import functools
import importlib
import io
from collections.abc import Callable
from typing import Any, Final

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._guards import allow_instance_writes

__all__ = ["check_method_name", "harden_pandas"]

_NO_FILES: Final = "writes files"
_PICKLE: Final = "pickling: unpickling runs arbitrary code; use to_dict() or to_json()"
_NO_EVAL: Final = (
    "runs its own expression evaluator with attribute access; use boolean masks, e.g. "
    "df[(df['price'] > 10) & (df['region'] == 'EU')], and plain column arithmetic"
)
_PLOTS: Final = "plots render through matplotlib to files; print numbers or to_string()"

_REFUSED: Final = {
    "to_pickle": _PICKLE,
    "to_parquet": _NO_FILES,
    "to_feather": _NO_FILES,
    "to_orc": _NO_FILES,
    "to_hdf": _NO_FILES,
    "to_excel": _NO_FILES,
    "to_stata": _NO_FILES,
    "to_sql": "writes to databases",
    "to_clipboard": "runs a clipboard program",
    "eval": _NO_EVAL,
    "query": _NO_EVAL,
    "hist": _PLOTS,
    "boxplot": _PLOTS,
}
"""Methods of DataFrame/Series (and their bases) that always refuse."""

_REFUSED_PROPERTIES: Final = {
    "plot": _PLOTS,
    "style": "renders through jinja2 templates and writes files; use to_string() or to_html()",
}

_TEXT_WRITERS: Final = (
    "to_csv",
    "to_json",
    "to_string",
    "to_html",
    "to_markdown",
    "to_latex",
    "to_xml",
)
"""Methods that return text without a path, and write a file with one."""

_STRING_DISPATCH: Final = (
    ("pandas.core.apply", "Apply", "_apply_str", 2),
    ("pandas.core.groupby.generic", "SeriesGroupBy", "aggregate", 1),
    ("pandas.core.groupby.generic", "DataFrameGroupBy", "aggregate", 1),
    ("pandas.core.groupby.generic", "SeriesGroupBy", "filter", 1),
    ("pandas.core.groupby.generic", "DataFrameGroupBy", "_define_paths", 1),
    ("pandas.core.groupby.groupby", "GroupBy", "apply", 1),
    ("pandas.core.groupby.groupby", "GroupBy", "_transform", 1),
    ("pandas.core.resample", "Resampler", "aggregate", 1),
    ("pandas.core.window.rolling", "BaseWindow", "aggregate", 1),
)
"""(module, class, method, index of the ``func`` argument) where pandas looks a method up
by a name the snippet gave."""


def check_method_name(func: Any) -> None:
    """Raise when ``func`` names a method pandas must not look up for the snippet.

    Raises:
        PolicyViolation: A private or special name, or a refused method.
    """
    if isinstance(func, str):
        names: tuple[Any, ...] = (func,)
    elif isinstance(func, list | tuple):
        names = tuple(func)
    elif isinstance(func, dict):
        names = tuple(func.values())
    else:
        return
    for name in names:
        if isinstance(name, list | tuple):
            for inner in name:
                check_method_name(inner)
            continue
        if not isinstance(name, str):
            continue
        if name.startswith("_"):
            raise PolicyViolation(
                f"method name {name!r} is not allowed: pandas looks names up on the object, "
                "and private and special attributes are off limits"
            )
        reason = _REFUSED.get(name) or _REFUSED_PROPERTIES.get(name)
        if reason is not None:
            raise PolicyViolation(f"{name!r} is not available in the sandbox: {reason}")


def _refusing(owner: type, name: str, reason: str) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise PolicyViolation(
            f"{owner.__name__}.{name}() is not available in the sandbox: {reason}"
        )

    refused.__name__ = refused.__qualname__ = name
    return refused


def _text_only(owner: type, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def writer(self: Any, *args: Any, **kwargs: Any) -> Any:
        target = args[0] if args else None
        for key in ("path_or_buf", "buf", "path", "excel_writer"):
            if key in kwargs:
                target = kwargs[key]
        if target is not None and not isinstance(target, io.StringIO | io.BytesIO):
            raise PolicyViolation(
                f"{owner.__name__}.{name}() with a path is not available in the sandbox "
                f"(it writes files); call it without one to get the text, e.g. "
                f"text = df.{name}(), or pass an io.StringIO"
            )
        return method(self, *args, **kwargs)

    return writer


def _name_checked(method: Callable[..., Any], index: int) -> Callable[..., Any]:
    @functools.wraps(method)
    def checked(*args: Any, **kwargs: Any) -> Any:
        check_method_name(
            kwargs["func"] if "func" in kwargs else args[index] if len(args) > index else None
        )
        return method(*args, **kwargs)

    return checked


def harden_pandas() -> None:
    """Patch pandas' classes in this process (idempotent). Call before snippets run.

    Also lets snippets set public attributes of DataFrame, Series and Index instances
    (``df.columns = [...]``, ``s.name = "total"``), as pandas code does; private and
    special names stay refused by the write guard.
    """
    pd: Any = importlib.import_module("pandas")
    if getattr(pd, "_ptcbox_hardened", False):
        return
    generic = importlib.import_module("pandas.core.generic")
    owners = (generic.NDFrame, pd.DataFrame, pd.Series)
    for owner in owners:
        for name, reason in _REFUSED.items():
            if name in owner.__dict__:
                setattr(owner, name, _refusing(owner, name, reason))
        for name, reason in _REFUSED_PROPERTIES.items():
            if name in owner.__dict__:
                setattr(owner, name, property(_refusing(owner, name, reason)))
        for name in _TEXT_WRITERS:
            method = owner.__dict__.get(name)
            if callable(method):
                setattr(owner, name, _text_only(owner, name, method))
    for module_name, class_name, method_name, index in _STRING_DISPATCH:
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError):
            continue
        method = cls.__dict__.get(method_name)
        if callable(method):
            checked = _name_checked(method, index)
            setattr(cls, method_name, checked)
            if method_name == "aggregate" and cls.__dict__.get("agg") is method:
                cls.agg = checked
    for cls in (pd.DataFrame, pd.Series, pd.Index):
        allow_instance_writes(cls)  # df.columns = [...], s.name = "x": public names only
    pd._ptcbox_hardened = True

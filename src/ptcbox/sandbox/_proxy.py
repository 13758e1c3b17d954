"""Read-only module proxies: what ``import json`` gives a snippet instead of the module."""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

from ptcbox.errors import PolicyViolation

__all__ = ["REFUSED_ATTRIBUTES", "Dynamic", "ModuleProxy", "freeze", "make_proxy"]

REFUSED_ATTRIBUTES = [0]
"""Reads, in this process, of public module attributes a view withholds (``typing.
get_overloads``, ``json.decoder``): refusals, which retire a reused worker even when the
snippet catches the ``AttributeError`` (see ``runtimes/subprocess/worker/_reuse.py``)."""


class ModuleProxy:
    """Base of the read-only stand-ins for allowed modules.

    Each proxy is the only instance of its own class, whose class attributes are the
    module's public, non-module attributes (functions are wrapped in ``staticmethod`` so
    they do not bind). Lookups are as fast as on a module; assignment raises; the real
    module object is never reachable from it.
    """

    __slots__ = ()
    # set per proxy class by make_proxy (no annotations: they would add a mutable dict)
    _ptc_module_name = "?"
    _ptc_excluded = types.MappingProxyType[str, str]({})
    _ptc_real_names = frozenset[str]()

    def __setattr__(self, name: str, value: Any) -> None:
        raise PolicyViolation(
            f"module {self._ptc_module_name!r} is read-only in the sandbox (cannot set {name!r})"
        )

    def __delattr__(self, name: str) -> None:
        raise PolicyViolation(
            f"module {self._ptc_module_name!r} is read-only in the sandbox (cannot delete {name!r})"
        )

    def __getattr__(self, name: str) -> Any:
        module = self._ptc_module_name
        reason = self._ptc_excluded.get(name)
        if reason is not None:
            REFUSED_ATTRIBUTES[0] += 1
            raise AttributeError(f"{module}.{name} is not available in the sandbox: {reason}")
        if name in self._ptc_real_names:
            if not name.startswith("_"):  # not the import system's probes (__path__ ...)
                REFUSED_ATTRIBUTES[0] += 1
            raise AttributeError(
                f"{module}.{name} is not available in the sandbox (modules and private "
                "attributes of modules are not exposed)"
            )
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"<module {self._ptc_module_name!r} (read-only sandbox view)>"

    def __reduce__(self) -> Any:
        raise TypeError(f"cannot pickle module {self._ptc_module_name!r}")


def freeze(value: Any) -> Any:
    """Immutable copies of mutable containers a module exposes (sets, lists, dicts)."""
    if type(value) is set:
        return frozenset(value)
    if type(value) is list:
        return tuple(value)
    if type(value) is dict:
        return types.MappingProxyType(dict(value))
    return value


class Dynamic:
    """A module attribute read afresh on each access (``sys.stdout`` after a
    ``redirect_stdout``): ``get()`` returns its current value."""

    __slots__ = ("get",)

    def __init__(self, get: Any) -> None:
        self.get = get


def _static(value: Any) -> Any:
    if type(value) is Dynamic:
        getter = value.get
        return property(lambda _self: getter())
    if isinstance(value, type):
        return value
    if hasattr(type(value), "__get__"):
        return staticmethod(value)
    return value


def make_proxy(
    name: str,
    attrs: Mapping[str, Any],
    *,
    excluded: Mapping[str, str] | None = None,
    real_names: frozenset[str] = frozenset(),
    module: types.ModuleType | None = None,
) -> ModuleProxy:
    """Build the read-only proxy of module ``name`` exposing ``attrs``.

    Args:
        name: The module's dotted name.
        attrs: Attribute name -> value; must not contain modules.
        excluded: Attribute name -> reason, for a clear error on access.
        real_names: Names the real module has (for "not available" errors).
        module: The real module, whose string ``__doc__`` and ``__version__`` the proxy
            carries (``np.__version__``); its other dunders (``__file__``, a host path;
            ``__spec__``/``__loader__``, the import machinery) are never copied.
    """
    ns: dict[str, Any] = {"__slots__": (), "__name__": name}
    for meta in ("__doc__", "__version__"):
        value = getattr(module, meta, None)
        if isinstance(value, str):
            ns[meta] = str(value)  # a plain str, never a host subclass
    for key, value in attrs.items():
        if isinstance(value, types.ModuleType):
            raise TypeError(f"a module proxy cannot hold module {key!r}")
        ns[key] = _static(value)
    ns["_ptc_module_name"] = name
    ns["_ptc_excluded"] = types.MappingProxyType(dict(excluded or {}))
    ns["_ptc_real_names"] = real_names
    cls = type(f"module:{name}", (ModuleProxy,), ns)
    cls.__module__ = "ptcbox.sandbox"
    proxy: ModuleProxy = cls()
    return proxy

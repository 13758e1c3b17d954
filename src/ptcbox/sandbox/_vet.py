"""Module views vetted by object identity (F4), and without metaclasses (F2).

Modules re-export each other's objects: ``uuid.Enum`` is ``enum.Enum``, ``statistics.mul``
is ``operator.mul``, ``uuid.bytes_`` is ``bytes``, ``dataclasses.FunctionType`` is
``types.FunctionType``, ``typing.abstractmethod`` is ``abc.abstractmethod``. Whatever the
sandbox does to an object where it comes from (replace it, leave it out) must hold wherever
it shows up, so every view's attributes are looked up here by identity:

* builtins: the sandbox's version (``bytes`` -> the size-checked one), or left out when the
  sandbox has none (``eval``, ``open`` ...);
* objects a module spec replaces or leaves out: the spec's replacement (built for the same
  limits), or left out (also when the replacement is per-execution state such as
  ``random``'s generator and the view is shared);
* objects defined by an excluded module (``types``, ``os``, ``inspect``, ``weakref`` ...):
  left out;
* metaclasses (``typing.ABCMeta``, ``typing.NamedTupleMeta`` ...): left out, whatever their
  home: calling one is a 3-argument ``type()``.
"""

from __future__ import annotations

import builtins
import sys
import threading
import types
from collections.abc import Callable, Mapping
from typing import Any, Final

from ptcbox.sandbox._limits import Limits
from ptcbox.sandbox._specbase import Attrs, ModuleContext, Spec

__all__ = ["METACLASS_REASON", "SpecCache", "vet"]

METACLASS_REASON: Final = (
    "a metaclass, which is not available in the sandbox (calling it builds a class from "
    "arbitrary, also special, names); use a class statement"
)

_C_TWINS: Final[dict[str, tuple[str, ...]]] = {
    "os": ("posix", "nt"),
    "io": ("_io",),
    "threading": ("_thread",),
    "socket": ("_socket",),
    "pickle": ("_pickle",),
    "ssl": ("_ssl",),
    "signal": ("_signal",),
    "warnings": ("_warnings",),
    "weakref": ("_weakref", "_weakrefset"),
    "ctypes": ("_ctypes",),
    "ast": ("_ast",),
    "multiprocessing": ("_multiprocessing",),
}
"""Excluded modules whose objects are defined in C modules of another name."""

_ABSENT: Final = object()
_lock = threading.Lock()
_homes: dict[frozenset[str], dict[int, tuple[Any, str, str]]] = {}
_forbidden: dict[tuple[str, ...], dict[int, tuple[Any, str]]] = {}


def _probe_sleep(seconds: float) -> None:  # pragma: no cover - never called
    pass


class SpecCache:
    """Spec outputs per (module, limits, builtins), so a view and every view re-exporting
    its objects get the very same replacements (per-execution specs are never cached).

    Args:
        specs: Module name -> spec builder.
        per_execution: Modules whose spec output is per execution.
    """

    def __init__(self, specs: Mapping[str, Spec], per_execution: frozenset[str]) -> None:
        self.specs = specs
        self.per_execution = per_execution
        self._cache: dict[tuple[Any, ...], tuple[Attrs, dict[str, str], Mapping[str, Any]]] = {}

    def cacheable(self, home: str, ctx: ModuleContext) -> bool:
        """False for specs whose output depends on the execution."""
        return home not in self.per_execution and not (home == "time" and ctx.sleep is not None)

    def get(self, home: str, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
        """``spec(module, ctx)`` for module ``home`` (imported)."""
        module = sys.modules.get(home) or __import__(home)
        if not self.cacheable(home, ctx):
            return self.specs[home](module, ctx)
        lim = ctx.limits
        key = (home, lim.max_int_bits, lim.max_repeat_bytes, id(ctx.builtins), ctx.own_process)
        with _lock:
            hit = self._cache.get(key)
            if hit is None or hit[2] is not ctx.builtins:
                attrs, excluded = self.specs[home](module, ctx)
                hit = (attrs, excluded, ctx.builtins)
                self._cache[key] = hit
        return hit[0], hit[1]

    def homes(
        self, ctx: ModuleContext, excluded_for: Callable[[str], dict[str, str]]
    ) -> dict[int, tuple[Any, str, str]]:
        """id -> (object, home module, name) for every object a loaded spec changes.

        Which names a spec changes does not depend on the limits; the probe has a sleep
        hook and ``ctx``'s builtins, so ``time.sleep`` and ``fractions.Fraction`` count.
        """
        loaded = frozenset(h for h in self.specs if h in sys.modules)
        with _lock:
            table = _homes.get(loaded)
        if table is not None:
            return table
        probe = ModuleContext(Limits(1 << 20, 1 << 20), _probe_sleep, ctx.builtins)
        table = {}
        for home in sorted(loaded):
            module = sys.modules[home]
            attrs, excluded = self.specs[home](module, probe)
            excluded = {**excluded_for(home), **excluded}
            for name, real in vars(module).items():
                if name.startswith("_") or not callable(real) or isinstance(real, types.ModuleType):
                    continue
                if not _homed_in(real, home):
                    continue  # a re-export (shlex.deque): its home module decides
                if name in excluded or attrs.get(name, _ABSENT) is not real:
                    table.setdefault(id(real), (real, home, name))
        with _lock:
            _homes[loaded] = table
        return table


def _homed_in(value: Any, home: str) -> bool:
    """False when ``value`` is defined by another public module (a re-export)."""
    where = getattr(value, "__module__", None)
    if type(where) is not str or where == home or where.startswith(("_", home + ".")):
        return True
    return where == "builtins" and home == "builtins"


def _defined_in(value: Any, module: str) -> bool:
    home = getattr(value, "__module__", None)
    if type(home) is not str:
        return False
    return home == module or home.startswith(module + ".") or home in _C_TWINS.get(module, ())


_names_cache: dict[int, tuple[Mapping[str, str], tuple[str, ...]]] = {}


def _module_names(excluded: Mapping[str, str]) -> tuple[str, ...]:
    """The whole modules among the exclusions (not ``"module.attr"``, not ``builtins``)."""
    hit = _names_cache.get(id(excluded))
    if hit is None or hit[0] is not excluded:
        names = tuple(m for m in excluded if m.isidentifier() and m != "builtins")
        hit = _names_cache[id(excluded)] = (excluded, names)
    return hit[1]


def _forbidden_table(excluded_modules: tuple[str, ...]) -> dict[int, tuple[Any, str]]:
    """id -> (object, excluded module) for objects defined by loaded excluded modules."""
    loaded = tuple(m for m in excluded_modules if m in sys.modules)
    with _lock:
        table = _forbidden.get(loaded)
    if table is not None:
        return table
    plain = {id(v) for v in vars(builtins).values()}
    table = {}
    for name in loaded:
        for value in list(vars(sys.modules[name]).values()):
            if not callable(value) or id(value) in plain:
                continue
            if name == "types" or _defined_in(value, name):
                table.setdefault(id(value), (value, name))
    with _lock:
        _forbidden[loaded] = table
    return table


_builtin_tables: dict[int, tuple[Mapping[str, Any], dict[int, Any]]] = {}


def _builtin_table(sandbox: Mapping[str, Any], reasons: Mapping[str, str]) -> dict[int, Any]:
    """id(real builtin) -> (real, sandbox replacement or None, reason) where they differ."""
    hit = _builtin_tables.get(id(sandbox))
    if hit is not None and hit[0] is sandbox:
        return hit[1]
    table: dict[int, Any] = {}
    for name, real in vars(builtins).items():
        if not callable(real):
            continue
        mine = sandbox.get(name)
        if mine is real:
            continue
        reason = reasons.get(name, "a builtin the sandbox does not hand out")
        table.setdefault(id(real), (real, mine, reason))
    with _lock:
        if len(_builtin_tables) > 64:  # one per limits pair in use; bounded anyway
            _builtin_tables.clear()
        _builtin_tables[id(sandbox)] = (sandbox, table)
    return table


def _plan(
    specs: SpecCache,
    ctx: ModuleContext,
    excluded_modules: Mapping[str, str],
    excluded_for: Callable[[str], dict[str, str]],
    builtin_reasons: Mapping[str, str],
) -> dict[int, tuple[Any, str, Any, Any]]:
    """id -> (object, kind, a, b) from the three identity tables (one lookup per attribute):
    ``("builtin", replacement or None, reason)``, ``("home", module, name)``,
    ``("forbidden", module, None)``."""
    homes = specs.homes(ctx, excluded_for)
    forbidden = _forbidden_table(_module_names(excluded_modules))
    builtin = _builtin_table(ctx.builtins, builtin_reasons) if ctx.builtins else {}
    key = (id(homes), id(forbidden), id(builtin))
    hit = _plans.get(key)
    if hit is not None:
        was = hit[0]
        if was[0] is homes and was[1] is forbidden and was[2] is builtin:
            return hit[1]
    plan: dict[int, tuple[Any, str, Any, Any]] = {}
    for ident, (obj, module) in forbidden.items():
        plan[ident] = (obj, "forbidden", module, None)
    for ident, (obj, home, name) in homes.items():
        plan[ident] = (obj, "home", home, name)
    for ident, (obj, mine, reason) in builtin.items():
        plan[ident] = (obj, "builtin", mine, reason)
    with _lock:
        if len(_plans) > 64:
            _plans.clear()
        _plans[key] = ((homes, forbidden, builtin), plan)
    return plan


_plans: dict[tuple[int, int, int], tuple[Any, dict[int, tuple[Any, str, Any, Any]]]] = {}


def vet(
    name: str,
    attrs: Attrs,
    ctx: ModuleContext,
    *,
    specs: SpecCache,
    shared: bool,
    excluded_modules: Mapping[str, str],
    excluded_for: Callable[[str], dict[str, str]],
    builtin_reasons: Mapping[str, str],
) -> tuple[Attrs, dict[str, str]]:
    """Apply the identity rules (module docstring) to view ``name``'s ``attrs``.

    Returns:
        The vetted attributes and the reasons for those left out.
    """
    plan = _plan(specs, ctx, excluded_modules, excluded_for, builtin_reasons)
    out: Attrs = {}
    dropped: dict[str, str] = {}
    for key, value in attrs.items():
        if isinstance(value, type) and issubclass(value, type):
            dropped[key] = METACLASS_REASON
            continue
        entry = plan.get(id(value))
        if entry is None or entry[0] is not value:
            out[key] = value
            continue
        _, kind, a, b = entry
        if kind == "builtin":
            if a is None:
                dropped[key] = f"it is the builtin {value.__name__!r}: {b}"
            else:
                out[key] = a
        elif kind == "forbidden" and a == name:
            out[key] = value  # a confined module's own view: its spec chose the names
        elif kind == "forbidden":
            dropped[key] = f"it comes from {a!r}: {excluded_modules.get(a, 'excluded')}"
        elif (a, b) == (name, key):
            out[key] = value
        elif shared and not specs.cacheable(a, ctx):
            dropped[key] = f"re-exported from {a} (per-execution there); use {a}.{b}"
        else:
            home_attrs, home_excluded = specs.get(a, ctx)
            why = home_excluded.get(b) or excluded_for(a).get(b)
            if b in home_attrs and why is None:
                out[key] = home_attrs[b]
            else:
                dropped[key] = f"it is {a}.{b}: {why or 'not available in the sandbox'}"
    return out, dropped

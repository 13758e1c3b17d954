"""Restricted versions of allowed modules whose full surface is unsafe or shared state."""

from __future__ import annotations

import enum
import functools
import math
import random as _random
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._limits import Limits, as_index
from ptcbox.sandbox._owner import register_class, require_owned
from ptcbox.sandbox._proxy import freeze

__all__ = ["MODULE_SPECS", "ModuleContext"]

Attrs = dict[str, Any]
Spec = Callable[[types.ModuleType, "ModuleContext"], tuple[Attrs, dict[str, str]]]


@dataclass(frozen=True, slots=True)
class ModuleContext:
    """What restricted module builders need: the limits and the sleep hook."""

    limits: Limits
    sleep: Callable[[float], None] | None


def _ix(value: Any) -> int:
    """An int argument, normalised once (``__index__`` read a single time).

    Raises:
        TypeError: ``value`` is not an integer.
    """
    n = as_index(value)
    if n is None:
        raise TypeError(f"{type(value).__name__!r} object cannot be interpreted as an integer")
    return n


def _public(module: types.ModuleType, skip: set[str] | frozenset[str] = frozenset()) -> Attrs:
    return {
        k: freeze(v)
        for k, v in vars(module).items()
        if not k.startswith("_") and k not in skip and not isinstance(v, types.ModuleType)
    }


def _only(module: types.ModuleType, names: tuple[str, ...]) -> Attrs:
    return {n: getattr(module, n) for n in names if hasattr(module, n)}


# -- math -------------------------------------------------------------------------------


def _math(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits
    attrs = _public(module)

    def factorial(n: int, /) -> int:
        """Return n factorial; results over max_int_bits are refused."""
        m = _ix(n)
        if m > 20:
            lim.int_bits("math.factorial", math.lgamma(m + 1) / math.log(2))
        return math.factorial(m)

    def comb(n: int, k: int, /) -> int:
        """Number of ways to choose k items from n; results over max_int_bits are refused."""
        nn, kk = _ix(n), _ix(k)
        if nn > 64 and 0 <= kk <= nn:
            lim.int_bits("math.comb", min(nn, min(kk, nn - kk) * math.log2(nn)))
        return math.comb(nn, kk)

    def perm(n: int, k: int | None = None, /) -> int:
        """Number of ways to arrange k of n items; results over max_int_bits are refused."""
        nn = _ix(n)
        kk = nn if k is None else _ix(k)
        if nn > 20 and 0 < kk <= nn:
            lim.int_bits("math.perm", kk * math.log2(nn))
        return math.perm(nn, kk)

    def prod(iterable: Any, /, *, start: Any = 1) -> Any:
        """Product of the items; integer results over max_int_bits are refused."""
        items = [int.__index__(x) if isinstance(x, int) else x for x in iterable]
        bits = sum(x.bit_length() for x in items if type(x) is int)
        if isinstance(start, int):
            start = int.__index__(start)
            bits += start.bit_length()
        lim.int_bits("math.prod", bits)
        return math.prod(items, start=start)

    def lcm(*integers: int) -> int:
        """Least common multiple; results over max_int_bits are refused."""
        values = [_ix(x) for x in integers]
        lim.int_bits("math.lcm", sum(x.bit_length() for x in values))
        return math.lcm(*values)

    attrs.update(factorial=factorial, comb=comb, perm=perm, prod=prod, lcm=lcm)
    return attrs, {}


# -- operator ---------------------------------------------------------------------------


def _operator(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits
    attrs = _public(module, {"attrgetter", "methodcaller"})
    attrs.update(
        pow=lim.pow,
        ipow=lim.ipow,
        mul=lim.mul,
        imul=lim.imul,
        lshift=lim.lshift,
        ilshift=lim.ilshift,
        mod=lim.mod,
        imod=lim.imod,
    )
    return attrs, {}


# -- random: one generator per execution -----------------------------------------------


def _random_classes(lim: Limits) -> tuple[type, type]:
    class Random(_random.Random):
        """random.Random with getrandbits/randbytes capped by the sandbox limits."""

        def getrandbits(self, k: int, /) -> int:
            kk = _ix(k)
            lim.int_bits("random.getrandbits", kk)
            return super().getrandbits(kk)

        def randbytes(self, n: int) -> bytes:
            nn = _ix(n)
            lim.repeat_bytes("random.randbytes", nn)
            return super().randbytes(nn)

    class SystemRandom(_random.SystemRandom):
        """random.SystemRandom with getrandbits/randbytes capped by the sandbox limits."""

        def getrandbits(self, k: int, /) -> int:
            kk = _ix(k)
            lim.int_bits("random.getrandbits", kk)
            return super().getrandbits(kk)

        def randbytes(self, n: int) -> bytes:
            nn = _ix(n)
            lim.repeat_bytes("random.randbytes", nn)
            return super().randbytes(nn)

    for cls in (Random, SystemRandom):
        cls.__module__ = "random"
    return Random, SystemRandom


def _random_module(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    random_cls, system_cls = _random_classes(ctx.limits)
    inst = random_cls()
    attrs = _public(module)
    host_inst = getattr(module, "_inst", None)
    for name, value in list(attrs.items()):
        # module-level functions are bound methods (Python or builtin) of the host's
        # hidden generator: rebind them to this execution's generator
        if host_inst is not None and getattr(value, "__self__", None) is host_inst:
            attrs[name] = getattr(inst, name)
    attrs.update(Random=random_cls, SystemRandom=system_cls)
    return attrs, {}


# -- time -------------------------------------------------------------------------------

_TIME_NAMES = (
    "time",
    "time_ns",
    "monotonic",
    "monotonic_ns",
    "perf_counter",
    "perf_counter_ns",
    "process_time",
    "process_time_ns",
    "thread_time",
    "thread_time_ns",
    "sleep",
    "strftime",
    "strptime",
    "gmtime",
    "localtime",
    "mktime",
    "asctime",
    "ctime",
    "struct_time",
    "timezone",
    "altzone",
    "daylight",
    "tzname",
    "get_clock_info",
)


def _time(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = _only(module, _TIME_NAMES)
    attrs = {k: freeze(v) for k, v in attrs.items()}
    if ctx.sleep is not None:
        attrs["sleep"] = ctx.sleep
    excluded = {
        k: "not exposed in the sandbox (clock setting and low-level clock access)"
        for k in vars(module)
        if not k.startswith("_") and k not in attrs
    }
    return attrs, excluded


# -- asyncio ----------------------------------------------------------------------------

_ASYNCIO_NAMES = (
    "gather",
    "sleep",
    "wait_for",
    "wait",
    "run",
    "timeout",
    "create_task",
    "as_completed",
    "Semaphore",
    "BoundedSemaphore",
    "Lock",
    "Event",
    "Queue",
    "QueueEmpty",
    "QueueFull",
    "TimeoutError",
    "CancelledError",
    "InvalidStateError",
    "FIRST_COMPLETED",
    "FIRST_EXCEPTION",
    "ALL_COMPLETED",
    "iscoroutine",
)


def _asyncio(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = _only(module, _ASYNCIO_NAMES)
    reason = (
        "not exposed in the sandbox: it reaches the event loop, threads, subprocesses or sockets"
    )
    excluded = {k: reason for k in vars(module) if not k.startswith("_") and k not in attrs}
    return attrs, excluded


# -- decimal ----------------------------------------------------------------------------


def _decimal(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits
    attrs = _public(module)
    real_context = module.Context
    real_local = module.localcontext

    def Context(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 - mirrors the class
        """decimal.Context(prec=None, ...) -- sandboxed: precision capped by max_int_bits."""
        if args:
            args = (lim.check_decimal_precision(args[0]), *args[1:])
        elif kwargs.get("prec") is not None:
            kwargs["prec"] = lim.check_decimal_precision(kwargs["prec"])
        return real_context(*args, **kwargs)

    def localcontext(ctx_: Any = None, **kwargs: Any) -> Any:
        """decimal.localcontext(ctx=None, **kwargs) -- sandboxed: precision capped."""
        if kwargs.get("prec") is not None:
            kwargs["prec"] = lim.check_decimal_precision(kwargs["prec"])
        if ctx_ is not None:
            lim.check_decimal_precision(ctx_.prec)
        return real_local(ctx_, **kwargs)

    attrs.update(Context=Context, localcontext=localcontext)
    return attrs, {}


# -- functools / dataclasses / typing: decorators that change their argument ------------


def _functools(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = _public(module)

    def update_wrapper(wrapper: Any, wrapped: Any, *args: Any, **kwargs: Any) -> Any:
        """functools.update_wrapper -- sandboxed: ``wrapper`` must be the snippet's own."""
        require_owned(wrapper, "functools.update_wrapper")
        return functools.update_wrapper(wrapper, wrapped, *args, **kwargs)

    def wraps(
        wrapped: Any,
        assigned: Any = functools.WRAPPER_ASSIGNMENTS,
        updated: Any = functools.WRAPPER_UPDATES,
    ) -> Callable[[Any], Any]:
        """functools.wraps -- sandboxed: the decorated function must be the snippet's own."""

        def decorator(wrapper: Any) -> Any:
            return update_wrapper(wrapper, wrapped, assigned, updated)

        return decorator

    def total_ordering(cls: Any) -> Any:
        """functools.total_ordering -- sandboxed: only for the snippet's own classes."""
        require_owned(cls, "functools.total_ordering")
        return functools.total_ordering(cls)

    attrs.update(update_wrapper=update_wrapper, wraps=wraps, total_ordering=total_ordering)
    return attrs, {}


def _dataclasses(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = _public(module)
    real = module.dataclass

    def dataclass(cls: Any = None, /, **kwargs: Any) -> Any:
        """dataclasses.dataclass -- sandboxed: only for the snippet's own classes."""

        def wrap(c: Any) -> Any:
            require_owned(c, "@dataclass")
            result = real(c, **kwargs)
            register_class(result)  # slots=True builds a new class
            return result

        return wrap if cls is None else wrap(cls)

    attrs["dataclass"] = dataclass
    return attrs, {}


def _typing(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = _public(module, {"re", "io"})
    real_checkable = module.runtime_checkable
    real_final = module.final

    def runtime_checkable(cls: Any) -> Any:
        """typing.runtime_checkable -- sandboxed: only for the snippet's own protocols."""
        require_owned(cls, "@runtime_checkable")
        return real_checkable(cls)

    def final(f: Any) -> Any:
        """typing.final -- sandboxed: only for the snippet's own classes and functions."""
        require_owned(f, "@final")
        return real_final(f)

    attrs.update(runtime_checkable=runtime_checkable, final=final)
    return attrs, {"re": "deprecated alias module", "io": "deprecated alias module"}


def _string(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    return _public(module, {"Formatter"}), {}


def _enum_member_names(names: Any) -> list[Any]:
    if isinstance(names, str):
        return names.replace(",", " ").split()
    if isinstance(names, Mapping):
        return list(names)
    out: list[Any] = []
    for item in names:
        out.append(item if isinstance(item, str) else item[0])
    return out


def _checked_create(
    cls: Any, class_name: Any, names: Any, /, *, module: Any = None, **kwargs: Any
) -> Any:
    """The Enum functional API (``Enum("Color", "RED GREEN")``) without special names.

    Left alone it turns ``{"__del__": f}`` or ``{"__match_args__": ...}`` into class
    attributes; ``__del__`` would run snippet code at garbage collection.
    """
    if not isinstance(names, str):
        names = list(names.items()) if isinstance(names, Mapping) else list(names)
    for name in _enum_member_names(names):
        if not isinstance(name, str) or name.startswith("_"):
            raise PolicyViolation(
                f"enum member name {name!r} is not allowed (names starting with '_')"
            )
    return enum.EnumType._create_(  # type: ignore[attr-defined]
        cls, class_name, names, module=module or "__main__", **kwargs
    )


_ENUM_BASES = ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag")


@functools.cache
def _enum_classes() -> dict[str, type]:
    """Sandbox subclasses of the Enum bases whose functional API checks member names."""
    out: dict[str, type] = {}
    for name in _ENUM_BASES:
        real = getattr(enum, name)
        cls = enum.EnumType(name, (real,), enum.EnumType.__prepare__(name, (real,)))
        type.__setattr__(cls, "_create_", classmethod(_checked_create))
        type.__setattr__(cls, "__module__", "enum")
        out[name] = cls
    return out


def _enum(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = _public(module, {"EnumType", "EnumMeta", "global_enum", "ReprEnum"})
    attrs.update(_enum_classes())
    return attrs, {}


def _itertools(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits
    attrs = _public(module)
    real_product = module.product

    def product(*iterables: Any, repeat: int = 1) -> Any:
        """itertools.product -- sandboxed: ``repeat`` copies of the pools are size-checked."""
        times = _ix(repeat)
        if times > 1:
            lim.repeat_bytes("itertools.product", times * max(len(iterables), 1) * 8)
        return real_product(*iterables, repeat=times)

    attrs["product"] = product
    return attrs, {}


def _hashlib(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    return _public(module, {"pbkdf2_hmac", "scrypt", "file_digest"}), {}


MODULE_SPECS: dict[str, Spec] = {
    "math": _math,
    "operator": _operator,
    "random": _random_module,
    "time": _time,
    "asyncio": _asyncio,
    "decimal": _decimal,
    "functools": _functools,
    "dataclasses": _dataclasses,
    "typing": _typing,
    "string": _string,
    "enum": _enum,
    "itertools": _itertools,
    "hashlib": _hashlib,
}
"""Module name -> builder of its restricted attributes (others expose all public,
non-module attributes, with mutable containers frozen)."""

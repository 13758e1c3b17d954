"""Restricted versions of allowed modules whose full surface is unsafe or shared state."""

from __future__ import annotations

import contextvars
import math
import random as _random
import types
from typing import Any

from ptcbox.sandbox._asyncloop import get_running_loop
from ptcbox.sandbox._cpuclocks import CPU_START, cpu_clocks
from ptcbox.sandbox._dataspecs import DATA_SPECS
from ptcbox.sandbox._getters import guarded_getters
from ptcbox.sandbox._limits import Limits
from ptcbox.sandbox._loops import run as snippet_run
from ptcbox.sandbox._modspecs_io import IO_SPECS, PER_EXECUTION_IO
from ptcbox.sandbox._modspecs_log import LOG_SPECS, PER_EXECUTION_LOG
from ptcbox.sandbox._modspecs_more import MORE_SPECS, PER_EXECUTION_MORE
from ptcbox.sandbox._modspecs_text import TEXT_SPECS
from ptcbox.sandbox._modspecs_types import TYPE_SPECS
from ptcbox.sandbox._proxy import freeze
from ptcbox.sandbox._specbase import Attrs, ModuleContext, Spec
from ptcbox.sandbox._specbase import ix as _ix
from ptcbox.sandbox._specbase import only as _only
from ptcbox.sandbox._specbase import public as _public

__all__ = ["MODULE_SPECS", "PER_EXECUTION", "ModuleContext"]


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
    attrs.update(guarded_getters(ctx.builtins.get("_getattr_", getattr)))
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
    if ctx.sleep is not None:  # a view of this execution (ThreadRuntime): its own zero,
        # where the pool thread it runs on may have run earlier executions
        attrs["sleep"] = ctx.sleep
        attrs.update(cpu_clocks([module.process_time_ns(), module.thread_time_ns()]))
    else:  # shared by the executions of the process: the zero mark_cpu_start sets
        attrs.update(cpu_clocks(CPU_START))
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
    "TaskGroup",
    "timeout_at",
    "Timeout",
    "shield",
    "Condition",
    "Barrier",
    "BrokenBarrierError",
    "PriorityQueue",
    "LifoQueue",
)


def _asyncio(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = _only(module, _ASYNCIO_NAMES)
    attrs["get_running_loop"] = get_running_loop  # a view: time(), create_task() ...
    attrs["run"] = snippet_run  # reports to the snippet's stderr, not the host's logger
    reason = (
        "not exposed in the sandbox: it reaches the event loop, threads, subprocesses or sockets"
    )
    excluded = {k: reason for k in vars(module) if not k.startswith("_") and k not in attrs}
    return attrs, excluded


# -- decimal ----------------------------------------------------------------------------


_LOCAL_ENTERED: contextvars.ContextVar[None] = contextvars.ContextVar("ptcbox_localcontext")


def _entered_context(manager: Any) -> Any:
    return manager.__enter__()


class _LocalContext:
    """What ``decimal.localcontext()`` gives a snippet: the real manager's new context,
    restored on exit only in the ``contextvars`` context it was entered in.

    The C manager's ``__exit__`` sets its saved context in whatever thread runs it: the
    garbage collector closing a snippet's suspended generator in a host thread (or in a
    later execution) would install the snippet's context there (issue 12). A
    ``ContextVar`` token refuses a reset in another context; the exit then does nothing.
    """

    __slots__ = ("_decimal", "_new", "_saved", "_token")

    def __init__(self, decimal: types.ModuleType, manager: Any) -> None:
        self._decimal = decimal
        # the C manager copies the context when it is made; entering it in a throwaway
        # context hands out that copy without touching the snippet's context
        self._new = contextvars.Context().run(_entered_context, manager)
        self._saved: Any = None
        self._token: contextvars.Token[None] | None = None

    def __enter__(self) -> Any:
        self._saved = self._decimal.getcontext()
        self._token = _LOCAL_ENTERED.set(None)
        self._decimal.setcontext(self._new)
        return self._new

    def __exit__(self, *exc_info: object) -> None:
        token, self._token = self._token, None
        if token is None:
            return
        try:
            _LOCAL_ENTERED.reset(token)
        except ValueError:  # exited in another context: by the collector, elsewhere
            return
        self._decimal.setcontext(self._saved)


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
        """decimal.localcontext(ctx=None, **kwargs) -- sandboxed: precision capped; the
        context is restored only where it was entered (see ``_LocalContext``)."""
        if kwargs.get("prec") is not None:
            kwargs["prec"] = lim.check_decimal_precision(kwargs["prec"])
        if ctx_ is not None:
            lim.check_decimal_precision(ctx_.prec)
        return _LocalContext(module, real_local(ctx_, **kwargs))

    attrs.update(Context=Context, localcontext=localcontext)
    if ctx.own_process:  # a worker process of its own: the thread's context is the run's
        attrs.update(getcontext=module.getcontext, setcontext=module.setcontext)
        attrs.update(DefaultContext=module.DefaultContext)
        return attrs, {}
    shared = "the thread's context is shared with other executions in this process; use "
    shared += "decimal.localcontext(prec=...) (SubprocessRuntime allows getcontext())"
    return attrs, {"getcontext": shared, "setcontext": shared, "DefaultContext": shared}


def _string(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    return _public(module, {"Formatter"}), {}


def _fractions(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    """fractions.Fraction is the sandbox's checked stand-in (see ``SizedConstructor``), the
    same object ``type(Fraction(1))`` answers."""
    attrs = _public(module)
    sized = getattr(ctx.builtins.get("type"), "_ptc_sized", None) or {}
    checked = sized.get(module.Fraction)
    if checked is not None:
        attrs["Fraction"] = checked
    return attrs, {}


def _itertools(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits
    attrs = _public(module)
    real_product = module.product
    real_tee = module.tee

    def product(*iterables: Any, repeat: int = 1) -> Any:
        """itertools.product -- sandboxed: ``repeat`` copies of the pools are size-checked."""
        times = _ix(repeat)
        if times > 1:
            lim.repeat_bytes("itertools.product", times * max(len(iterables), 1) * 8)
        return real_product(*iterables, repeat=times)

    def tee(iterable: Any, n: int = 2, /) -> Any:
        """itertools.tee -- sandboxed: the n iterators are size-checked."""
        count = _ix(n)
        lim.repeat_bytes("itertools.tee", count * 64)
        return real_tee(iterable, count)

    attrs.update(product=product, tee=tee)
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
    "string": _string,
    "itertools": _itertools,
    "fractions": _fractions,
    "hashlib": _hashlib,
    **TYPE_SPECS,
    **TEXT_SPECS,
    **IO_SPECS,
    **MORE_SPECS,
    **LOG_SPECS,
    **DATA_SPECS,
}
"""Module name -> builder of its restricted attributes (others expose all public,
non-module attributes, with mutable containers frozen)."""

PER_EXECUTION: frozenset[str] = frozenset(
    {"random"} | PER_EXECUTION_IO | PER_EXECUTION_MORE | PER_EXECUTION_LOG
)
"""Modules whose view holds per-execution state (built per import hook, never shared)."""

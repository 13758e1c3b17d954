"""Allowed modules as snippets see them, and the guarded ``__import__``."""

from __future__ import annotations

import functools
import importlib
import threading
import types
from collections.abc import Callable, Mapping
from typing import Any, Final

from ptcbox.sandbox._base import base_builtins
from ptcbox.sandbox._builtins import EXCLUDED_BUILTINS
from ptcbox.sandbox._limits import Limits
from ptcbox.sandbox._modspecs import MODULE_SPECS, PER_EXECUTION, ModuleContext
from ptcbox.sandbox._proxy import ModuleProxy, freeze, make_proxy
from ptcbox.sandbox._vet import SpecCache, vet

__all__ = ["EXCLUDED_MODULES", "ImportHook"]

EXCLUDED_MODULES: Final[types.MappingProxyType[str, str]] = types.MappingProxyType(
    {
        "os": "process, file-system and environment access (os.system, os.fork, ...)",
        "sys": "interpreter internals (sys.modules, sys._getframe, sys.setrecursionlimit)",
        "subprocess": "starts processes",
        "importlib": "imports any module, bypassing the allowlist",
        "builtins": "the unguarded builtins (eval, exec, open, __import__)",
        "ctypes": "raw memory access",
        "socket": "network access",
        "io": "file access (io.open)",
        "pathlib": "file-system access",
        "shutil": "file-system access",
        "tempfile": "file-system access",
        "glob": "file-system access",
        "pickle": "unpickling runs arbitrary code",
        "marshal": "builds code objects",
        "inspect": "reaches frames, globals and source of host code",
        "gc": "reaches every object in the process (gc.get_objects)",
        "types": "FunctionType/CodeType build functions from code objects",
        "threading": "starts threads that outlive the time limit",
        "multiprocessing": "starts processes",
        "signal": "changes process-wide signal handlers",
        "weakref": "finalizers run snippet code outside the time limit",
        "traceback": "walks frames of host code",
        "warnings": "changes process-wide warning filters",
        "atexit": "runs code at host exit",
        "code": "an unrestricted interpreter",
        "codeop": "compiles code",
        "ast": "compiles code",
        "dis": "reaches code objects",
        "runpy": "runs modules",
        "pdb": "a debugger with full access",
        "urllib": "network access",
        "http": "network access",
        "ssl": "network access",
        "select": "operating-system handles",
        "asyncio.subprocess": "starts processes",
        "string.Formatter": "get_field() walks attributes of its arguments (GHSA-hp3v-5vw7-fx9w)",
        "operator.attrgetter": "turns a string into attribute access, bypassing the guards",
        "operator.methodcaller": "turns a string into a method call, bypassing the guards",
        "typing.get_type_hints": "evaluates strings as code",
        "typing.ForwardRef": "evaluates strings as code",
        "typing.no_type_check": "changes functions and classes shared with the host",
        "typing.dataclass_transform": "changes functions and classes shared with the host",
        "typing.clear_overloads": "clears a registry shared with the host",
        "typing.reveal_type": "writes to the host's stderr",
        "typing.get_overloads": "reads typing's process-wide overload registry (functions of "
        "the host and of other executions)",
        "typing.no_type_check_decorator": "its decorators change functions shared with the host",
        "typing.ABCMeta": "a metaclass: calling it builds a class from arbitrary (dunder) names",
        "typing.NamedTupleMeta": "a metaclass: calling it builds a class from arbitrary names",
        "collections.UserString": "its methods run str operations (padding, replace, *) in "
        "host code, past the sandbox's size checks; subclass str instead",
        "collections.UserList": "its methods run list repetition in host code, past the "
        "sandbox's size checks; subclass list instead",
        "dataclasses.make_dataclass": "creates classes from a dict of arbitrary (dunder) names",
        "decimal.getcontext": "the thread's context is shared with other executions; use "
        "decimal.localcontext(prec=...)",
        "decimal.setcontext": "changes the thread's context for other executions",
        "decimal.DefaultContext": "shared template context; use decimal.Context(...)",
        "decimal.BasicContext": "shared context; use decimal.Context(...)",
        "decimal.ExtendedContext": "shared context; use decimal.Context(...)",
        "enum.EnumType": "a metaclass builds classes from arbitrary dunder names",
        "enum.EnumMeta": "a metaclass builds classes from arbitrary dunder names",
        "enum.ReprEnum": "its functional API builds classes from arbitrary (dunder) names",
        "enum.global_enum": "writes into the host's __main__ module",
        "hashlib.pbkdf2_hmac": "CPU-hard work in C that the thread runtime cannot interrupt",
        "hashlib.scrypt": "memory-hard work in C that the thread runtime cannot interrupt",
        "hashlib.file_digest": "reads files",
        "time.tzset": "changes the process time zone",
        "time.clock_settime": "sets the system clock",
        "time.clock_settime_ns": "sets the system clock",
        "(metaclasses)": "no module view hands out a metaclass (typing.ABCMeta, EnumType, "
        "...) and type() refuses them: calling one is a 3-argument type()",
        "(re-exports)": "an object re-exported by another module (uuid.Enum, statistics.mul, "
        "uuid.bytes_, dataclasses.FunctionType ...) is replaced or left out as in its home",
        "asyncio (other names)": "only gather, sleep, wait_for, wait, run, timeout, "
        "create_task, as_completed, Semaphore, BoundedSemaphore, Lock, Event, Queue and "
        "their exceptions are exposed: the rest reaches the event loop, threads, "
        "subprocesses or sockets",
    }
)
"""Modules (and attributes of allowed modules, as ``"module.attr"``) a snippet cannot use,
each with the reason. Modules not in the policy's ``allowed_imports`` are refused too."""

_ALWAYS_ALLOWED: Final = frozenset({"__future__"})

_C_INTERNAL_IMPORTS: Final = frozenset({"_strptime"})
"""Private stdlib modules that allowed C functions import by themselves at call time
(``datetime.strptime`` and ``time.strptime`` import ``_strptime`` through the calling
frame's ``__import__``). C's ``PyImport_Import`` passes ``fromlist`` as a ``list``; an
import statement passes ``None`` or a tuple, and snippets cannot call ``__import__``
themselves (a reserved name), so only the C route gets the real module."""
_shared_cache: dict[tuple[Any, ...], ModuleProxy] = {}
_shared_lock = threading.Lock()


def _public_attrs(module: types.ModuleType, excluded: dict[str, str]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for key, value in vars(module).items():
        if key.startswith("_") or key in excluded or isinstance(value, types.ModuleType):
            continue
        attrs[key] = freeze(value)
    return attrs


@functools.cache
def _excluded_in(name: str) -> types.MappingProxyType[str, str]:
    prefix = name + "."
    found = {k[len(prefix) :]: v for k, v in EXCLUDED_MODULES.items() if k.startswith(prefix)}
    return types.MappingProxyType(found)


def _excluded_for(name: str) -> dict[str, str]:
    """The excluded attributes of module ``name`` (a fresh dict)."""
    return dict(_excluded_in(name))


_SPECS: Final = SpecCache(MODULE_SPECS, PER_EXECUTION)


def build_module(
    name: str, ctx: ModuleContext, submodules: dict[str, ModuleProxy], *, shared: bool = True
) -> ModuleProxy:
    """Build the proxy of ``name`` (real module imported in the host on first use).

    ``shared``: the proxy is cached for the process (not per execution).
    """
    module = importlib.import_module(name)
    excluded = _excluded_for(name)
    if name in MODULE_SPECS:
        attrs, extra_excluded = _SPECS.get(name, ctx)
        excluded.update(extra_excluded)
    else:
        attrs = _public_attrs(module, excluded)
    attrs = {k: v for k, v in attrs.items() if k not in excluded}
    attrs, dropped = vet(
        name,
        attrs,
        ctx,
        specs=_SPECS,
        shared=shared,
        excluded_modules=EXCLUDED_MODULES,
        excluded_for=_excluded_for,
        builtin_reasons=EXCLUDED_BUILTINS,
    )
    excluded.update(dropped)
    attrs.update(submodules)
    return make_proxy(
        name, attrs, excluded=excluded, real_names=frozenset(vars(module)) - set(attrs)
    )


class ImportHook:
    """The snippet's ``__import__``: allowlisted modules only, as read-only proxies.

    One hook per execution: modules with per-execution state (``random`` gets its own
    generator, ``time.sleep`` the execution's interruptible sleep) are built per hook;
    the others are shared, immutable and cached for the process.

    Args:
        allowed: The policy's ``allowed_imports``.
        limits: The size limits (for the wrapped ``math``/``operator``/... functions).
        sleep: Replacement for ``time.sleep``, or ``None`` for the real one.
    """

    __slots__ = ("_allowed", "_builtins", "_ctx", "_limits", "_local", "_sleep")

    def __init__(
        self,
        allowed: frozenset[str],
        limits: Limits,
        sleep: Callable[[float], None] | None,
        builtins: Mapping[str, Any] | None = None,
    ) -> None:
        self._allowed = allowed
        self._limits = limits
        self._sleep = sleep
        self._builtins = builtins
        self._ctx: ModuleContext | None = None
        self._local: dict[str, ModuleProxy] = {}

    @property
    def allowed_text(self) -> str:
        """The allowlist, sorted, for error messages."""
        return ", ".join(sorted(self._allowed)) or "(none)"

    @property
    def ctx(self) -> ModuleContext:
        """Built on the first import (most executions import nothing or little)."""
        if self._ctx is None:
            base = self._builtins
            if base is None:  # the sandbox's builtins for these limits (shared, cached)
                base = base_builtins(self._limits.max_int_bits, self._limits.max_repeat_bytes)
            self._ctx = ModuleContext(limits=self._limits, sleep=self._sleep, builtins=base)
        return self._ctx

    def __call__(
        self,
        name: str,
        globals: Any = None,
        locals: Any = None,
        fromlist: Any = (),
        level: int = 0,
    ) -> ModuleProxy:
        if level != 0:
            raise ImportError("relative imports are not allowed in the sandbox", name=name)
        if type(name) is not str:
            raise TypeError("__import__() argument 1 must be str")
        if name in _C_INTERNAL_IMPORTS and type(fromlist) is list and not fromlist:
            return importlib.import_module(name)  # type: ignore[return-value]
        if name not in self._allowed and name not in _ALWAYS_ALLOWED:
            raise self._refused(name)
        target = self._get(name)
        if fromlist:
            for item in fromlist:
                if item == "*":
                    raise ImportError(f"'from {name} import *' is not allowed", name=name)
                if not isinstance(item, str) or item.startswith("_"):
                    raise ImportError(f"cannot import name {item!r} from {name!r}", name=name)
                if not hasattr(target, item):
                    sub = f"{name}.{item}"
                    real = getattr(importlib.import_module(name), item, None)
                    if isinstance(real, types.ModuleType) or sub in EXCLUDED_MODULES:
                        raise self._refused(sub)
                    raise ImportError(f"cannot import name {item!r} from {name!r}", name=name)
            return target
        return self._get(name.partition(".")[0])

    def _refused(self, name: str) -> ImportError:
        reason = EXCLUDED_MODULES.get(name) or EXCLUDED_MODULES.get(name.partition(".")[0])
        why = f" ({reason})" if reason else ""
        return ImportError(
            f"import of {name!r} is not allowed in the sandbox{why}; allowed modules: "
            f"{self.allowed_text}",
            name=name,
        )

    def _submodules(self, name: str) -> dict[str, ModuleProxy]:
        prefix = name + "."
        subs: dict[str, ModuleProxy] = {}
        for other in self._allowed:
            if other.startswith(prefix) and "." not in other[len(prefix) :]:
                subs[other[len(prefix) :]] = self._get(other)
        return subs

    def _get(self, name: str) -> ModuleProxy:
        proxy = self._local.get(name)
        if proxy is not None:
            return proxy
        subs = self._submodules(name)
        if name in self._allowed or name in _ALWAYS_ALLOWED:
            if name in PER_EXECUTION or (name == "time" and self._sleep is not None):
                proxy = build_module(name, self.ctx, subs, shared=False)
            else:
                key = (
                    name,
                    self._limits.max_int_bits,
                    self._limits.max_repeat_bytes,
                    tuple(sorted(subs)),
                )
                with _shared_lock:
                    proxy = _shared_cache.get(key)
                    if proxy is None:
                        proxy = build_module(name, self.ctx, subs)
                        _shared_cache[key] = proxy
        else:
            # a package that is not allowed itself, but has allowed submodules
            proxy = make_proxy(name, subs)
        self._local[name] = proxy
        return proxy

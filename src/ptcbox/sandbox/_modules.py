"""Allowed modules as snippets see them, and the guarded ``__import__``."""

from __future__ import annotations

import builtins
import functools
import importlib
import threading
import types
from collections.abc import Callable, Mapping
from typing import Any, Final

from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._base import base_builtins
from ptcbox.sandbox._builtins import EXCLUDED_BUILTINS
from ptcbox.sandbox._limits import Limits
from ptcbox.sandbox._modspecs import MODULE_SPECS, PER_EXECUTION, ModuleContext
from ptcbox.sandbox._proxy import ModuleProxy, freeze, make_proxy
from ptcbox.sandbox._streams import NULL_STREAMS, Streams
from ptcbox.sandbox._vet import SpecCache, vet

__all__ = ["EXCLUDED_MODULES", "REFUSED_IMPORTS", "AblatedImportHook", "ImportHook"]

REFUSED_IMPORTS = [0]
"""Imports refused in this process so far (a reused worker retires after one)."""

_NO_FILES: Final = "file-system access; get data through the tools (io.StringIO for text)"

EXCLUDED_MODULES: Final[types.MappingProxyType[str, str]] = types.MappingProxyType(
    {
        "os": "no access to the host's operating system (files, processes, environment); get "
        "data through the tools",
        "subprocess": "starts processes; the sandbox runs no programs (ask for a tool instead)",
        "importlib": "imports any module, bypassing the allowlist; use an import statement",
        "builtins": "the unguarded builtins (eval, exec, open, __import__)",
        "ctypes": "raw memory access",
        "socket": "network access; reach services through the tools",
        "pathlib": _NO_FILES,
        "shutil": _NO_FILES,
        "tempfile": _NO_FILES,
        "glob": _NO_FILES,
        "pickle": "unpickling runs arbitrary code; use json",
        "marshal": "builds code objects",
        "inspect": "reaches frames, globals and source of host code",
        "gc": "reaches every object in the process (gc.get_objects)",
        "threading": "starts threads that outlive the time limit",
        "multiprocessing": "starts processes",
        "signal": "changes process-wide signal handlers",
        "weakref": "finalizers run snippet code outside the time limit",
        "atexit": "runs code at host exit",
        "code": "an unrestricted interpreter",
        "codeop": "compiles code",
        "ast": "compiles code",
        "dis": "reaches code objects",
        "runpy": "runs modules",
        "pdb": "a debugger with full access",
        "urllib.request": "network access (urllib.parse is allowed)",
        "urllib.robotparser": "network access (urllib.parse is allowed)",
        "logging.handlers": "file, socket, SMTP and HTTP handlers; use logging.StreamHandler",
        "logging.config": "configures the process's loggers from files or sockets",
        "glob.glob": "file-system access",
        "csv.register_dialect": "changes csv's process-wide dialect registry",
        "csv.field_size_limit": "changes csv's process-wide field size limit",
        "zoneinfo.reset_tzpath": "changes where the whole process looks for time zones",
        "zoneinfo.ZoneInfo.from_file": "reads a file object; use ZoneInfo(key)",
        "contextlib.chdir": "changes the working directory of the whole process",
        "calendar.LocaleTextCalendar": "switches the locale of the whole process while it runs",
        "calendar.LocaleHTMLCalendar": "switches the locale of the whole process while it runs",
        "gzip.open": "reads and writes files; use gzip.compress / gzip.decompress on bytes",
        "gzip.GzipFile": "reads and writes files; use gzip.compress / gzip.decompress on bytes",
        "zlib.decompressobj": "its output is not bounded; use zlib.decompress(data), which is "
        "size-checked",
        "shlex.shlex": "reads stdin and opens files for 'source' requests; use shlex.split",
        "secrets.SystemRandom": "use random.SystemRandom",
        "logging.FileHandler": "files are not accessible in the sandbox",
        "logging.addLevelName": "changes logging's process-wide level names",
        "logging.setLogRecordFactory": "changes logging's process-wide record factory",
        "logging.captureWarnings": "routes the process's warnings into logging",
        "logging.shutdown": "flushes and closes every handler of the process",
        "logging.currentframe": "returns frame objects",
        "traceback.walk_tb": "yields frame objects",
        "traceback.walk_stack": "yields frame objects",
        "traceback.clear_frames": "clears frames, also the host's",
        "traceback.TracebackException": "holds the frames of host code; use "
        "traceback.format_exception(e)",
        "sys.modules": "every module of the process, unrestricted",
        "sys.path": "where the process imports from",
        "sys.meta_path": "the process's import machinery",
        "sys._getframe": "returns frame objects (host frames included)",
        "sys.settrace": "installs a hook that sees every frame",
        "sys.setprofile": "installs a hook that sees every frame",
        "sys.setrecursionlimit": "changes a process-wide interpreter setting",
        "sys.addaudithook": "hooks the process's audit events",
        "sys.stdin": "there is no stdin in the sandbox: data comes from the tools",
        "sys (other names)": "only stdout, stderr (the execution's own output), exit, argv "
        "(['<snippet>']), version, version_info, hexversion, implementation, platform, "
        "byteorder, maxsize, maxunicode, float_info, int_info, hash_info, flags, "
        "getrecursionlimit, getsizeof, getdefaultencoding, exc_info ... are exposed",
        "io (other names)": "only StringIO, BytesIO, SEEK_* and UnsupportedOperation: files "
        "and file descriptors are not accessible",
        "types (other names)": "only SimpleNamespace, MappingProxyType, NoneType, "
        "EllipsisType, NotImplementedType and UnionType: FunctionType, CodeType, ModuleType, "
        "new_class ... build functions, classes and modules from code objects",
        "warnings (other names)": "filters, onceregistry, defaultaction: the execution has "
        "its own filters; use warnings.simplefilter / filterwarnings / catch_warnings",
        "http": "network access; reach services through the tools",
        "ssl": "network access; reach services through the tools",
        "select": "operating-system handles",
        "asyncio.subprocess": "starts processes",
        "string.Formatter": "get_field() walks attributes of its arguments (GHSA-hp3v-5vw7-fx9w)",
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
        "decimal.getcontext (in-process)": "in ThreadRuntime the thread's context is shared "
        "with other executions (getcontext, setcontext, DefaultContext are left out there; "
        "use decimal.localcontext(prec=...)); a SubprocessRuntime worker has its own",
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

CONFINED_MODULES: Final[types.MappingProxyType[str, str]] = types.MappingProxyType(
    {
        "sys": "reached only through the sandbox's sys view",
        "io": "reached only through the sandbox's io view (StringIO, BytesIO)",
        "types": "reached only through the sandbox's types view",
        "traceback": "reached only through the sandbox's traceback view",
        "warnings": "reached only through the sandbox's warnings view",
    }
)
"""Modules with a narrow view: their objects, re-exported by another module, are left out
there (as those of excluded modules); only their own view hands out what it lists."""

_VET_EXCLUDED: Final = types.MappingProxyType({**EXCLUDED_MODULES, **CONFINED_MODULES})

_ALWAYS_ALLOWED: Final = frozenset({"__future__"})

_C_INTERNAL_IMPORTS: Final = frozenset({"_strptime"})
"""Private stdlib modules that allowed C functions import by themselves at call time
(``datetime.strptime`` and ``time.strptime`` import ``_strptime`` through the calling
frame's ``__import__``). C's ``PyImport_Import`` passes ``fromlist`` as a ``list``; an
import statement passes ``None`` or a tuple, and snippets cannot call ``__import__``
themselves (a reserved name), so only the C route gets the real module."""
_DATA_ROOTS: Final = frozenset({"numpy", "pandas"})
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


@functools.lru_cache(maxsize=1024)
def _children(allowed: frozenset[str], name: str) -> tuple[str, ...]:
    """The allowed direct submodules of ``name`` (``"abc"`` for ``collections``)."""
    prefix = name + "."
    return tuple(
        sorted(
            other[len(prefix) :]
            for other in allowed
            if other.startswith(prefix) and "." not in other[len(prefix) :]
        )
    )


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
        excluded = {**extra_excluded, **excluded}  # the documented reason wins
    else:
        attrs = _public_attrs(module, excluded)
    attrs = {k: v for k, v in attrs.items() if k not in excluded}
    attrs, dropped = vet(
        name,
        attrs,
        ctx,
        specs=_SPECS,
        shared=shared,
        excluded_modules=_VET_EXCLUDED,
        excluded_for=_excluded_for,
        builtin_reasons=EXCLUDED_BUILTINS,
    )
    excluded.update(dropped)
    attrs.update(submodules)
    return make_proxy(
        name,
        attrs,
        excluded=excluded,
        real_names=frozenset(vars(module)) - set(attrs),
        module=module,
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
        builtins: The sandbox's builtins for these limits (``None``: built on demand).
        streams: The execution's standard streams (``sys.stdout`` of the ``sys`` view,
            ``pprint``, ``traceback.print_exc``, ``logging`` and ``warnings`` output).
        own_process: The execution has the process to itself (see ``ModuleContext``).
    """

    __slots__ = (
        "_allowed",
        "_builtins",
        "_ctx",
        "_limits",
        "_local",
        "_own_process",
        "_sleep",
        "_streams",
    )

    def __init__(
        self,
        allowed: frozenset[str],
        limits: Limits,
        sleep: Callable[[float], None] | None,
        builtins: Mapping[str, Any] | None = None,
        *,
        streams: Streams = NULL_STREAMS,
        own_process: bool = False,
    ) -> None:
        self._allowed = allowed
        self._limits = limits
        self._sleep = sleep
        self._builtins = builtins
        self._streams = streams
        self._own_process = own_process
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
            self._ctx = ModuleContext(
                limits=self._limits,
                sleep=self._sleep,
                builtins=base,
                streams=self._streams,
                own_process=self._own_process,
            )
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
        if type(fromlist) is list and not fromlist and self._c_internal(name):
            return importlib.import_module(name)  # type: ignore[return-value]
        if name not in self._allowed and name not in _ALWAYS_ALLOWED:
            raise self._refused(name, _already_defined(globals, name, fromlist))
        target = self._get(name)
        if fromlist:
            for item in fromlist:
                if item == "*":
                    raise ImportError(f"'from {name} import *' is not allowed", name=name)
                if not isinstance(item, str) or item.startswith("_"):
                    raise ImportError(f"cannot import name {item!r} from {name!r}", name=name)
                if not hasattr(target, item):
                    sub = f"{name}.{item}"
                    why = type(target)._ptc_excluded.get(item)
                    if why is not None:
                        raise ImportError(
                            f"cannot import name {item!r} from {name!r}: {name}.{item} is not "
                            f"available in the sandbox: {why}",
                            name=name,
                        )
                    real = getattr(importlib.import_module(name), item, None)
                    if isinstance(real, types.ModuleType) or sub in EXCLUDED_MODULES:
                        raise self._refused(sub)
                    raise ImportError(f"cannot import name {item!r} from {name!r}", name=name)
            return target
        return self._get(name.partition(".")[0])

    def _c_internal(self, name: str) -> bool:
        """An import C code makes by itself (see ``_C_INTERNAL_IMPORTS``); numpy's C
        methods import their Python helpers (``numpy._core._methods``) the same way, so
        the internals of an allowed data library count too."""
        if name in _C_INTERNAL_IMPORTS:
            return True
        root = name.partition(".")[0]
        return root in _DATA_ROOTS and root in self._allowed

    def _refused(self, name: str, defined: list[str] | None = None) -> ImportError:
        REFUSED_IMPORTS[0] += 1
        reason = EXCLUDED_MODULES.get(name) or EXCLUDED_MODULES.get(name.partition(".")[0])
        why = f": {reason}" if reason else ""
        if defined:  # `from tools import get_user`: the tool is a global already
            why += f"; {', '.join(defined)} {'is' if len(defined) == 1 else 'are'} defined"
            why += " already: call it directly, no import needed"
        return ImportError(
            f"import of {name!r} is not allowed in the sandbox{why}; allowed modules: "
            f"{self.allowed_text}",
            name=name,
        )

    def _submodules(self, name: str) -> dict[str, ModuleProxy]:
        return {child: self._get(f"{name}.{child}") for child in _children(self._allowed, name)}

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
                    self._own_process,
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


class AblatedImportHook(ImportHook):
    """An :class:`ImportHook` with its views or its allowlist switched off (guard
    ablation, tests only: see :mod:`ptcbox.sandbox._ablation`); hands out real modules."""

    __slots__ = ()

    def __call__(
        self,
        name: str,
        globals: Any = None,
        locals: Any = None,
        fromlist: Any = (),
        level: int = 0,
    ) -> Any:
        allowed = name in self._allowed or name in _ALWAYS_ALLOWED
        if allowed and not off("module_views"):
            return super().__call__(name, globals, locals, fromlist, level)
        if not allowed and not off("import_allowlist"):
            raise self._refused(name)
        return builtins.__import__(name, globals, locals, fromlist, level)


def _already_defined(namespace: Any, name: str, fromlist: Any) -> list[str]:
    """The names a refused import asks for that the snippet's globals hold (its tools)."""
    if type(namespace) is not dict:  # the frame's own globals; never call snippet code
        return []
    wanted = [name, *fromlist] if type(fromlist) in (list, tuple) else [name]
    return [item for item in wanted if type(item) is str and item in namespace]

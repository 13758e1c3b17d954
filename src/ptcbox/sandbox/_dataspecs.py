"""numpy and pandas for :meth:`SandboxPolicy.data`: their module views and attribute rules.

Only ``SubprocessRuntime`` runs them (see :data:`DATA_RUNTIME_REASON`). Three layers, all
language-level (the worker's kernel walls hold anyway):

* module views (this module): the file, pickle, ctypes and expression-evaluator entry
  points of ``numpy`` and ``pandas`` are left out with their reasons; ``pandas.read_csv``
  and friends read only in-memory text (``io.StringIO`` / ``io.BytesIO``);
* attribute rules (:func:`data_attribute`): ``tofile``, ``dump``, ``dumps`` and ``ctypes``
  of numpy arrays and scalars are refused (C methods of a C type, which cannot be
  patched);
* the worker process hardens pandas' own classes before any snippet runs
  (:mod:`ptcbox.sandbox._datahardening`), so every route to a refused method (attribute,
  ``df.agg("to_pickle", ...)``, ``operator.methodcaller``, ``super()``) meets the refusal.
"""

from __future__ import annotations

import importlib.util
import io
import types
from collections.abc import Callable
from typing import Any, Final

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._names import DATA_GUARDED_ATTRS
from ptcbox.sandbox._policy import DATA_IMPORTS
from ptcbox.sandbox._sized import CHECKED_CLASSES, CHECKED_SUBCLASSES, SizedConstructor
from ptcbox.sandbox._specbase import Attrs, ModuleContext, public

__all__ = [
    "DATA_ATTRS",
    "DATA_IMPORTS",
    "DATA_RUNTIME_REASON",
    "DATA_SPECS",
    "data_attribute",
    "memory_only",
    "missing_data_libs",
    "seal_class",
    "seal_snippet_classes",
    "uses_data_libs",
]

_DATA_ROOTS: Final = ("numpy", "pandas")
_MODULE_OF: Final = type.__dict__["__module__"].__get__  # C types: from their tp_name

DATA_RUNTIME_REASON: Final = (
    "numpy and pandas run only in SubprocessRuntime (runtime='subprocess'): their C code "
    "cannot be interrupted at the time limit nor bounded by max_memory_bytes in-process, "
    "and their process-wide state (options, error handling, class patches that refuse "
    "file I/O) would be shared with the host"
)

_NO_FILES: Final = "reads or writes files; get data through the tools"
_PICKLE: Final = "pickling: unpickling runs arbitrary code; use json or tolist()"
_HOST_INFO: Final = "prints the host's {} (the sandbox does not describe the machine it runs on)"
_TESTS: Final = "runs the library's test suite from the host's installation (files, pytest)"
_NO_EVAL: Final = (
    "runs its own expression evaluator with attribute access; use boolean masks, e.g. "
    "df[(df['price'] > 10) & (df['region'] == 'EU')], and plain column arithmetic"
)

NUMPY_EXCLUDED: Final = types.MappingProxyType(
    {
        "load": _NO_FILES + " (and np.load(allow_pickle=True) unpickles)",
        "save": _NO_FILES,
        "savez": _NO_FILES,
        "savez_compressed": _NO_FILES,
        "savetxt": _NO_FILES + "; format text with np.array2string or tolist()",
        "loadtxt": _NO_FILES + "; parse text yourself or with pandas.read_csv(io.StringIO(text))",
        "genfromtxt": _NO_FILES + "; use pandas.read_csv(io.StringIO(text))",
        "fromfile": _NO_FILES + "; use np.frombuffer(data) or np.array(values)",
        "fromregex": _NO_FILES,
        "memmap": "maps files into memory",
        "DataSource": _NO_FILES + " and URLs",
        "info": "prints documentation and source of host objects",
        "show_runtime": _HOST_INFO.format(
            "operating system (uname), CPU features and thread libraries"
        ),
        "show_config": _HOST_INFO.format("build configuration (compilers, library paths)"),
        "get_include": "returns a path of the host's installation (no C code is built here)",
        "test": _TESTS,
        "ctypeslib": "raw memory access through ctypes",
    }
)
"""numpy names a snippet cannot use, with the reason (modules such as ``numpy.lib`` and
``numpy.ctypeslib`` are never handed out; ``numpy.lib.stride_tricks.as_strided`` reads
and writes outside an array's memory)."""

_READERS: Final = ("read_csv", "read_table", "read_json", "read_fwf")

PANDAS_EXCLUDED: Final = types.MappingProxyType(
    {
        "read_pickle": _PICKLE,
        "to_pickle": _PICKLE,
        "eval": _NO_EVAL,
        "read_parquet": _NO_FILES,
        "read_feather": _NO_FILES,
        "read_orc": _NO_FILES,
        "read_hdf": _NO_FILES,
        "HDFStore": _NO_FILES,
        "read_excel": _NO_FILES,
        "ExcelFile": _NO_FILES,
        "ExcelWriter": _NO_FILES,
        "read_stata": _NO_FILES,
        "read_sas": _NO_FILES,
        "read_spss": _NO_FILES,
        "read_xml": _NO_FILES + " and URLs",
        "read_html": _NO_FILES + " and URLs",
        "read_sql": "database connections; get data through the tools",
        "read_sql_query": "database connections; get data through the tools",
        "read_sql_table": "database connections; get data through the tools",
        "read_gbq": "network access",
        "read_iceberg": _NO_FILES,
        "read_clipboard": "runs a clipboard program",
        "show_versions": _HOST_INFO.format(
            "operating system (uname), locale, paths and installed packages"
        ),
        "test": _TESTS,
    }
)
"""pandas names a snippet cannot use, with the reason (``read_csv``, ``read_table``,
``read_json`` and ``read_fwf`` read ``io.StringIO``/``io.BytesIO`` only)."""

DATA_ATTRS: Final = types.MappingProxyType(
    {
        "tofile": _NO_FILES + "; use arr.tolist() or arr.tobytes()",
        "dump": _PICKLE,
        "dumps": _PICKLE,
        "ctypes": "raw memory access through ctypes",
    }
)
"""Attributes of numpy and pandas objects (arrays, scalars, their classes) the attribute
guard refuses; the same names on other objects are not affected."""
assert frozenset(DATA_ATTRS) == DATA_GUARDED_ATTRS


def uses_data_libs(allowed_imports: frozenset[str]) -> bool:
    """True when the allowlist names numpy or pandas (or a submodule)."""
    return any(name.partition(".")[0] in _DATA_ROOTS for name in allowed_imports)


def missing_data_libs(allowed_imports: frozenset[str]) -> list[str]:
    """The data libraries the allowlist names that are not installed (none imported)."""
    roots = sorted({name.partition(".")[0] for name in allowed_imports} & set(_DATA_ROOTS))
    return [root for root in roots if importlib.util.find_spec(root) is None]


def _owner_class(obj: Any) -> type:
    """The class whose attribute ``obj.name`` reads (``super()``: the class it starts at)."""
    if type(obj) is super:
        obj = obj.__self_class__  # type: ignore[attr-defined]
    return obj if isinstance(obj, type) else type(obj)


def _from_data_lib(cls: type) -> bool:
    for klass in cls.__mro__:
        home = _MODULE_OF(klass)
        if type(home) is str and home.partition(".")[0] in _DATA_ROOTS:
            return True
    return False


def data_attribute(obj: Any, name: str) -> None:
    """Raise when ``obj.name`` is a refused attribute of a numpy/pandas object.

    Raises:
        PolicyViolation: ``name`` is in :data:`DATA_ATTRS` and ``obj`` (an instance, a
            class or ``super()``) comes from numpy or pandas.
    """
    reason = DATA_ATTRS.get(name)
    if reason is not None:
        owner = _owner_class(obj)
        if _from_data_lib(owner):
            raise PolicyViolation(
                f"{owner.__name__}.{name} is not available in the sandbox: {reason}"
            )


def memory_only(function: Callable[..., Any], what: str) -> Callable[..., Any]:
    """``function`` reading from an in-memory buffer only (its first argument)."""

    def reader(source: Any, /, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(source, io.StringIO | io.BytesIO):
            raise PolicyViolation(
                f"{what}() reads only io.StringIO or io.BytesIO in the sandbox (paths and "
                f"URLs are file and network access): {what}(io.StringIO(text))"
            )
        return function(source, *args, **kwargs)

    reader.__name__ = reader.__qualname__ = getattr(function, "__name__", what)
    reader.__doc__ = getattr(function, "__doc__", None)
    return reader


def _view(
    module: types.ModuleType, excluded: types.MappingProxyType[str, str]
) -> tuple[Attrs, dict[str, str]]:
    attrs = public(module, frozenset(excluded))
    return attrs, dict(excluded)


_RAW_MEMORY_ARGS: Final = frozenset({"buffer", "buf", "offset", "strides"})


def no_raw_memory(
    kind: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The check of numpy's array classes: ``cls(shape, dtype)`` only, never over a buffer.

    Raises:
        PolicyViolation: A buffer, offset or strides argument (or a third positional one).
    """
    if len(args) > 2 or not _RAW_MEMORY_ARGS.isdisjoint(kwargs):
        raise PolicyViolation(
            f"{kind}(shape, dtype, buffer=...) is not available in the sandbox: an array "
            "over a buffer views raw memory (a negative offset reads and writes outside "
            "it, an object dtype turns addresses into objects); use np.frombuffer(data, "
            "dtype=...), np.array(values) or np.zeros(shape, dtype)"
        )
    return args, kwargs


class _ArrayClass(SizedConstructor):
    """numpy's array class as the sandbox hands it out: its constructor checked by
    :func:`no_raw_memory`, its refused attributes (``np.ndarray.tofile``) refused."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        data_attribute(self._real, name)
        return super().__getattr__(name)


def _array_class(real: type) -> Any:
    found = CHECKED_CLASSES.get(real)
    if found is None:
        found = CHECKED_CLASSES[real] = _ArrayClass(
            real, f"numpy.{real.__name__}", no_raw_memory, None
        )
    return found


def _numpy(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs, excluded = _view(module, NUMPY_EXCLUDED)
    ndarray = module.ndarray
    CHECKED_SUBCLASSES.setdefault(ndarray, (no_raw_memory, _ArrayClass))  # recarray, chararray, ...
    for name in ("ndarray", "recarray"):
        if name in attrs:
            attrs[name] = _array_class(getattr(module, name))
    return attrs, excluded


def _pandas(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs, excluded = _view(module, PANDAS_EXCLUDED)
    for name in _READERS:
        if name in attrs:
            attrs[name] = memory_only(attrs[name], f"pandas.{name}")
    return attrs, excluded


DATA_SPECS: Final = {"numpy": _numpy, "pandas": _pandas}


_RAW_PROTOCOLS: Final = (
    "__array_interface__",
    "__array_struct__",
    "__dataframe__",
    "__dlpack__",
    "__arrow_c_array__",
    "__arrow_c_stream__",
)
"""Raw-memory protocols of numpy and pandas: ``__array_interface__["data"]`` is an integer
address that ``np.asarray`` trusts (reading or writing any memory of the process); the
others hand over pointers or capsules the same way."""


class _NoRawProtocol:
    """A data descriptor that answers ``AttributeError`` (it shadows the instance dict)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        raise AttributeError(self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        raise PolicyViolation(f"{self.name!r} cannot be set in the sandbox")


_NO_RAW: Final = {name: _NoRawProtocol(name) for name in _RAW_PROTOCOLS}


def _dunder_free_getattr(method: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    def __getattr__(self: Any, name: str) -> Any:  # noqa: N807 - the snippet's own hook
        if type(name) is str and name[:2] == "__" and name[-2:] == "__":
            raise AttributeError(name)
        return method(self, name)

    __getattr__.__qualname__ = getattr(method, "__qualname__", "__getattr__")
    __getattr__.__doc__ = getattr(method, "__doc__", None)
    return __getattr__


_sealing: list[bool] = [False]


def seal_snippet_classes() -> None:
    """From now on, :func:`seal_class` seals the snippet classes of this process.

    Called by a ``SubprocessRuntime`` template of the data preset before it forks (its
    workers run only that policy); other processes keep snippet classes as they are.
    """
    _sealing[0] = True


def seal_class(cls: type) -> None:
    """Close the routes by which a snippet class could answer a special-name lookup of
    host code with data of its own choosing (numpy's raw-memory protocols above all).

    Only in a process where :func:`seal_snippet_classes` was called (a data worker):

    * a ``__getattr__`` the class defines never sees special names (``AttributeError``
      instead): host code looks up protocols such as ``__array_interface__`` with
      ``getattr``;
    * the class gets data descriptors for the raw-memory protocols
      (``__array_interface__``, ``__array_struct__`` ...) that answer ``AttributeError``,
      so an instance dict filled through ``vars(obj)`` cannot provide them either
      (``typing.Protocol`` classes are left without them: they have no instances, and
      the descriptors would count as protocol members).
    """
    if not _sealing[0]:
        return
    method = cls.__dict__.get("__getattr__")
    if callable(method):
        type.__setattr__(cls, "__getattr__", _dunder_free_getattr(method))
    if cls.__dict__.get("_is_protocol", False):
        return
    for name, descriptor in _NO_RAW.items():
        type.__setattr__(cls, name, descriptor)

"""Module views for the snippet's output and script habits: sys, io, pprint, contextlib,
traceback and types.

* ``sys`` is a view, built per execution: ``stdout``/``stderr`` write to the execution's
  capture (:mod:`ptcbox.sandbox._streams`), never the host's streams; ``argv`` is
  ``["<snippet>"]`` (a fresh list; the filename tracebacks show); ``exit``, version and
  platform facts, ``getrecursionlimit``, ``getsizeof``, ``exc_info``. Nothing that reaches
  modules, frames, hooks or process-wide settings (``modules``, ``path``, ``_getframe``,
  ``settrace``, ``setrecursionlimit``, ``stdin`` ...).
* ``io``: ``StringIO`` and ``BytesIO`` only (in-memory; their ``seek`` cannot move past
  ``max_repeat_bytes``, which a write would fill), no ``open``/``FileIO``.
* ``pprint``: ``pprint``/``pp``/``PrettyPrinter`` print to the execution's current stdout;
  ``indent`` is size-checked (the indentation string is built in host code).
* ``contextlib``: ``redirect_stdout``/``redirect_stderr`` switch the execution's current
  target, not the process's ``sys.stdout``; ``chdir`` is left out.
* ``traceback``: the snippet's own frames only (see :mod:`ptcbox.sandbox._snippet_tb`).
* ``types``: ``SimpleNamespace``, ``MappingProxyType`` and the singleton types only.
"""

from __future__ import annotations

import io
import pprint as _pprint
import sys
import traceback as _tb
import types
from typing import Any

from ptcbox.sandbox._limits import Limits
from ptcbox.sandbox._proxy import Dynamic
from ptcbox.sandbox._snippet_tb import (
    FrameSummary,
    StackSummary,
    format_exception,
    format_list,
    snippet_stack,
    snippet_tb,
)
from ptcbox.sandbox._specbase import Attrs, ModuleContext, only, public
from ptcbox.sandbox._streams import Streams

__all__ = ["IO_SPECS", "PER_EXECUTION_IO", "SNIPPET_ARGV0"]

SNIPPET_ARGV0 = "<snippet>"
"""``sys.argv[0]`` in a snippet (the filename its tracebacks show)."""

_SYS_NAMES = (
    "byteorder",
    "exit",
    "float_info",
    "float_repr_style",
    "getdefaultencoding",
    "getfilesystemencoding",
    "getrecursionlimit",
    "getsizeof",
    "hash_info",
    "hexversion",
    "int_info",
    "maxsize",
    "maxunicode",
    "platform",
    "version",
    "version_info",
    "api_version",
    "copyright",
    "exc_info",
    "flags",
    "thread_info",
)
_SYS_REASON = (
    "not exposed in the sandbox: it reaches modules, frames, hooks or process-wide "
    "interpreter settings"
)


def _excluded_rest(module: types.ModuleType, attrs: Attrs, reason: str) -> dict[str, str]:
    return {k: reason for k in vars(module) if not k.startswith("_") and k not in attrs}


def _sys(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    streams = ctx.streams
    attrs = only(module, _SYS_NAMES)
    impl = sys.implementation
    attrs["implementation"] = types.SimpleNamespace(
        name=impl.name, version=impl.version, hexversion=impl.hexversion, cache_tag=impl.cache_tag
    )
    attrs["argv"] = [SNIPPET_ARGV0]  # a fresh list per execution, as a script's
    attrs["stdout"] = Dynamic(lambda: streams.stdout)
    attrs["stderr"] = Dynamic(lambda: streams.stderr)
    excluded = _excluded_rest(module, attrs, _SYS_REASON)
    excluded["stdin"] = "there is no stdin in the sandbox: data comes from the tools"
    return attrs, excluded


# -- io ---------------------------------------------------------------------------------


def _memory_files(lim: Limits) -> tuple[type, type]:
    def checked_seek(cls: Any) -> Any:
        def seek(self: Any, pos: int, whence: int = 0, /) -> int:
            """Move to ``pos`` -- sandboxed: not past ``max_repeat_bytes``."""
            before = cls.tell(self)
            after: int = cls.seek(self, pos, whence)
            if after > lim.max_repeat_bytes:
                cls.seek(self, before)
                lim.repeat_bytes(f"{cls.__name__}.seek", after)
            return after

        return seek

    made = []
    for real in (io.StringIO, io.BytesIO):
        ns = {"__slots__": (), "__module__": "_io", "__doc__": real.__doc__}
        ns["seek"] = checked_seek(real)
        made.append(type(real.__name__, (real,), ns))
    return made[0], made[1]


def _io(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    string_io, bytes_io = _memory_files(ctx.limits)
    attrs: Attrs = {
        "StringIO": string_io,
        "BytesIO": bytes_io,
        "SEEK_SET": io.SEEK_SET,
        "SEEK_CUR": io.SEEK_CUR,
        "SEEK_END": io.SEEK_END,
        "DEFAULT_BUFFER_SIZE": io.DEFAULT_BUFFER_SIZE,
        "UnsupportedOperation": io.UnsupportedOperation,
    }
    reason = "files and file descriptors are not accessible in the sandbox; use io.StringIO "
    reason += "or io.BytesIO for in-memory text and bytes"
    return attrs, _excluded_rest(module, attrs, reason)


# -- pprint -----------------------------------------------------------------------------


def _printer_class(streams: Streams, lim: Limits) -> type:
    real = _pprint.PrettyPrinter

    class PrettyPrinter(real):  # type: ignore[misc, valid-type]
        __doc__ = real.__doc__

        def __init__(
            self,
            indent: int = 1,
            width: int = 80,
            depth: Any = None,
            stream: Any = None,
            *,
            compact: bool = False,
            sort_dicts: bool = True,
            underscore_numbers: bool = False,
        ) -> None:
            """PrettyPrinter(...) -- sandboxed: ``stream=None`` is the execution's stdout;
            ``indent`` is size-checked."""
            if isinstance(indent, int):
                lim.repeat_bytes("pprint indent", int.__index__(indent) * 1000)
            super().__init__(
                indent,
                width,
                depth,
                stream,
                compact=compact,
                sort_dicts=sort_dicts,
                underscore_numbers=underscore_numbers,
            )
            if stream is None:
                self._stream = streams.stdout

    PrettyPrinter.__module__ = "pprint"
    return PrettyPrinter


def _pprint_module(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    printer = _printer_class(ctx.streams, ctx.limits)

    def pprint(
        obj: Any,
        stream: Any = None,
        indent: int = 1,
        width: int = 80,
        depth: Any = None,
        *,
        compact: bool = False,
        sort_dicts: bool = True,
        underscore_numbers: bool = False,
    ) -> None:
        """Pretty-print ``obj`` to ``stream`` (default: the execution's stdout)."""
        printer(
            stream=stream,
            indent=indent,
            width=width,
            depth=depth,
            compact=compact,
            sort_dicts=sort_dicts,
            underscore_numbers=underscore_numbers,
        ).pprint(obj)

    def pp(obj: Any, *args: Any, sort_dicts: bool = False, **kwargs: Any) -> None:
        """Like pprint, with ``sort_dicts=False``."""
        pprint(obj, *args, sort_dicts=sort_dicts, **kwargs)

    def pformat(
        obj: Any,
        indent: int = 1,
        width: int = 80,
        depth: Any = None,
        *,
        compact: bool = False,
        sort_dicts: bool = True,
        underscore_numbers: bool = False,
    ) -> str:
        """The pretty-printed text of ``obj``."""
        text: str = printer(
            indent=indent,
            width=width,
            depth=depth,
            compact=compact,
            sort_dicts=sort_dicts,
            underscore_numbers=underscore_numbers,
        ).pformat(obj)
        return text

    attrs = public(module)
    attrs.update(PrettyPrinter=printer, pprint=pprint, pp=pp, pformat=pformat)
    return attrs, {}


# -- contextlib -------------------------------------------------------------------------


def _redirect_class(which: str, streams: Streams, getattr_: Any) -> type:
    class Redirect:
        """Send the snippet's ``sys.{which}`` (and ``print``) to ``new_target``."""

        __slots__ = ("_new_target", "_old")

        def __init__(self, new_target: Any) -> None:
            self._new_target = new_target
            self._old: list[Any] = []

        def __enter__(self) -> Any:
            self._old.append(streams.redirect(which, self._new_target, getattr_))
            return self._new_target

        def __exit__(self, *exc: object) -> None:
            streams.restore(self._old.pop())

    Redirect.__name__ = Redirect.__qualname__ = f"redirect_{which}"
    Redirect.__module__ = "contextlib"
    return Redirect


def _contextlib(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    getattr_ = ctx.builtins.get("_getattr_", getattr)
    attrs = public(module, {"chdir"})
    attrs["redirect_stdout"] = _redirect_class("stdout", ctx.streams, getattr_)
    attrs["redirect_stderr"] = _redirect_class("stderr", ctx.streams, getattr_)
    return attrs, {"chdir": "changes the working directory of the whole process"}


# -- traceback --------------------------------------------------------------------------

_TB_EXCLUDED = {
    "walk_tb": "yields frame objects",
    "walk_stack": "yields frame objects",
    "clear_frames": "clears frames, also the host's",
    "TracebackException": "holds the frames of host code; use traceback.format_exception(e)",
    "print_last": "reads the interpreter's last uncaught exception",
    "format_last": "reads the interpreter's last uncaught exception",
}


def _traceback(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    streams = ctx.streams
    getattr_ = ctx.builtins.get("_getattr_", getattr)

    def _write(lines: list[str], file: Any) -> None:
        write = streams.err if file is None else getattr_(file, "write")
        for line in lines:
            write(line)

    def _value(exc: Any, value: Any) -> Any:
        return exc if value is _SENTINEL else value

    def fmt_exception(
        exc: Any,
        /,
        value: Any = _SENTINEL,
        tb: Any = _SENTINEL,
        limit: Any = None,
        chain: bool = True,
    ) -> list[str]:
        """traceback.format_exception -- sandboxed: the snippet's own frames only."""
        return format_exception(_value(exc, value), limit, chain)

    def print_exception(  # noqa: PLR0917 - the stdlib's signature
        exc: Any,
        /,
        value: Any = _SENTINEL,
        tb: Any = _SENTINEL,
        limit: Any = None,
        file: Any = None,
        chain: bool = True,
    ) -> None:
        """traceback.print_exception -- sandboxed: to the execution's stderr by default."""
        _write(format_exception(_value(exc, value), limit, chain), file)

    def format_exc(limit: Any = None, chain: bool = True) -> str:
        """traceback.format_exc -- the exception being handled, the snippet's frames only."""
        return "".join(format_exception(sys.exc_info()[1], limit, chain))

    def print_exc(limit: Any = None, file: Any = None, chain: bool = True) -> None:
        """traceback.print_exc -- to the execution's stderr by default."""
        _write(format_exception(sys.exc_info()[1], limit, chain), file)

    def extract_tb(tb: Any, limit: Any = None) -> Any:
        """traceback.extract_tb -- the snippet's frames of ``tb`` only."""
        return snippet_tb(tb, limit)

    def format_tb(tb: Any, limit: Any = None) -> list[str]:
        """traceback.format_tb -- the snippet's frames of ``tb`` only."""
        lines: list[str] = snippet_tb(tb, limit).format()
        return lines

    def print_tb(tb: Any, limit: Any = None, file: Any = None) -> None:
        """traceback.print_tb -- to the execution's stderr by default."""
        _write(snippet_tb(tb, limit).format(), file)

    def extract_stack(f: Any = None, limit: Any = None) -> Any:
        """traceback.extract_stack -- the snippet's frames of the current stack only."""
        if f is not None:
            raise TypeError("extract_stack(f) is not available in the sandbox; call it bare")
        return snippet_stack(limit)

    def format_stack(f: Any = None, limit: Any = None) -> list[str]:
        """traceback.format_stack -- the snippet's frames of the current stack only."""
        lines: list[str] = extract_stack(f, limit).format()
        return lines

    def print_stack(f: Any = None, limit: Any = None, file: Any = None) -> None:
        """traceback.print_stack -- to the execution's stderr by default."""
        _write(extract_stack(f, limit).format(), file)

    attrs: Attrs = {
        "format_exception": fmt_exception,
        "print_exception": print_exception,
        "format_exc": format_exc,
        "print_exc": print_exc,
        "extract_tb": extract_tb,
        "format_tb": format_tb,
        "print_tb": print_tb,
        "extract_stack": extract_stack,
        "format_stack": format_stack,
        "print_stack": print_stack,
        "format_exception_only": _tb.format_exception_only,
        "format_list": format_list,
        "FrameSummary": FrameSummary,
        "StackSummary": StackSummary,
    }
    for name, value in list(attrs.items()):
        if callable(value) and getattr(value, "__module__", "") == __name__:
            value.__name__ = value.__qualname__ = name
    excluded = _excluded_rest(module, attrs, "not exposed in the sandbox")
    excluded.update(_TB_EXCLUDED)
    return attrs, excluded


_SENTINEL = object()

# -- types ------------------------------------------------------------------------------

_TYPES_NAMES = (
    "SimpleNamespace",
    "MappingProxyType",
    "NoneType",
    "EllipsisType",
    "NotImplementedType",
    "UnionType",
)


def _types(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = only(module, _TYPES_NAMES)
    reason = "not exposed in the sandbox (FunctionType, CodeType, ModuleType, new_class ... "
    reason += "build functions, classes and modules from code objects and arbitrary names)"
    return attrs, _excluded_rest(module, attrs, reason)


IO_SPECS = {
    "sys": _sys,
    "io": _io,
    "pprint": _pprint_module,
    "contextlib": _contextlib,
    "traceback": _traceback,
    "types": _types,
}

PER_EXECUTION_IO = frozenset({"sys", "pprint", "contextlib", "traceback"})
"""Views holding the execution's streams (built per import hook)."""

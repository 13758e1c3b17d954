"""Module views for more of the standard library: csv, calendar, zoneinfo, struct, zlib,
gzip, secrets, shlex, collections.abc, copy.

What each leaves out or changes, and why:

* ``csv``: ``register_dialect``/``unregister_dialect``/``field_size_limit`` change
  process-wide state (shared with the host and other executions).
* ``calendar``: per execution; the module-level functions use the execution's own
  calendar (``setfirstweekday`` changes only it) and the ``pr*`` functions print to the
  execution's stdout; widths are size-checked; ``LocaleTextCalendar``/
  ``LocaleHTMLCalendar`` (they switch the process locale while they run) are left out.
* ``zoneinfo``: ``ZoneInfo(key)`` reads the tz database; ``ZoneInfo.from_file`` and
  ``reset_tzpath`` are refused.
* ``struct``, ``zlib``, ``gzip``, ``secrets``: results over ``max_repeat_bytes`` /
  ``max_int_bits`` are refused before they are built (decompression bombs included);
  ``gzip`` works in memory only (no ``open``/``GzipFile``).
* ``shlex``: ``split``/``quote``/``join`` only (the ``shlex`` class reads stdin and opens
  files for ``source`` requests).
* ``copy``: ``deepcopy``/``copy`` of the snippet's own classes apply the reduced state
  through the sandbox's write guard (a ``__reduce__`` cannot set attributes of objects
  the snippet does not own). A host object is deep-copied with a memo of its own, never the
  snippet's (which would hold its private state).
"""

from __future__ import annotations

import builtins
import copy as _copy
import types
import zlib
from typing import Any

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._cacheguards import exact
from ptcbox.sandbox._guards import guarded_setattr
from ptcbox.sandbox._owner import is_owned
from ptcbox.sandbox._specbase import Attrs, ModuleContext, ix, only, public

__all__ = ["MORE_SPECS", "PER_EXECUTION_MORE"]


def _csv(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    reason = "changes csv's process-wide state (shared with the host and other executions)"
    names = {"register_dialect", "unregister_dialect", "field_size_limit"}
    return public(module, names), dict.fromkeys(names, reason)


# -- calendar ---------------------------------------------------------------------------


def _calendar(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    streams, lim = ctx.streams, ctx.limits

    def check(*sizes: Any) -> None:
        total = sum(ix(s) for s in sizes if s is not None)
        lim.repeat_bytes("calendar width", total * 16)

    class TextCalendar(module.TextCalendar):  # type: ignore[misc, name-defined]
        __doc__ = module.TextCalendar.__doc__

        def formatweek(self, theweek: Any, width: int) -> str:
            check(width)
            text: str = super().formatweek(theweek, width)
            return text

        def formatweekheader(self, width: int) -> str:
            check(width)
            text: str = super().formatweekheader(width)
            return text

        def formatmonth(self, theyear: int, themonth: int, w: int = 0, l: int = 0) -> str:  # noqa: E741
            check(w, l)
            text: str = super().formatmonth(theyear, themonth, w, l)
            return text

        def formatyear(self, theyear: int, w: int = 2, l: int = 1, c: int = 6, m: int = 3) -> str:  # noqa: E741
            check(w, l, c)
            text: str = super().formatyear(theyear, w, l, c, m)
            return text

        def prweek(self, theweek: Any, width: int) -> None:
            """Print a single week (no newline) to the execution's stdout."""
            streams.out(self.formatweek(theweek, width))

        def prmonth(self, theyear: int, themonth: int, w: int = 0, l: int = 0) -> None:  # noqa: E741
            """Print a month's calendar to the execution's stdout."""
            streams.out(self.formatmonth(theyear, themonth, w, l))

        def pryear(self, theyear: int, w: int = 0, l: int = 0, c: int = 6, m: int = 3) -> None:  # noqa: E741
            """Print a year's calendar to the execution's stdout."""
            streams.out(self.formatyear(theyear, w, l, c, m))

    TextCalendar.__module__ = "calendar"
    cal = TextCalendar()

    def setfirstweekday(firstweekday: int) -> None:
        """Set the first weekday of this execution's calendar (0 = Monday)."""
        if not module.MONDAY <= firstweekday <= module.SUNDAY:
            raise module.IllegalWeekdayError(firstweekday)
        cal.firstweekday = firstweekday

    def formatstring(cols: Any, colwidth: int = 20, spacing: int = 6) -> str:
        """Center each string of ``cols`` in ``colwidth`` columns, ``spacing`` apart."""
        check(colwidth * len(cols), spacing * len(cols))
        text: str = module.formatstring(cols, colwidth, spacing)
        return text

    def format(cols: Any, colwidth: int = 20, spacing: int = 6) -> None:
        """Print ``formatstring(cols, colwidth, spacing)`` to the execution's stdout."""
        streams.out(formatstring(cols, colwidth, spacing) + "\n")

    skip = {"LocaleTextCalendar", "LocaleHTMLCalendar", "different_locale", "main"}
    attrs = public(module, skip)
    attrs.update(
        TextCalendar=TextCalendar,
        c=cal,  # the module's shared calendar is the host's: this execution's own instead
        firstweekday=cal.getfirstweekday,
        setfirstweekday=setfirstweekday,
        monthcalendar=cal.monthdayscalendar,
        prweek=cal.prweek,
        week=cal.formatweek,
        weekheader=cal.formatweekheader,
        prmonth=cal.prmonth,
        month=cal.formatmonth,
        calendar=cal.formatyear,
        prcal=cal.pryear,
        formatstring=formatstring,
        format=format,
    )
    reason = "switches the locale of the whole process while it runs"
    excluded = {"LocaleTextCalendar": reason, "LocaleHTMLCalendar": reason}
    excluded.update(different_locale=reason, main="a command-line entry point")
    return attrs, excluded


# -- zoneinfo ---------------------------------------------------------------------------

FROM_FILE_REFUSED = (
    "zoneinfo.ZoneInfo.from_file is not available in the sandbox: time zones come from "
    "the tz database by key, e.g. ZoneInfo('Europe/Oslo')"
)


def _zoneinfo(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    real = module.ZoneInfo

    class ZoneInfo(real):  # type: ignore[misc, valid-type]
        __doc__ = real.__doc__

        def __new__(cls, key: Any) -> Any:
            # the class's cache is shared by every execution: exact keys only
            return super().__new__(cls, exact(key))

        @classmethod
        def no_cache(cls, key: Any) -> Any:
            """Get a new instance of ZoneInfo, bypassing the cache."""
            return super().no_cache(exact(key))

        @classmethod
        def from_file(cls, fobj: Any, /, key: Any = None) -> Any:
            """Refused in the sandbox: use ``ZoneInfo(key)``."""
            raise PolicyViolation(FROM_FILE_REFUSED)

        def __repr__(self) -> str:
            return f"zoneinfo.ZoneInfo(key={self.key!r})"

    ZoneInfo.__module__ = "zoneinfo"
    attrs = public(module, {"reset_tzpath"})
    attrs["ZoneInfo"] = ZoneInfo
    return attrs, {"reset_tzpath": "changes where the whole process looks for time zones"}


# -- struct, zlib, gzip, secrets --------------------------------------------------------


def _exact_format(fn: Any) -> Any:
    """``fn(fmt, ...)`` of ``struct`` with ``fmt`` as an exact ``str``/``bytes``: the
    module's format cache is the whole process's (a snippet's key would answer the
    host's lookups, see ``_cacheguards``)."""

    def call(fmt: Any, /, *args: Any) -> Any:
        return fn(exact(fmt), *args)

    call.__name__ = call.__qualname__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


def _struct(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits

    def pack(fmt: Any, /, *values: Any) -> bytes:
        """struct.pack -- sandboxed: the result size is checked first."""
        fmt = exact(fmt)
        lim.repeat_bytes("struct.pack", module.calcsize(fmt))
        data: bytes = module.pack(fmt, *values)
        return data

    class Struct(module.Struct):  # type: ignore[misc, name-defined]
        __doc__ = module.Struct.__doc__

        def __init__(self, format: Any) -> None:
            lim.repeat_bytes("struct.Struct", module.calcsize(format))
            super().__init__(format)

    Struct.__module__ = "struct"
    attrs = public(module)
    for name in ("calcsize", "unpack", "unpack_from", "iter_unpack", "pack_into"):
        attrs[name] = _exact_format(getattr(module, name))
    attrs.update(pack=pack, Struct=Struct)
    return attrs, {}


def _capped_inflate(lim: Any, data: Any, wbits: int, what: str) -> None:
    """Refuse ``data`` when it inflates to more than ``max_repeat_bytes`` (probe only:
    errors are left to the real function, which raises them as CPython does)."""
    cap = lim.max_repeat_bytes
    rest = bytes(data)
    total = 0
    while rest:
        try:
            d = zlib.decompressobj(wbits)
            total += len(d.decompress(rest, cap + 1 - total))
        except zlib.error:
            return
        if total > cap or d.unconsumed_tail:
            lim.repeat_bytes(what, max(total, cap + 1))
        if not d.eof or wbits < 16:
            return
        rest = d.unused_data


def _zlib(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits

    def decompress(data: Any, /, wbits: int = module.MAX_WBITS, bufsize: int = 16384) -> bytes:
        """zlib.decompress -- sandboxed: output over max_repeat_bytes is refused."""
        _capped_inflate(lim, data, wbits, "zlib.decompress")
        out: bytes = module.decompress(data, wbits, bufsize)
        return out

    attrs = public(module, {"decompressobj"})
    attrs["decompress"] = decompress
    reason = "its output is not bounded; use zlib.decompress(data), which is size-checked"
    return attrs, {"decompressobj": reason}


def _gzip(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits

    def decompress(data: Any) -> bytes:
        """gzip.decompress -- sandboxed: output over max_repeat_bytes is refused."""
        _capped_inflate(lim, data, 31, "gzip.decompress")
        out: bytes = module.decompress(data)
        return out

    attrs = {"compress": module.compress, "decompress": decompress}
    attrs["BadGzipFile"] = module.BadGzipFile
    reason = "reads and writes files; use gzip.compress / gzip.decompress on bytes"
    excluded = {k: reason for k in ("open", "GzipFile", "main", "write32u", "READ", "WRITE")}
    return attrs, excluded


def _secrets(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits

    def _n(nbytes: Any) -> Any:
        if nbytes is not None:
            lim.repeat_bytes("secrets.token_bytes", 2 * ix(nbytes))
        return nbytes

    def token_bytes(nbytes: Any = None) -> bytes:
        """secrets.token_bytes -- sandboxed: sizes over max_repeat_bytes are refused."""
        data: bytes = module.token_bytes(_n(nbytes))
        return data

    def token_hex(nbytes: Any = None) -> str:
        """secrets.token_hex -- sandboxed: sizes over max_repeat_bytes are refused."""
        text: str = module.token_hex(_n(nbytes))
        return text

    def token_urlsafe(nbytes: Any = None) -> str:
        """secrets.token_urlsafe -- sandboxed: sizes over max_repeat_bytes are refused."""
        text: str = module.token_urlsafe(_n(nbytes))
        return text

    def randbits(k: int) -> int:
        """secrets.randbits -- sandboxed: results over max_int_bits are refused."""
        lim.int_bits("secrets.randbits", ix(k))
        bits: int = module.randbits(k)
        return bits

    attrs = only(module, ("choice", "randbelow", "compare_digest", "DEFAULT_ENTROPY"))
    attrs.update(token_bytes=token_bytes, token_hex=token_hex, token_urlsafe=token_urlsafe)
    attrs["randbits"] = randbits
    return attrs, {"SystemRandom": "use random.SystemRandom"}


# -- shlex, collections.abc -------------------------------------------------------------


def _shlex(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    def split(s: Any, comments: bool = False, posix: bool = True) -> list[str]:
        """shlex.split(s) -- split a command line like a POSIX shell."""
        if s is None:
            raise ValueError("s argument must not be None")
        parts: list[str] = module.split(s, comments, posix)
        return parts

    attrs = {"split": split, "quote": module.quote, "join": module.join}
    return attrs, {"shlex": "reads stdin and opens files for 'source' requests; use shlex.split"}


def _collections_abc(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    return only(module, tuple(module.__all__)), {}


# -- copy -------------------------------------------------------------------------------


def _guarded_copy_module() -> dict[str, Any]:
    """A private instance of the stdlib's ``copy`` module whose ``_reconstruct`` applies
    the state of the snippet's own objects through the write guard."""
    loader = _copy.__loader__
    code = loader.get_code("copy")  # type: ignore[union-attr]
    ns: dict[str, Any] = {"__name__": "copy", "__builtins__": builtins}
    exec(code, ns)
    real_reconstruct = ns["_reconstruct"]
    deepcopy = ns["deepcopy"]

    def _reconstruct(  # noqa: PLR0917 - the stdlib's signature
        x: Any,
        memo: Any,
        func: Any,
        args: Any,
        state: Any = None,
        listiter: Any = None,
        dictiter: Any = None,
        *,
        deepcopy: Any = deepcopy,
    ) -> Any:
        if not is_owned(type(x)) and not is_owned(x):  # the host class's own protocol
            # ... with a memo of its own: the snippet's (its deepcopy(x, memo) argument,
            # or the one its __deepcopy__ gets) would receive copies of the host
            # object's private state and, once copied, the state itself (copy keeps
            # the originals alive in memo[id(memo)]): the real __dict__ of the shared
            # size limits behind pow's bound method, or the unchecked bytes constructor
            return real_reconstruct(
                x,
                None if memo is None else {},
                func,
                args,
                state,
                listiter,
                dictiter,
                deepcopy=deepcopy,
            )
        deep = memo is not None
        if deep and args:
            args = deepcopy(args, memo)
        y = func(*args)
        if deep:
            memo[id(x)] = y
        if state is not None:
            if not is_owned(y):
                raise PolicyViolation(
                    "copy: the reduced state would be set on an object the snippet does not "
                    "own; only the snippet's own objects can be changed"
                )
            if deep:
                state = deepcopy(state, memo)
            setstate = getattr(type(y), "__setstate__", None)
            if setstate is not None and is_owned(setstate):  # the snippet's own method
                setstate(y, state)
                state = None
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            for source in (state, slotstate):
                if source:
                    for key, value in source.items():
                        guarded_setattr(y, key, value)
        if listiter is not None:
            for item in listiter:
                y.append(deepcopy(item, memo) if deep else item)
        if dictiter is not None:
            for k, v in dictiter:
                y[deepcopy(k, memo) if deep else k] = deepcopy(v, memo) if deep else v
        return y

    ns["_reconstruct"] = _reconstruct
    return ns


_COPY: dict[str, Any] = {}


def _copy_module(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    if not _COPY:
        _COPY.update(_guarded_copy_module())
    attrs = {name: _COPY[name] for name in ("copy", "deepcopy", "Error", "error")}
    return attrs, {}


MORE_SPECS = {
    "csv": _csv,
    "calendar": _calendar,
    "zoneinfo": _zoneinfo,
    "struct": _struct,
    "zlib": _zlib,
    "gzip": _gzip,
    "secrets": _secrets,
    "shlex": _shlex,
    "collections.abc": _collections_abc,
    "copy": _copy_module,
}

PER_EXECUTION_MORE = frozenset({"calendar"})
"""Views holding per-execution state (the calendar's first weekday, the streams)."""

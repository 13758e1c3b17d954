"""The sandbox's ``re``: CPython's ``re`` API, matched by the ``regex`` package under the
execution's deadline (issue 12).

CPython's regular-expression engine backtracks in C holding the GIL:
``re.match(r"(a+)+$", "a" * 32 + "b")`` runs for minutes and, in the thread runtime,
freezes the whole host (its event loop and the deadline included). Here every pattern is
compiled twice, both cached: by ``re`` (so syntax, ``re.error`` and its messages,
``flags``, ``groups`` and ``groupindex`` are CPython's own) and by ``regex`` in its
``re``-compatible VERSION0 mode, which does the matching with ``timeout=`` (the time left
before the deadline the runtime set for this thread with :func:`set_deadline`) and
``concurrent=True`` (the GIL is released while it matches a ``str``/``bytes``). Past the
deadline a match raises ``TimeoutError`` (and the runtime's stop follows).

:class:`Pattern` and :class:`Match` mirror ``re.Pattern``/``re.Match`` (``isinstance``
works with the view's ``re.Pattern``/``re.Match``); substitutions keep the size checks
of :mod:`ptcbox.sandbox._regexsize`. Patterns reach both engines as exact ``str``/
``bytes`` copies, so a ``str`` subclass's ``__hash__``/``__eq__`` never keys a
process-wide cache. A pattern ``re`` accepts but ``regex`` does not (none is known) is
matched by ``re``, without the deadline.
"""

from __future__ import annotations

import re
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import regex  # type: ignore[import-untyped]

from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._regexsize import estimate_expand, estimate_sub

if TYPE_CHECKING:
    from ptcbox.sandbox._limits import Limits

__all__ = ["Match", "Pattern", "re_functions", "set_deadline"]

_FLAGS = (
    (re.IGNORECASE, regex.IGNORECASE),
    (re.LOCALE, regex.LOCALE),
    (re.MULTILINE, regex.MULTILINE),
    (re.DOTALL, regex.DOTALL),
    (re.UNICODE, regex.UNICODE),
    (re.VERBOSE, regex.VERBOSE),
    (re.ASCII, regex.ASCII),
)


class _Local(threading.local):
    deadline: Callable[[], float] | None = None


_local = _Local()


def set_deadline(deadline: Callable[[], float] | None) -> None:
    """Set (``None``: clear) this thread's deadline: a function returning it, in
    ``time.perf_counter()`` seconds (it moves when the execution's clock is paused)."""
    _local.deadline = deadline


def _budget() -> float | None:
    deadline = _local.deadline
    if deadline is None:
        return None
    return max(deadline() - time.perf_counter(), 0.001)


_REGEX_OFF = off("regex")  # test-only ablation (see _ablation): CPython's engine matches

_GRACE_S = 0.5
_WAIT_LIMIT_S = 5.0


def _wait_out_deadline() -> None:
    """After a match ran out of time: wait until the deadline has passed (plus a grace),
    so that the runtime's own stop, a timeout result, comes before this ``TimeoutError``
    (``regex``'s clock can fire a hair before the runtime's deadline)."""
    deadline = _local.deadline
    if deadline is None:
        return
    give_up = time.perf_counter() + _WAIT_LIMIT_S
    while (now := time.perf_counter()) < give_up:
        left = deadline() - now + _GRACE_S
        if left <= 0:
            return
        time.sleep(min(left, 0.05))


def _plain(value: Any) -> Any:
    """An exact ``str``/``bytes`` copy of a pattern or subject (subclasses included)."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    return value


def _rx_flags(flags: int) -> int:
    out = int(regex.VERSION0)
    for re_flag, rx_flag in _FLAGS:
        if flags & re_flag:
            out |= int(rx_flag)
    return out


class Match:
    """``re.Match`` for sandboxed patterns (a view of a ``regex`` match)."""

    __slots__ = ("_lim", "_m", "_p")
    __class_getitem__ = classmethod(types.GenericAlias)  # type: ignore[var-annotated]
    __module__ = "re"

    def __init__(self, m: Any, pattern: Pattern) -> None:
        self._m = m
        self._p = pattern
        self._lim = pattern._lim

    @property
    def re(self) -> Pattern:
        return self._p

    @property
    def string(self) -> Any:
        return self._m.string

    @property
    def pos(self) -> int:
        return int(self._m.pos)

    @property
    def endpos(self) -> int:
        return int(self._m.endpos)

    @property
    def lastindex(self) -> int | None:
        return self._m.lastindex  # type: ignore[no-any-return]

    @property
    def lastgroup(self) -> str | None:
        index = self._m.lastindex  # re's meaning: the name of group lastindex, if any
        if index is None:
            return None
        for name, number in self._p.groupindex.items():
            if number == index:
                return name  # type: ignore[no-any-return]
        return None

    @property
    def regs(self) -> tuple[tuple[int, int], ...]:
        return tuple(self._m.regs)

    def group(self, *groups: Any) -> Any:
        return self._m.group(*groups)

    def __getitem__(self, group: Any) -> Any:
        return self._m.group(group)

    def groups(self, default: Any = None) -> tuple[Any, ...]:
        return tuple(self._m.groups(default))

    def groupdict(self, default: Any = None) -> dict[str, Any]:
        return dict(self._m.groupdict(default))

    def start(self, group: Any = 0) -> int:
        return int(self._m.start(group))

    def end(self, group: Any = 0) -> int:
        return int(self._m.end(group))

    def span(self, group: Any = 0) -> tuple[int, int]:
        start, end = self._m.span(group)
        return int(start), int(end)

    def expand(self, template: Any) -> Any:
        estimate_expand(self._lim, self._m, template)
        return self._m.expand(_plain(template))

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<re.Match object; span={self.span()!r}, match={self._m.group(0)!r}>"


class Pattern:
    """``re.Pattern`` for the sandbox: ``re``'s metadata, ``regex``'s matching."""

    __slots__ = ("_lim", "_re", "_rx")
    __class_getitem__ = classmethod(types.GenericAlias)  # type: ignore[var-annotated]
    __module__ = "re"

    def __init__(self, compiled: re.Pattern[Any], limits: Limits) -> None:
        self._re = compiled
        self._lim = limits
        try:  # None: CPython's re matches (only in the test-only ablation, see _ablation)
            self._rx: Any = (
                None if _REGEX_OFF else regex.compile(compiled.pattern, _rx_flags(compiled.flags))
            )
        except regex.error:  # pragma: no cover - no such pattern is known
            self._rx = None

    @property
    def pattern(self) -> Any:
        return self._re.pattern

    @property
    def flags(self) -> int:
        return self._re.flags

    @property
    def groups(self) -> int:
        return self._re.groups

    @property
    def groupindex(self) -> Any:
        return self._re.groupindex

    def __repr__(self) -> str:
        return repr(self._re)

    def __eq__(self, other: object) -> bool:
        return type(other) is Pattern and self._re == other._re

    def __hash__(self) -> int:
        return hash(self._re)

    def _call(self, method: str, string: Any, *args: Any, **kwargs: Any) -> Any:
        if self._rx is None:  # pragma: no cover - the regex ablation (tests only)
            if args and args[-1] is None:  # endpos: re takes no None
                args = args[:-1]
            return getattr(self._re, method)(string, *args, **kwargs)
        subject = _plain(string)
        if type(subject) is str or type(subject) is bytes:
            kwargs["concurrent"] = True
        try:
            return getattr(self._rx, method)(subject, *args, timeout=_budget(), **kwargs)
        except TimeoutError:
            _wait_out_deadline()
            raise

    def _wrap(self, m: Any) -> Match | None:
        return None if m is None else Match(m, self)

    def match(self, string: Any, pos: int = 0, endpos: int | None = None) -> Match | None:
        return self._wrap(self._call("match", string, pos, endpos))

    def search(self, string: Any, pos: int = 0, endpos: int | None = None) -> Match | None:
        return self._wrap(self._call("search", string, pos, endpos))

    def fullmatch(self, string: Any, pos: int = 0, endpos: int | None = None) -> Match | None:
        return self._wrap(self._call("fullmatch", string, pos, endpos))

    def findall(self, string: Any, pos: int = 0, endpos: int | None = None) -> list[Any]:
        return list(self._call("findall", string, pos, endpos))

    def finditer(self, string: Any, pos: int = 0, endpos: int | None = None) -> Iterator[Match]:
        for m in self._call("finditer", string, pos, endpos):
            yield Match(m, self)

    def split(self, string: Any, maxsplit: int = 0) -> list[Any]:
        return list(self._call("split", string, maxsplit))

    def _sub(self, method: str, repl: Any, string: Any, count: int) -> Any:
        if callable(repl):
            user = repl

            def repl(m: Any) -> Any:
                return user(Match(m, self))

        else:
            repl = _plain(repl)
        args, _ = estimate_sub(self._lim, self._rx or self._re, (repl, string), {})
        return self._call_sub(method, args[0], string, count)

    def _call_sub(self, method: str, repl: Any, string: Any, count: int) -> Any:
        if self._rx is None:  # pragma: no cover
            return getattr(self._re, method)(repl, string, count)
        subject = _plain(string)
        extra = {"concurrent": True} if type(subject) in (str, bytes) else {}
        try:
            return getattr(self._rx, method)(repl, subject, count, timeout=_budget(), **extra)
        except TimeoutError:
            _wait_out_deadline()
            raise

    def sub(self, repl: Any, string: Any, count: int = 0) -> Any:
        return self._sub("sub", repl, string, count)

    def subn(self, repl: Any, string: Any, count: int = 0) -> Any:
        return self._sub("subn", repl, string, count)


def re_functions(limits: Limits) -> dict[str, Any]:
    """The module-level functions and classes of the sandbox's ``re`` view."""

    def compile(pattern: Any, flags: int = 0) -> Pattern:
        """re.compile -- sandboxed: matches under the execution's deadline."""
        if type(pattern) is Pattern:
            if flags:
                raise ValueError("cannot process flags argument with a compiled pattern")
            return pattern
        return Pattern(re.compile(_plain(pattern), flags), limits)

    def match(pattern: Any, string: Any, flags: int = 0) -> Match | None:
        """re.match -- sandboxed: matches under the execution's deadline."""
        return compile(pattern, flags).match(string)

    def search(pattern: Any, string: Any, flags: int = 0) -> Match | None:
        """re.search -- sandboxed: matches under the execution's deadline."""
        return compile(pattern, flags).search(string)

    def fullmatch(pattern: Any, string: Any, flags: int = 0) -> Match | None:
        """re.fullmatch -- sandboxed: matches under the execution's deadline."""
        return compile(pattern, flags).fullmatch(string)

    def findall(pattern: Any, string: Any, flags: int = 0) -> list[Any]:
        """re.findall -- sandboxed: matches under the execution's deadline."""
        return compile(pattern, flags).findall(string)

    def finditer(pattern: Any, string: Any, flags: int = 0) -> Iterator[Match]:
        """re.finditer -- sandboxed: matches under the execution's deadline."""
        return compile(pattern, flags).finditer(string)

    def split(pattern: Any, string: Any, maxsplit: int = 0, flags: int = 0) -> list[Any]:
        """re.split -- sandboxed: matches under the execution's deadline."""
        return compile(pattern, flags).split(string, maxsplit)

    def sub(pattern: Any, repl: Any, string: Any, count: int = 0, flags: int = 0) -> Any:
        """re.sub -- sandboxed: under the deadline; the result size is checked."""
        return compile(pattern, flags).sub(repl, string, count)

    def subn(pattern: Any, repl: Any, string: Any, count: int = 0, flags: int = 0) -> Any:
        """re.subn -- sandboxed: under the deadline; the result size is checked."""
        return compile(pattern, flags).subn(repl, string, count)

    class Scanner:
        """re.Scanner -- sandboxed: the lexicon's phrases are matched by the sandbox's
        patterns, under the execution's deadline (the stdlib's compiles for CPython's
        engine, which holds the GIL)."""

        __module__ = "re"

        def __init__(self, lexicon: Any, flags: int = 0) -> None:
            self.lexicon = lexicon
            parts = [f"(?P<_ptc{index}>{phrase})" for index, (phrase, _) in enumerate(lexicon)]
            self.scanner = compile("|".join(parts), flags)
            self.match: Match | None = None

        def scan(self, string: Any) -> tuple[list[Any], Any]:
            result: list[Any] = []
            i = 0
            while True:
                m = self.scanner.match(string, i)
                if not m:
                    break
                j = m.end()
                if i == j:
                    break
                action = self.lexicon[int(str(m.lastgroup)[4:])][1]
                if callable(action):
                    self.match = m
                    action = action(self, m.group())
                if action is not None:
                    result.append(action)
                i = j
            return result, string[i:]

    def purge() -> None:
        """re.purge -- sandboxed: clears nothing (the caches are the process's)."""

    functions: dict[str, Callable[..., Any] | type] = {
        "compile": compile,
        "match": match,
        "search": search,
        "fullmatch": fullmatch,
        "findall": findall,
        "finditer": finditer,
        "split": split,
        "sub": sub,
        "subn": subn,
        "purge": purge,
        "Pattern": Pattern,
        "Match": Match,
        "Scanner": Scanner,
    }
    return functions

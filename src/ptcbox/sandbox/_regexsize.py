"""Size checks for ``re`` substitution: ``pattern.sub``/``subn`` and ``match.expand``.

Like ``str.replace``, one substitution call can build a result far larger than its inputs
(``re.sub("", "x" * 10**6, "a" * 10**5)`` is 100 GB) in a single C call. The estimate:

* a literal replacement (no backslash): at most ``len(s) + (len(s) + 1) * len(repl)``;
* a template with ``k`` backslashes (group references): every reference expands to at most
  one group, and without lookarounds a group lies inside its match and matches do not
  overlap, so at most ``len(s) * (1 + k) + (len(s) + 1) * len(repl)``.

When that bound is over ``max_repeat_bytes`` (or the pattern has a lookaround, whose groups
may reach outside the match), the substitution runs with a callable that expands each match
itself, checking each piece before building it and the running total after: exact, slower,
and only for large inputs. A callable ``repl`` is always wrapped that way: it can return the
same large string for every match, and the C code joins all pieces in one step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ptcbox.sandbox._limits import Limits

__all__ = ["estimate_expand", "estimate_sub"]

_LOOKAROUNDS = ("(?=", "(?<=")


def _len(value: Any) -> int | None:
    """The real length of a str/bytes/bytearray (subclasses cannot fake it), else None."""
    if isinstance(value, str):
        return str.__len__(value)
    if isinstance(value, bytes):
        return bytes.__len__(value)
    if isinstance(value, bytearray):
        return bytearray.__len__(value)
    return None


def _backslashes(template: Any) -> int:
    if isinstance(template, str):
        return str.count(template, "\\")
    if isinstance(template, bytes):
        return bytes.count(template, b"\\")
    return bytearray.count(template, b"\\")


def _has_lookaround(pattern: Any) -> bool:
    source = pattern.pattern
    if isinstance(source, bytes):
        source = source.decode("latin-1")
    return any(marker in source for marker in _LOOKAROUNDS)


def _max_group(match: Any) -> int:
    spans = (match.span(i) for i in range(match.re.groups + 1))
    return max(int(end) - int(start) for start, end in spans)


def estimate_expand(limits: Limits, match: Any, template: Any) -> None:
    """Raise when ``match.expand(template)`` would be over ``max_repeat_bytes``."""
    size = _len(template)
    if size is None:
        return  # expand raises its own TypeError
    refs = _backslashes(template)
    if refs:
        limits.repeat_bytes("re expand", size + refs * _max_group(match))


def _accumulating(
    limits: Limits, make_piece: Callable[[Any], Any], start: int
) -> Callable[[Any], Any]:
    total = start

    def piece(match: Any) -> Any:
        nonlocal total
        result = make_piece(match)
        size = _len(result)
        if size:
            total += size
            limits.repeat_bytes("re.sub", total)
        return result

    return piece


def _expander(limits: Limits, template: Any) -> Callable[[Any], Any]:
    def expand(match: Any) -> Any:
        estimate_expand(limits, match, template)
        return match.expand(template)

    return expand


def estimate_sub(
    limits: Limits, pattern: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Check ``pattern.sub(repl, string, count=0)``; return the (possibly wrapped) args."""
    repl = args[0] if args else kwargs.get("repl")
    string = args[1] if len(args) > 1 else kwargs.get("string")
    n = _len(string)
    if n is None or repl is None:
        return args, kwargs  # sub raises its own TypeError
    if callable(repl):
        new_repl: Any = _accumulating(limits, repl, n)
    else:
        lit = _len(repl)
        if lit is None:
            return args, kwargs
        refs = _backslashes(repl)
        bound = n * (1 + refs) + (n + 1) * lit
        if bound <= limits.max_repeat_bytes and (refs == 0 or not _has_lookaround(pattern)):
            return args, kwargs
        new_repl = _accumulating(limits, _expander(limits, repl) if refs else (lambda m: repl), n)
    if args:
        return (new_repl, *args[1:]), kwargs
    return args, {**kwargs, "repl": new_repl}

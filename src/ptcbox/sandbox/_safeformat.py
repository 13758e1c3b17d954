"""``str.format`` / ``str.format_map`` for snippets, every field lookup guarded.

A replacement field such as ``{0.name}`` or ``{p[sku]}`` reads attributes and items of
the arguments inside C code, past the compile-time guards (CVE-2023-41039 is this route
in RestrictedPython through ``string.Formatter``). The sandbox therefore never hands the
real C methods out: the getattr guard replaces them (bound or unbound, however they are
reached: ``s.format``, ``str.format``, ``S.format`` of a str subclass, ``super(S, s)``,
``typing.Text.format``) with the stand-ins built here, which run the formatting through
``string.Formatter`` with its lookups overridden: attributes through the sandbox's
getattr guard (the same checks as ``obj.name`` in snippet code), items as ``obj[key]``
(what snippet code does natively), and each field's final format spec through the same
width/precision check as ``format()`` and f-strings. A template whose fields look
nothing up (``"{}: {name:>8}"``, the common case) is checked once (cached) and then
formatted by the real C method: 5x faster, and CPython's own errors.

Design source: Zope's ``AccessControl.safe_formatter.SafeFormatter`` (a
``string.Formatter`` whose ``get_field`` walks the field with guarded getattr/getitem).
Error messages follow CPython's ``str.format`` where ``string.Formatter`` words them
differently (positional index out of range, positional fields in ``format_map``).
"""

from __future__ import annotations

import functools
import string
from _string import (  # type: ignore[import-not-found]
    formatter_field_name_split,
    formatter_parser,
)
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

__all__ = ["GuardedFormatter", "guarded_format_method"]

_STR_FORMAT: Final[Any] = str.format
_STR_FORMAT_MAP: Final[Any] = str.format_map


class _MapOnly(tuple[Any, ...]):
    """The positional arguments of a ``format_map`` call: none may be referenced."""

    __slots__ = ()


_MAP_ONLY: Final = _MapOnly()


class GuardedFormatter(string.Formatter):
    """``string.Formatter`` with guarded attribute access and checked format specs.

    Args:
        getattr_: The sandbox's getattr guard, ``getattr_(obj, name)``.
        check_spec: Raises when a format spec asks for too wide or too precise a field.
    """

    def __init__(self, getattr_: Callable[[Any, str], Any], check_spec: Callable[[str], None]):
        self._getattr = getattr_
        self.check_spec = check_spec

    def get_value(self, key: int | str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        """The argument a field names, with CPython's ``str.format`` errors."""
        if type(key) is int:
            if args is _MAP_ONLY:
                raise ValueError("Format string contains positional fields")
            if key >= len(args):
                raise IndexError(f"Replacement index {key} out of range for positional args tuple")
            return args[key]
        return kwargs[key]  # type: ignore[index]

    def get_field(
        self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> tuple[Any, int | str]:
        """``{first.attr[key]...}``: each ``.attr`` through the getattr guard."""
        first, rest = formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, part in rest:
            obj = self._getattr(obj, part) if is_attr else obj[part]
        return obj, first

    def format_field(self, value: Any, format_spec: str) -> Any:
        """``format(value, spec)`` after the size check ``format()`` applies."""
        self.check_spec(format_spec)
        return format(value, format_spec)

    def check_unused_args(self, used_args: Any, args: Any, kwargs: Any) -> None:
        """Unused arguments are fine, as for ``str.format``."""


@functools.lru_cache(maxsize=512)
def _simple_specs(template: str) -> tuple[str, ...] | None:
    """The format specs of ``template`` when no field looks anything up (no ``.``/``[``
    in a field name, no nested field in a spec), else ``None``: then the real method
    does nothing a snippet could not do with ``args[i]``/``kwargs[k]`` and ``format()``,
    and only the specs need the size check. ``template`` is an exact ``str`` (a subclass
    could answer the cache's ``__eq__``/``__hash__`` with a lie)."""
    specs = []
    try:
        for _, name, spec, _ in formatter_parser(template):
            if name is None:
                continue
            if "." in name or "[" in name or (spec and "{" in spec):
                return None
            specs.append(spec or "")
    except ValueError:
        return None  # the full formatter raises str.format's own error
    return tuple(specs)


def _format(
    formatter: GuardedFormatter, template: str, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> str:
    exact = template if type(template) is str else str.__str__(template)
    specs = _simple_specs(exact)
    if specs is None:
        return formatter.vformat(exact, args, kwargs)
    for spec in specs:
        formatter.check_spec(spec)
    if args is _MAP_ONLY:
        return _STR_FORMAT_MAP(exact, kwargs)  # type: ignore[no-any-return]
    return _STR_FORMAT(exact, *args, **kwargs)  # type: ignore[no-any-return]


def _descriptor_error(name: str, obj: Any) -> TypeError:
    return TypeError(
        f"descriptor '{name}' for 'str' objects doesn't apply to a '{type(obj).__name__}' object"
    )


def guarded_format_method(value: Any, formatter: GuardedFormatter) -> Callable[..., str]:
    """The stand-in for ``value``, a real ``str.format``/``format_map`` (bound or not).

    Raises:
        TypeError: ``value`` is neither (the guard only passes these four shapes).
    """
    if value is _STR_FORMAT:

        def format(self_: Any, /, *args: Any, **kwargs: Any) -> str:
            if not isinstance(self_, str):
                raise _descriptor_error("format", self_)
            return _format(formatter, self_, args, kwargs)

        return _named(format, value)
    if value is _STR_FORMAT_MAP:

        def format_map(self_: Any, mapping: Any, /) -> str:
            if not isinstance(self_, str):
                raise _descriptor_error("format_map", self_)
            return _format(formatter, self_, _MAP_ONLY, mapping)

        return _named(format_map, value)
    template = value.__self__
    if not isinstance(template, str) or value.__name__ not in ("format", "format_map"):
        raise TypeError(f"not a str formatting method: {value!r}")
    if value.__name__ == "format":

        def bound_format(*args: Any, **kwargs: Any) -> str:
            return _format(formatter, template, args, kwargs)

        return _named(bound_format, value)

    def bound_format_map(mapping: Any, /) -> str:
        return _format(formatter, template, _MAP_ONLY, mapping)

    return _named(bound_format_map, value)


def _named(fn: Callable[..., str], real: Any) -> Callable[..., str]:
    fn.__name__ = fn.__qualname__ = real.__name__
    fn.__doc__ = real.__doc__
    return fn

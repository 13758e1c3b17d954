"""The snippet's builtins: safe ones as is, guarded ones wrapped, the rest left out."""

from __future__ import annotations

import builtins
import operator
import types
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Final

from ptcbox.errors import PolicyViolation, ToolError
from ptcbox.sandbox._dataspecs import seal_class
from ptcbox.sandbox._dunders import guarded_vars
from ptcbox.sandbox._exceptstar import EXCEPT_STAR_GUARD, check_except_star
from ptcbox.sandbox._guards import (
    AttributeGuards,
    guarded_delattr,
    guarded_setattr,
    guarded_write,
    guarded_write_private,
)
from ptcbox.sandbox._limits import Limits
from ptcbox.sandbox._names import NOT_NATIVE_ATTRS, is_reserved
from ptcbox.sandbox._owner import register_class
from ptcbox.sandbox._scope import snippet_dir, snippet_globals, snippet_locals
from ptcbox.sandbox._sized import SizedConstructor, make_safe_type

__all__ = ["EXCLUDED_BUILTINS", "make_base_builtins"]

EXCLUDED_BUILTINS: Final[types.MappingProxyType[str, str]] = types.MappingProxyType(
    {
        "eval": "runs a string as code, outside the sandbox's compile-time checks",
        "exec": "runs a string as code, outside the sandbox's compile-time checks",
        "compile": "builds code objects outside the sandbox's checks",
        "open": "file-system access",
        "input": "reads the host's stdin (blocks forever)",
        "breakpoint": "starts a debugger with full access",
        "help": "interactive; reads stdin and imports arbitrary modules",
        "vars (of other objects)": "returns __dict__: private attributes and guard-free "
        "access; vars(obj) of the snippet's own instances works",
        "globals/locals/vars() (writes)": "read-only views of the snippet's own names, "
        "without __builtins__ and the sandbox's _names_ (the real dict holds the guards, B07)",
        "memoryview": "raw buffer access",
        "__import__": "replaced by a guarded version (allowlisted, read-only modules)",
        "copyright": "interactive helper",
        "credits": "interactive helper",
        "license": "interactive helper; reads files",
        "type (3 arguments)": "builds classes from a dict of arbitrary (dunder) names; "
        "type(obj) with one argument works",
        "bytes/bytearray (huge sizes)": "bytes(n)/bytearray(n) over max_repeat_bytes are "
        "refused; otherwise as usual",
    }
)
"""Builtins a snippet does not get (or gets only in part), each with the reason."""

_PLAIN: Final = [
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "callable",
    "chr",
    "classmethod",
    "complex",
    "dict",
    "divmod",
    "enumerate",
    "filter",
    "float",
    "frozenset",
    "hash",
    "hex",
    "id",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "map",
    "max",
    "min",
    "next",
    "object",
    "oct",
    "ord",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "zip",
    "NotImplemented",
    "Ellipsis",
]


def _exception_names() -> list[str]:
    return [
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    ]


def _is_metaclass(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, type)


def _build_class(func: Any, name: Any, /, *bases: Any, **kwargs: Any) -> Any:
    """Class statements: refuse ``metaclass=`` and metaclasses, record the class as the
    snippet's.

    Bases are checked after ``__mro_entries__`` (``class M(typing.Type)`` derives from
    ``type``), and the result once more: a metaclass is a 3-argument ``type()``.
    """
    if "metaclass" in kwargs:
        raise PolicyViolation("class keyword 'metaclass' is not allowed in the sandbox")
    for key in kwargs:
        if key.startswith("_"):  # host metaclasses' private switches (EnumType's _simple)
            raise PolicyViolation(f"class keyword {key!r} is not allowed in the sandbox")
    if any(_is_metaclass(base) for base in types.resolve_bases(bases)):
        raise PolicyViolation("subclassing type (metaclasses) is not allowed in the sandbox")
    cls = builtins.__build_class__(func, name, *bases, **kwargs)
    if _is_metaclass(cls):
        raise PolicyViolation("subclassing type (metaclasses) is not allowed in the sandbox")
    register_class(cls)
    seal_class(cls)
    return cls


def _apply(func: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``f(*args, **kwargs)`` in compiled code: keyword names are checked."""
    for key in kwargs:
        # a str subclass could answer startswith() with a lie
        if type(key) is not str or key.startswith("__") or is_reserved(key):
            raise PolicyViolation(f"keyword argument {str.__str__(key)!r} is not allowed")
    return func(*args, **kwargs)


def _numiter(obj: Any) -> Any:
    """The iterable of a loop the compiler proved numeric: check it is range/enumerate."""
    tp = type(obj)
    if tp is range or tp is enumerate:
        return obj
    return _checked_numbers(obj)


def _checked_numbers(obj: Any) -> Any:
    for item in obj:
        value = item[0] if type(item) is tuple and item else item
        if type(value) not in (int, float, bool):
            raise PolicyViolation(
                "a loop over range()/enumerate() got non-numeric items: the name is "
                "shadowed by a tool or global; rename it"
            )
        yield item


def _match_args(*classes: Any) -> None:
    """Before a ``match`` with positional class patterns: check each ``__match_args__``.

    Class patterns read attributes natively, so the names must be ones the getattr guard
    hands out unchanged: public, not interpreter internals, and not a name whose value the
    guard checks or wraps (``format``, ``ljust``, ``register`` ...).
    """
    for cls in classes:
        names = getattr(cls, "__match_args__", ())
        if not isinstance(names, tuple):
            continue  # the match statement itself raises TypeError
        for name in names:
            if type(name) is not str or name.startswith("_") or name in NOT_NATIVE_ATTRS:
                raise PolicyViolation(
                    f"class pattern {getattr(cls, '__name__', '?')}(...) would read attribute "
                    f"{name!r}, which is not allowed"
                )


_INPLACE: Final = {
    name: getattr(operator, name)
    for name in ("iadd", "isub", "imul", "imatmul", "itruediv", "ifloordiv", "imod", "ipow",
                 "ilshift", "irshift", "iand", "ixor", "ior")
}  # fmt: skip


def _make_augattr(getattr_: Callable[[Any, str], Any]) -> Callable[..., None]:
    def _augattr(obj: Any, name: str, op: Any, value: Any, /) -> None:
        """``obj.name op= value`` where the read must be guarded (a size guard applies, or
        ``name`` is one whose value the getattr guard checks, e.g. ``s.format += x``)."""
        fn = _INPLACE[op] if type(op) is str else op
        setattr(obj, name, fn(getattr_(obj, name), value))

    return _augattr


def _augitem(obj: Any, key: Any, op: Callable[[Any, Any], Any], value: Any) -> None:
    obj[key] = op(obj[key], value)


class _Exit:
    """``exit()``/``quit()`` as in a script: raise ``SystemExit(code)``, which ends the
    execution (code ``None``/``0``: a success), never the host."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, code: Any = None) -> None:
        raise SystemExit(code)

    def __repr__(self) -> str:
        return f"Use {self._name}() or Ctrl-D (i.e. EOF) to exit"


def make_base_builtins(limits: Limits) -> dict[str, Any]:
    """The builtins dict shared by executions with these limits (print/import added later)."""
    guards = AttributeGuards(limits.size_wrapper, limits.check_format_spec)
    b: dict[str, Any] = {name: getattr(builtins, name) for name in _PLAIN}
    b.update({name: getattr(builtins, name) for name in _exception_names()})
    sized: dict[type, Any] = {
        real: SizedConstructor(real, real.__name__, limits.check_sized_constructor)
        for real in (bytes, bytearray)
    }
    sized[Fraction] = SizedConstructor(Fraction, "Fraction", limits.check_fraction, None)
    b.update({"bytes": sized[bytes], "bytearray": sized[bytearray]})
    b.update(
        {
            "type": make_safe_type(sized),
            "getattr": guards.getattr,
            "hasattr": guards.hasattr,
            "setattr": guarded_setattr,
            "delattr": guarded_delattr,
            "pow": limits.builtin_pow,
            "format": limits.format,
            "vars": guarded_vars,
            "dir": snippet_dir,
            "globals": snippet_globals,
            "locals": snippet_locals,
            "ToolError": ToolError,
            "exit": _Exit("exit"),
            "quit": _Exit("quit"),
            "__build_class__": _build_class,
            # guards called by compiled code
            "_getattr_": guards.getattr,
            "_getattr_private_": guards.getattr_private,
            "_write_": guarded_write,
            "_write_private_": guarded_write_private,
            "_apply_": _apply,
            "_numiter_": _numiter,
            "_augattr_": _make_augattr(guards.getattr),
            "_match_args_": _match_args,
            "_augitem_": _augitem,
            "_pow_": limits.pow,
            "_lshift_": limits.lshift,
            "_mul_": limits.mul,
            "_mod_": limits.mod,
            "_ipow_": limits.ipow,
            "_ilshift_": limits.ilshift,
            "_imul_": limits.imul,
            "_imod_": limits.imod,
            "_format_": limits.fstring_format,
            EXCEPT_STAR_GUARD: check_except_star,
        }
    )
    return b

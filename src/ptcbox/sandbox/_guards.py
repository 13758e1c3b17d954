"""Attribute guards: what compiled snippets call instead of plain attribute access.

The compiled code calls ``_getattr_(obj, "name")`` for attribute reads that are not in
:data:`~ptcbox.sandbox._names.NATIVE_ATTRS`, ``_write_(obj).name = v`` for public
attribute writes and ``_write_private_(obj)._name = v`` for private ones. The snippet's
``getattr``/``hasattr``/``setattr``/``delattr`` builtins are the same guards, so names
computed at run time get the same checks as literal ones.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Final

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._names import (
    ALLOWED_DUNDER_READS,
    FORMAT_METHODS,
    OWNER_ONLY_ATTRS,
    RESTRICTED_ATTRS,
    SIZE_GUARDED_METHODS,
    is_dunder,
    is_private,
    restricted_reason,
)
from ptcbox.sandbox._owner import (
    OWNED_ATTR,
    PRIVATE_ATTR,
    SANDBOX_MARK,
    describe,
    is_owned,
    private_ok,
)

__all__ = [
    "FORMAT_REFUSED",
    "AttributeGuards",
    "refuse_attribute",
]

_MISSING: Final = object()
_NAMEDTUPLE_API: Final = frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"})
_ModuleType = types.ModuleType
_SPECIAL_NAMES: Final = RESTRICTED_ATTRS | FORMAT_METHODS | SIZE_GUARDED_METHODS | OWNER_ONLY_ATTRS

FORMAT_REFUSED: Final = (
    "str.format() and str.format_map() are not available in the sandbox (their format "
    "fields can reach attributes of the arguments, CVE-2023-41039); use an f-string "
    'instead, e.g. f"{name}: {value:.2f}"'
)


def refuse_attribute(name: str, obj: Any = _MISSING) -> PolicyViolation:
    """The error for an attribute the sandbox never hands out."""
    where = "" if obj is _MISSING else f" of {describe(obj)}"
    if name == "__class__":
        hint = "; use type(obj) instead"
    elif name in ("__dict__", "__slots__"):
        hint = "; use vars-free code such as dataclasses.asdict(obj) or explicit attributes"
    elif name in RESTRICTED_ATTRS:
        hint = f" ({restricted_reason(name)})"
    elif is_dunder(name):
        hint = " (special attributes are off limits)"
    else:
        hint = ""
    return PolicyViolation(f"access to attribute {name!r}{where} is not allowed{hint}")


class AttributeGuards:
    """The attribute guards for one set of size limits.

    Args:
        size_wrapper: ``size_wrapper(obj, name)`` returns a size-checked version of the
            str/bytes/int method ``name`` of ``obj`` (see ``_limits.py``), or ``None`` when
            ``obj`` is not a str/bytes/int (then the plain attribute is returned).
    """

    __slots__ = ("getattr", "getattr_private", "hasattr", "size_wrapper")

    def __init__(self, size_wrapper: Callable[[Any, str], Any]) -> None:
        self.size_wrapper = size_wrapper
        special = self._special

        def guarded_getattr(obj: Any, name: str, default: Any = _MISSING, /) -> Any:
            """getattr(object, name[, default]) -- sandboxed: private, special and
            interpreter-internal attributes are refused."""
            if type(name) is not str:
                raise TypeError(f"attribute name must be string, not {type(name).__name__!r}")
            if name in _SPECIAL_NAMES or name[:1] == "_":
                value = special(obj, name, default)
            elif default is _MISSING:
                value = getattr(obj, name)
            else:
                value = getattr(obj, name, default)
            if type(value) is _ModuleType:
                raise PolicyViolation(
                    f"attribute {name!r} of {describe(obj)} is a module; import allowed "
                    "modules with an import statement instead"
                )
            return value

        def guarded_hasattr(obj: Any, name: str, /) -> bool:
            """hasattr(obj, name) -- sandboxed: answers without handing anything out."""
            if type(name) is not str:
                raise TypeError(f"attribute name must be string, not {type(name).__name__!r}")
            if name in RESTRICTED_ATTRS:
                return False
            return hasattr(obj, name)

        def guarded_getattr_private(obj: Any, name: str, /) -> Any:
            """Compiled ``obj._name``: fast when ``obj`` is the snippet's own object."""
            tp = type(obj)
            if getattr(tp, PRIVATE_ATTR, None) is tp:
                return getattr(obj, name)
            return guarded_getattr(obj, name)

        self.getattr = guarded_getattr
        self.getattr_private = guarded_getattr_private
        self.hasattr = guarded_hasattr

    def _special(self, obj: Any, name: str, default: Any) -> Any:
        if name in RESTRICTED_ATTRS:
            raise refuse_attribute(name, obj)
        if name[:1] == "_":
            if is_private(name):
                if name in _NAMEDTUPLE_API and (
                    isinstance(obj, tuple) or (isinstance(obj, type) and issubclass(obj, tuple))
                ):
                    pass  # namedtuple's public API starts with "_" (_asdict, _replace, ...)
                elif not private_ok(obj):
                    raise PolicyViolation(
                        f"access to private attribute {name!r} of {describe(obj)} is not "
                        "allowed; private attributes are only accessible on the snippet's "
                        "own classes and objects"
                    )
            elif name not in ALLOWED_DUNDER_READS:
                raise refuse_attribute(name, obj)
            elif name == "__init__" and not (
                is_owned(obj) or (type(obj) is super and is_owned(getattr(obj, "__self__", None)))
            ):
                raise PolicyViolation(
                    f"'__init__' of {describe(obj)} is not accessible; call "
                    "super().__init__(...) from your own class instead"
                )
        elif name in FORMAT_METHODS:
            if isinstance(obj, str) or obj is str:
                raise PolicyViolation(FORMAT_REFUSED)
        elif name in SIZE_GUARDED_METHODS:
            wrapped = self.size_wrapper(obj, name)
            if wrapped is not None:
                return wrapped
        elif name in OWNER_ONLY_ATTRS:
            value = getattr(obj, name) if default is _MISSING else getattr(obj, name, default)
            owner = getattr(value, "__self__", None)
            if isinstance(owner, type) and not is_owned(owner):
                raise PolicyViolation(
                    f"{describe(owner)}.{name}() would change a class shared with the host; "
                    "it is only allowed on the snippet's own classes"
                )
            return value
        if default is _MISSING:
            return getattr(obj, name)
        return getattr(obj, name, default)


def check_attribute_write(obj: Any, name: str, action: str) -> None:
    """Raise unless the snippet may set/delete ``obj.name``.

    Raises:
        PolicyViolation: The name is special/internal, or ``obj`` is not the snippet's.
    """
    if type(name) is not str:
        raise TypeError(f"attribute name must be string, not {type(name).__name__!r}")
    if (
        name in RESTRICTED_ATTRS
        or is_dunder(name)
        or (name.startswith("_") and name.endswith("_") and len(name) > 1)
    ):
        raise refuse_attribute(name, obj)
    if is_private(name):
        if not private_ok(obj):
            raise PolicyViolation(
                f"cannot {action} private attribute {name!r} of {describe(obj)}: only the "
                "snippet's own classes and objects can be changed"
            )
        return
    if not (is_owned(obj) or (isinstance(obj, BaseException) and not isinstance(obj, type))):
        raise PolicyViolation(
            f"cannot {action} attribute {name!r} of {describe(obj)}: only functions, "
            "classes and objects created by the snippet can be modified"
        )


def guarded_write(obj: Any) -> Any:
    """``_write_(obj)`` for ``obj.public = v`` / ``del obj.public`` in compiled code."""
    if getattr(type(obj), OWNED_ATTR, None) is SANDBOX_MARK:
        return obj
    if is_owned(obj) or (isinstance(obj, BaseException) and not isinstance(obj, type)):
        return obj
    raise PolicyViolation(
        f"cannot modify {describe(obj)}: only functions, classes and objects created by the "
        "snippet can be modified (modules and shared classes are read-only)"
    )


def guarded_write_private(obj: Any) -> Any:
    """``_write_private_(obj)`` for ``obj._private = v`` in compiled code."""
    tp = type(obj)
    if getattr(tp, PRIVATE_ATTR, None) is tp or private_ok(obj):
        return obj
    raise PolicyViolation(
        f"cannot modify private attributes of {describe(obj)}: only the snippet's own "
        "classes and objects can be changed"
    )


def guarded_setattr(obj: Any, name: str, value: Any, /) -> None:
    """setattr(obj, name, value) -- sandboxed: only the snippet's own objects."""
    check_attribute_write(obj, name, "set")
    setattr(obj, name, value)


def guarded_delattr(obj: Any, name: str, /) -> None:
    """delattr(obj, name) -- sandboxed: only the snippet's own objects."""
    check_attribute_write(obj, name, "delete")
    delattr(obj, name)

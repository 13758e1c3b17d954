"""Attribute guards: what compiled snippets call instead of plain attribute access.

The compiled code calls ``_getattr_(obj, "name")`` for attribute reads that are not in
:data:`~ptcbox.sandbox._names.NATIVE_ATTRS`, ``_write_(obj).name = v`` for public
attribute writes and ``_write_private_(obj)._name = v`` for private ones. The snippet's
``getattr``/``hasattr``/``setattr``/``delattr`` builtins are the same guards, so names
computed at run time get the same checks as literal ones.
"""

from __future__ import annotations

import abc
import types
from collections.abc import Callable
from typing import Any, Final

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._dataspecs import DATA_ATTRS, data_attribute
from ptcbox.sandbox._dunders import GUARDED_DUNDER_READS, dunder_value
from ptcbox.sandbox._names import (
    ALLOWED_DUNDER_READS,
    FORMAT_METHODS,
    OWNER_ONLY_ATTRS,
    RESTRICTED_ATTRS,
    VALUE_CHECKED_ATTRS,
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
from ptcbox.sandbox._safeformat import GuardedFormatter, guarded_format_method
from ptcbox.sandbox._strsize import is_size_guarded

__all__ = [
    "FORMAT_REFUSED",
    "AttributeGuards",
    "allow_instance_writes",
    "checked_attribute",
    "is_str_format",
    "refuse_attribute",
    "refuse_value",
]

_MISSING: Final = object()
_FORMAT_OFF: Final = off("format")  # test-only ablation switches (see _ablation)
_METACLASS_OFF: Final = off("metaclass")
_WRITABLE: tuple[type, ...] = (BaseException, types.SimpleNamespace)
"""Instances whose public attributes any snippet may set, as in CPython (exceptions,
``types.SimpleNamespace``): their classes stay read-only."""


def allow_instance_writes(cls: type) -> None:
    """Let snippets set public attributes of ``cls``'s instances, for the whole process.

    Only for a process that is the execution's own (a ``SubprocessRuntime`` worker lets
    snippets set ``decimal.getcontext().prec``, its own thread's context, which the OS
    limits bound).
    """
    global _WRITABLE
    if cls not in _WRITABLE:
        _WRITABLE = (*_WRITABLE, cls)


_NAMEDTUPLE_API: Final = frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"})
_ModuleType = types.ModuleType
_SPECIAL_NAMES: Final = RESTRICTED_ATTRS | VALUE_CHECKED_ATTRS | frozenset(DATA_ATTRS)
_STR_FORMAT: Final[Any] = str.format
_STR_FORMAT_MAP: Final[Any] = str.format_map
_BOUND_C_METHOD: Final[Any] = type("".format)

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


def is_str_format(value: Any) -> bool:
    """True for ``str.format``/``format_map``, unbound or bound to any str (subclass).

    Judged on the value, not on where it was read from: ``S.format`` for a str subclass,
    ``super(S, s).format`` and ``typing.Text.format`` are all the same C method (F3). A
    snippet's own method named ``format`` is a Python function and passes.
    """
    if value is _STR_FORMAT or value is _STR_FORMAT_MAP:
        return True
    return (
        type(value) is _BOUND_C_METHOD
        and value.__name__ in FORMAT_METHODS
        and isinstance(value.__self__, str)
    )


def refuse_value(obj: Any, name: str, value: Any) -> None:
    """Raise when ``value`` (read as ``obj.name``) must not reach snippet code.

    Modules, metaclasses (3-argument ``type()`` by another name, F2) and ``str.format``;
    ``register`` bound to a class the snippet does not own.
    """
    tv = type(value)
    if tv is _ModuleType:
        raise PolicyViolation(
            f"attribute {name!r} of {describe(obj)} is a module; import allowed "
            "modules with an import statement instead"
        )
    if tv is type and issubclass(value, type) and not _METACLASS_OFF:
        raise PolicyViolation(
            f"attribute {name!r} of {describe(obj)} is a metaclass, which is not available "
            "in the sandbox (it builds classes from arbitrary names); use a class statement"
        )
    if name in VALUE_CHECKED_ATTRS:
        if is_str_format(value):
            raise PolicyViolation(FORMAT_REFUSED)
        owner = getattr(value, "__self__", None) if name in OWNER_ONLY_ATTRS else None
        if isinstance(owner, type) and not is_owned(owner):
            raise PolicyViolation(
                f"{describe(owner)}.{name}() would change a class shared with the host; "
                "it is only allowed on the snippet's own classes"
            )
        shared = _shared_abc(owner) if isinstance(owner, type) else None
        if shared is not None:
            # ABCMeta.__subclasscheck__ of an ABC consults its subclasses' registries:
            # registering on a snippet subclass of Mapping makes isinstance(5, Mapping)
            # true for the host too
            raise PolicyViolation(
                f"{describe(owner)}.{name}() would change isinstance() of "
                f"{shared.__qualname__}, an abstract class shared with the host; "
                "subclass it instead of registering"
            )


def _shared_abc(cls: type) -> type | None:
    """An abstract base class in ``cls``'s MRO that the snippet does not own."""
    for klass in cls.__mro__[1:]:
        if isinstance(klass, abc.ABCMeta) and not is_owned(klass):
            return klass
    return None


def check_readable(obj: Any, name: str) -> None:
    """Raise unless the snippet may read ``obj.name`` (by name only; see refuse_value)."""
    if name in RESTRICTED_ATTRS:
        raise refuse_attribute(name, obj)
    if name in DATA_ATTRS:
        data_attribute(obj, name)
    if name[:1] != "_":
        return
    if is_private(name):
        if name in _NAMEDTUPLE_API and (
            isinstance(obj, tuple) or (isinstance(obj, type) and issubclass(obj, tuple))
        ):
            return  # namedtuple's public API starts with "_" (_asdict, _replace, ...)
        if not private_ok(obj):
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


def checked_attribute(obj: Any, name: str) -> Any:
    """``obj.name`` read by host helpers on the snippet's behalf (``dataclasses.asdict``
    and friends read fields by name): the getattr guard's rules, except that size-checked
    C methods are refused instead of wrapped.

    Raises:
        PolicyViolation: The guard would not hand the attribute out unchanged.
    """
    if type(name) is not str:
        raise TypeError(f"attribute name must be string, not {type(name).__name__!r}")
    check_readable(obj, name)
    value = getattr(obj, name)
    refuse_value(obj, name, value)
    if is_size_guarded(value):
        raise PolicyViolation(
            f"attribute {name!r} of {describe(obj)} is the C method {name!r}, which the "
            "sandbox only hands out size-checked; rename the field"
        )
    return value


_SET_OBJ = AttributeError.obj.__set__  # type: ignore[attr-defined]
"""Sets ``AttributeError.obj`` even on a subclass that shadows the attribute."""


class AttributeGuards:
    """The attribute guards for one set of size limits.

    Args:
        size_wrapper: ``size_wrapper(value)`` returns a size-checked stand-in when
            ``value`` is a guarded C method (``s.ljust``, ``str.ljust``, see ``_strsize``),
            else ``None`` (then the value is handed out as is).
        check_format_spec: Raises when a format spec is too wide or precise (what
            ``format()`` checks); applied to every field of ``str.format``/``format_map``,
            whose stand-ins (``_safeformat``) look attributes up through this guard.
    """

    __slots__ = ("formatter", "getattr", "getattr_private", "hasattr", "size_wrapper")

    def __init__(
        self,
        size_wrapper: Callable[[Any], Any],
        check_format_spec: Callable[[str], None] | None = None,
    ) -> None:
        self.size_wrapper = size_wrapper
        special = self._special

        def guarded_getattr(obj: Any, name: str, default: Any = _MISSING, /) -> Any:
            """getattr(object, name[, default]) -- sandboxed: private, special and
            interpreter-internal attributes are refused."""
            if type(name) is not str:
                raise TypeError(f"attribute name must be string, not {type(name).__name__!r}")
            try:
                if name in _SPECIAL_NAMES or name[:1] == "_":
                    value = special(obj, name, default)
                elif default is _MISSING:
                    value = getattr(obj, name)
                else:
                    value = getattr(obj, name, default)
            except AttributeError as exc:
                # .obj would be whatever object the lookup failed on: the real class
                # or function inside a sandbox wrapper (issue 12); the snippet gets
                # the object it asked about, which it holds already
                _SET_OBJ(exc, obj)
                raise
            tv = type(value)
            if tv is _ModuleType or tv is type:  # modules; metaclasses (cheap first test)
                refuse_value(obj, name, value)
            return value

        def guarded_hasattr(obj: Any, name: str, /) -> bool:
            """hasattr(obj, name) -- sandboxed: answers without handing anything out."""
            if type(name) is not str:
                raise TypeError(f"attribute name must be string, not {type(name).__name__!r}")
            if name in RESTRICTED_ATTRS:
                return False
            return hasattr(obj, name)

        last_ok: type | None = None

        def guarded_getattr_private(obj: Any, name: str, /) -> Any:
            """Compiled ``obj._name``: fast when ``obj`` is the snippet's own object.

            The mark is read from the exact class's ``__dict__`` (never with an attribute
            lookup, which descriptors control) and is only ever set by the sandbox on
            classes that snippet class statements created (see ``_owner.py``). The last
            class that passed is remembered (a class never loses the mark): hot loops pay
            one identity test.
            """
            nonlocal last_ok
            tp = type(obj)
            if tp is last_ok:
                return getattr(obj, name)
            if tp.__dict__.get(PRIVATE_ATTR) is tp:
                last_ok = tp
                return getattr(obj, name)
            return guarded_getattr(obj, name)

        self.getattr = guarded_getattr
        self.formatter = (
            None
            if check_format_spec is None
            else GuardedFormatter(guarded_getattr, check_format_spec)
        )
        self.getattr_private = guarded_getattr_private
        self.hasattr = guarded_hasattr

    def _special(self, obj: Any, name: str, default: Any) -> Any:
        if name in GUARDED_DUNDER_READS:
            if name == "__setattr__" and obj is object:
                return object_setattr
            if default is _MISSING:  # _dunders has its own sentinel: never pass ours on
                return dunder_value(obj, name)
            return dunder_value(obj, name, default)
        check_readable(obj, name)
        value = getattr(obj, name) if default is _MISSING else getattr(obj, name, default)
        if name in VALUE_CHECKED_ATTRS:
            if self.formatter is not None and is_str_format(value):
                if _FORMAT_OFF:  # test-only ablation (see _ablation)
                    return value
                return guarded_format_method(value, self.formatter)
            refuse_value(obj, name, value)
            wrapped = self.size_wrapper(value)
            if wrapped is not None:
                return wrapped
        return value


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
    if not (is_owned(obj) or (isinstance(obj, _WRITABLE) and not isinstance(obj, type))):
        raise PolicyViolation(
            f"cannot {action} attribute {name!r} of {describe(obj)}: only functions, "
            "classes and objects created by the snippet can be modified"
        )


_last_owned: list[type | None] = [None]
"""The last class whose instances passed ``guarded_write`` (ownership is permanent): hot
loops such as ``self.n += x`` pay one identity test instead of a ``__dict__`` read."""


def guarded_write(obj: Any) -> Any:
    """``_write_(obj)`` for ``obj.public = v`` / ``del obj.public`` in compiled code."""
    tp = type(obj)
    if tp is _last_owned[0]:
        return obj
    if tp.__dict__.get(OWNED_ATTR) is SANDBOX_MARK:
        _last_owned[0] = tp
        return obj
    if is_owned(obj) or (isinstance(obj, _WRITABLE) and not isinstance(obj, type)):
        return obj
    raise PolicyViolation(
        f"cannot modify {describe(obj)}: only functions, classes and objects created by the "
        "snippet can be modified (modules and shared classes are read-only)"
    )


def guarded_write_private(obj: Any) -> Any:
    """``_write_private_(obj)`` for ``obj._private = v`` in compiled code."""
    tp = type(obj)
    if tp.__dict__.get(PRIVATE_ATTR) is tp or private_ok(obj):
        return obj
    raise PolicyViolation(
        f"cannot modify private attributes of {describe(obj)}: only the snippet's own "
        "classes and objects can be changed"
    )


def guarded_setattr(obj: Any, name: str, value: Any, /) -> None:
    """setattr(obj, name, value) -- sandboxed: only the snippet's own objects."""
    check_attribute_write(obj, name, "set")
    setattr(obj, name, value)


def object_setattr(obj: Any, name: str, value: Any, /) -> None:
    """object.__setattr__(obj, name, value) -- sandboxed: only the snippet's own objects
    (the frozen-dataclass idiom ``object.__setattr__(self, "x", v)`` in ``__post_init__``)."""
    check_attribute_write(obj, name, "set")
    object.__setattr__(obj, name, value)


def guarded_delattr(obj: Any, name: str, /) -> None:
    """delattr(obj, name) -- sandboxed: only the snippet's own objects."""
    check_attribute_write(obj, name, "delete")
    delattr(obj, name)

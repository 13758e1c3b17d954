"""Module views for functools, dataclasses, typing, enum and abc.

These modules hand out functions that read or write attributes by a caller-chosen name,
evaluate annotation strings, or change the object they are given. Each such function is
replaced by a version that keeps the snippet on its own objects (F1):

* ``functools.update_wrapper``/``wraps`` copy only the standard wrapper attributes
  (``__module__``, ``__name__``, ``__qualname__``, ``__doc__``; ``__annotations__`` and
  ``__dict__`` only from the snippet's own objects), never a name the caller picks;
* ``functools.singledispatch(...).register`` and ``singledispatchmethod.register`` take the
  class from an annotation object, never by evaluating a string (``get_type_hints`` would
  run it as unrestricted code with the snippet's globals);
* ``dataclasses.asdict``/``astuple``/``replace`` read fields with the getattr guard's rules;
  ``@dataclass`` refuses fields that shadow a guarded method of a non-snippet base
  (``class D(str): format: int``);
* ``typing.get_origin``/``get_args`` hand out the sandbox's ``type`` for the real one and
  refuse other metaclasses; ``typing.overload`` does not record into typing's process-wide
  registry (``get_overloads`` would read other executions' functions);
* ``abc.abstractmethod``/``update_abstractmethods`` (also reached as
  ``typing.abstractmethod``) only change the snippet's own objects.
"""

from __future__ import annotations

import abc
import copy
import dataclasses as _dc
import enum
import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._caches import install_typing_bypass
from ptcbox.sandbox._guards import checked_attribute
from ptcbox.sandbox._names import VALUE_CHECKED_ATTRS, is_reserved
from ptcbox.sandbox._owner import (
    OWNED_ATTR,
    SANDBOX_MARK,
    is_owned,
    register_class,
    require_owned,
)
from ptcbox.sandbox._specbase import Attrs, ModuleContext, public

__all__ = ["TYPE_SPECS"]

_MISSING = object()
_STANDARD_ASSIGNED = tuple(functools.WRAPPER_ASSIGNMENTS)
_STANDARD_UPDATED = ("__dict__",)


# -- functools ----------------------------------------------------------------------------


def _wrapper_value(wrapped: Any, attr: str) -> Any:
    if attr == "__annotations__":
        if not is_owned(wrapped):
            return _MISSING  # a host object's annotations can hold any host object
        value = getattr(wrapped, attr, _MISSING)
        return value if type(value) is dict else _MISSING
    value = getattr(wrapped, attr, _MISSING)
    return value if value is None or type(value) is str else _MISSING


def update_wrapper(
    wrapper: Any,
    wrapped: Any,
    assigned: Any = functools.WRAPPER_ASSIGNMENTS,
    updated: Any = functools.WRAPPER_UPDATES,
) -> Any:
    """functools.update_wrapper -- sandboxed: ``wrapper`` must be the snippet's own, and
    only the standard attributes are copied (``assigned`` a subset of
    ``WRAPPER_ASSIGNMENTS``, ``updated`` of ``("__dict__",)``; a host object's
    ``__annotations__`` and ``__dict__`` are not copied).

    Raises:
        PolicyViolation: ``wrapper`` is not the snippet's, or other names were asked for.
    """
    require_owned(wrapper, "functools.update_wrapper")
    assigned, updated = tuple(assigned), tuple(updated)
    bad = [a for a in assigned if a not in _STANDARD_ASSIGNED]
    bad += [u for u in updated if u not in _STANDARD_UPDATED]
    if bad:
        raise PolicyViolation(
            f"functools.update_wrapper copies only {', '.join(_STANDARD_ASSIGNED)} (assigned) "
            f"and __dict__ (updated) in the sandbox, not {', '.join(map(repr, bad))}"
        )
    for attr in assigned:
        value = _wrapper_value(wrapped, attr)
        if value is not _MISSING:
            setattr(wrapper, attr, value)
    if updated and is_owned(wrapped) and not isinstance(wrapped, type):
        extra = getattr(wrapped, "__dict__", None)
        if type(extra) is dict:
            clean = {k: v for k, v in extra.items() if type(k) is str and not is_reserved(k)}
            getattr(wrapper, "__dict__").update(clean)  # noqa: B009 - the wrapper's own dict
    wrapper.__wrapped__ = wrapped
    return wrapper


def wraps(
    wrapped: Any,
    assigned: Any = functools.WRAPPER_ASSIGNMENTS,
    updated: Any = functools.WRAPPER_UPDATES,
) -> Callable[[Any], Any]:
    """functools.wraps -- sandboxed: see ``update_wrapper``."""
    return functools.partial(update_wrapper, wrapped=wrapped, assigned=assigned, updated=updated)


def _is_dispatch_type(cls: Any) -> bool:
    if isinstance(cls, type):
        return True
    return typing.get_origin(cls) in (typing.Union, types.UnionType)


def _annotated_class(func: Any) -> Any:
    """The class of ``func``'s first annotation, as ``register(func)`` needs it."""
    if not is_owned(func) or type(func) is not types.FunctionType:
        raise PolicyViolation(
            "register(f) without a class reads f's annotations: only for the snippet's own "
            "functions; pass the class instead, e.g. @f.register(int)"
        )
    annotations = func.__annotations__
    if not annotations:
        raise TypeError(
            f"Invalid first argument to `register()`: {func!r}. Use either "
            "`@register(some_class)` or plain `@register` on an annotated function."
        )
    first = next(iter(annotations.values()))
    if isinstance(first, str | typing.ForwardRef):
        raise PolicyViolation(
            "string annotations are not evaluated in the sandbox (that would run them as "
            "code); pass the class instead, e.g. @f.register(int)"
        )
    return type(None) if first is None else first


def singledispatch(func: Any) -> Any:
    """functools.singledispatch -- sandboxed: ``register`` takes a class, or a function whose
    first annotation is a class object (annotation strings are never evaluated)."""
    dispatcher = functools.singledispatch(func)
    real_register = dispatcher.register

    def register(cls: Any, func: Any = None) -> Any:
        if func is None and not _is_dispatch_type(cls):
            cls, func = _annotated_class(cls), cls
        return real_register(cls, func)

    register.__doc__ = real_register.__doc__
    dispatcher.register = register  # type: ignore[method-assign]
    return dispatcher


class singledispatchmethod(functools.singledispatchmethod):  # type: ignore[type-arg]  # noqa: N801
    __doc__ = functools.singledispatchmethod.__doc__

    def __init__(self, func: Any) -> None:
        super().__init__(func)
        self.dispatcher = singledispatch(func)


singledispatchmethod.__module__ = "functools"


def _functools(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = public(module)

    def total_ordering(cls: Any) -> Any:
        """functools.total_ordering -- sandboxed: only for the snippet's own classes."""
        require_owned(cls, "functools.total_ordering")
        return functools.total_ordering(cls)

    attrs.update(
        update_wrapper=update_wrapper,
        wraps=wraps,
        total_ordering=total_ordering,
        singledispatch=singledispatch,
        singledispatchmethod=singledispatchmethod,
    )
    return attrs, {}


# -- dataclasses --------------------------------------------------------------------------


def _check_field_names(cls: type) -> None:
    """Refuse fields that shadow a guarded method of a base the snippet did not write.

    Generated ``__eq__``/``__repr__`` read fields natively; with ``class D(str): format:
    int`` and the instance attribute deleted, ``self.format`` is the real str.format.
    """
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - this class's own only
    for name in own if isinstance(own, dict) else ():
        if name not in VALUE_CHECKED_ATTRS:
            continue
        for base in cls.__mro__[1:]:
            if base.__dict__.get(OWNED_ATTR) is not SANDBOX_MARK and name in base.__dict__:
                raise PolicyViolation(
                    f"dataclass field {name!r} would shadow {base.__qualname__}.{name}, "
                    "a method the sandbox guards; rename the field"
                )


def _is_instance(obj: Any) -> bool:
    return _dc.is_dataclass(obj) and not isinstance(obj, type)


def _inner(obj: Any, factory: Callable[[Any], Any], as_dict: bool) -> Any:
    """dataclasses._asdict_inner / _astuple_inner (3.11), fields read by the guard's rules."""
    if _is_instance(obj):
        values = [
            (f.name, _inner(checked_attribute(obj, f.name), factory, as_dict))
            for f in _dc.fields(obj)
        ]
        return factory(values if as_dict else [v for _, v in values])
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_inner(v, factory, as_dict) for v in obj])
    if isinstance(obj, list | tuple):
        return type(obj)(_inner(v, factory, as_dict) for v in obj)
    if isinstance(obj, dict):
        return type(obj)(
            (_inner(k, factory, as_dict), _inner(v, factory, as_dict)) for k, v in obj.items()
        )
    return copy.deepcopy(obj)


def asdict(obj: Any, *, dict_factory: Callable[[Any], Any] = dict) -> Any:
    """dataclasses.asdict -- sandboxed: fields are read with the getattr guard's rules."""
    if not _is_instance(obj):
        raise TypeError("asdict() should be called on dataclass instances")
    return _inner(obj, dict_factory, True)


def astuple(obj: Any, *, tuple_factory: Callable[[Any], Any] = tuple) -> Any:
    """dataclasses.astuple -- sandboxed: fields are read with the getattr guard's rules."""
    if not _is_instance(obj):
        raise TypeError("astuple() should be called on dataclass instances")
    return _inner(obj, tuple_factory, False)


def replace(obj: Any, /, **changes: Any) -> Any:
    """dataclasses.replace -- sandboxed: unchanged fields are read with the getattr guard's
    rules."""
    if not _is_instance(obj):
        raise TypeError("replace() should be called on dataclass instances")
    for f in _dc.fields(obj):
        if f.init and f.name not in changes:
            changes[f.name] = checked_attribute(obj, f.name)
    return _dc.replace(obj, **changes)


def _dataclasses(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = public(module)
    real = module.dataclass

    def dataclass(cls: Any = None, /, **kwargs: Any) -> Any:
        """dataclasses.dataclass -- sandboxed: only for the snippet's own classes."""

        def wrap(c: Any) -> Any:
            require_owned(c, "@dataclass")
            _check_field_names(c)
            result = real(c, **kwargs)
            register_class(result)  # slots=True builds a new class
            return result

        return wrap if cls is None else wrap(cls)

    attrs.update(dataclass=dataclass, asdict=asdict, astuple=astuple, replace=replace)
    return attrs, {}


# -- typing -------------------------------------------------------------------------------


def _typing(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    install_typing_bypass()  # a snippet's subscriptions never fill typing's caches
    attrs = public(module, {"re", "io"})
    real_checkable = module.runtime_checkable
    real_final = module.final
    safe_type = ctx.builtins.get("type", type)

    def launder(value: Any) -> Any:
        if value is type:
            return safe_type
        if isinstance(value, type) and issubclass(value, type):
            raise PolicyViolation(f"{value.__qualname__} is a metaclass: not available")
        return value

    def runtime_checkable(cls: Any) -> Any:
        """typing.runtime_checkable -- sandboxed: only for the snippet's own protocols."""
        require_owned(cls, "@runtime_checkable")
        return real_checkable(cls)

    def final(f: Any) -> Any:
        """typing.final -- sandboxed: only for the snippet's own classes and functions."""
        require_owned(f, "@final")
        return real_final(f)

    def get_origin(tp: Any) -> Any:
        """typing.get_origin -- sandboxed: the real ``type`` comes back as the sandbox's."""
        return launder(module.get_origin(tp))

    def get_args(tp: Any) -> Any:
        """typing.get_args -- sandboxed: the real ``type`` comes back as the sandbox's."""
        args = module.get_args(tp)
        return tuple(launder(a) for a in args) if type(args) is tuple else args

    def overload(func: Any) -> Any:
        """typing.overload -- sandboxed: the definition is not recorded in typing's
        process-wide registry (shared with the host and other executions)."""
        return module._overload_dummy

    attrs.update(
        runtime_checkable=runtime_checkable,
        final=final,
        get_origin=get_origin,
        get_args=get_args,
        overload=overload,
    )
    # get_overloads, no_type_check_decorator ...: see EXCLUDED_MODULES
    return attrs, {"re": "deprecated alias module", "io": "deprecated alias module"}


# -- enum ---------------------------------------------------------------------------------


def _plain_members(names: Any) -> list[Any]:
    """The functional API's ``names`` as a plain list read exactly once: exact ``str``
    names, or ``(name, value)`` tuples (a str subclass or a custom item could answer the
    check with one name and the enum with another)."""
    if isinstance(names, str):
        return str.__str__(names).replace(",", " ").split()
    if isinstance(names, Mapping):
        return [(k, v) for k, v in list(names.items())]
    items = list(names)
    if items and isinstance(items[0], str):
        return list(items)
    out: list[Any] = []
    for item in items:
        name, value = item
        out.append((name, value))
    return out


def _checked_create(
    cls: Any, class_name: Any, names: Any, /, *, module: Any = None, **kwargs: Any
) -> Any:
    """The Enum functional API (``Enum("Color", "RED GREEN")``) without special names.

    Left alone it turns ``{"__del__": f}`` or ``{"__match_args__": ...}`` into class
    attributes; ``__del__`` would run snippet code at garbage collection.
    """
    members = _plain_members(names)
    for item in members:
        name = item if isinstance(item, str) else item[0]
        if type(name) is not str or name.startswith("_"):
            raise PolicyViolation(
                f"enum member name {name!r} is not allowed (names must be plain str not "
                "starting with '_')"
            )
    return enum.EnumType._create_(  # type: ignore[attr-defined]
        cls, class_name, members, module=module or "__main__", **kwargs
    )


_ENUM_BASES = ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag")


@functools.cache
def enum_classes() -> dict[str, type]:
    """Sandbox subclasses of the Enum bases whose functional API checks member names."""
    out: dict[str, type] = {}
    for name in _ENUM_BASES:
        real = getattr(enum, name)
        cls = enum.EnumType(name, (real,), enum.EnumType.__prepare__(name, (real,)))
        type.__setattr__(cls, "_create_", classmethod(_checked_create))
        type.__setattr__(cls, "__module__", "enum")
        out[name] = cls
    return out


def _enum(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = public(module, {"EnumType", "EnumMeta", "global_enum", "ReprEnum"})
    attrs.update(enum_classes())
    return attrs, {}


# -- abc ----------------------------------------------------------------------------------


def abstractmethod(funcobj: Any) -> Any:
    """abc.abstractmethod -- sandboxed: only marks the snippet's own functions (and the
    property/classmethod/staticmethod objects it builds)."""
    if type(funcobj) not in (property, classmethod, staticmethod):
        require_owned(funcobj, "@abstractmethod")
    return abc.abstractmethod(funcobj)


def _abc(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = public(module, {"abstractclassmethod", "abstractstaticmethod"})

    def update_abstractmethods(cls: Any) -> Any:
        """abc.update_abstractmethods -- sandboxed: only for the snippet's own classes."""
        require_owned(cls, "abc.update_abstractmethods")
        return abc.update_abstractmethods(cls)

    attrs.update(abstractmethod=abstractmethod, update_abstractmethods=update_abstractmethods)
    deprecated = "deprecated and changes the callable it gets; use @classmethod/@staticmethod "
    deprecated += "with @abstractmethod"
    return attrs, {"abstractclassmethod": deprecated, "abstractstaticmethod": deprecated}


TYPE_SPECS = {
    "functools": _functools,
    "dataclasses": _dataclasses,
    "typing": _typing,
    "enum": _enum,
    "abc": _abc,
}

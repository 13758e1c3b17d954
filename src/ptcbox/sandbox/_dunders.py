"""Special attributes a snippet may read, judged per name and per object owner.

RestrictedPython refuses every dunder read. Model code reads a few of them all the
time, and on the snippet's own objects (or its own exceptions) they lead nowhere new:

* ``obj.__class__`` of the snippet's instances and functions and of any exception
  instance: ``type(obj)`` (computed, never read: a property cannot answer for it); a
  class's ``__class__`` is its metaclass and stays refused.
* ``obj.__dict__`` (and ``vars(obj)``) of the snippet's own instances whose whole MRO is
  the snippet's or builtin (the same test as private attributes: ``_owner.private_ok``);
  of the snippet's functions read-only (set attributes with ``f.attr = value``);
  never of classes, modules, tools or host objects, nor of exception groups (an
  instance ``split`` would defeat the ``except*`` check, see ``_exceptstar``).
* ``Cls.__mro__`` of the snippet's classes whose every entry is the snippet's or builtin
  (a host base such as the real ``enum.Enum`` stays out of reach, B08).
* ``__annotations__`` of the snippet's functions and classes.
* ``__cause__``/``__context__``/``__suppress_context__``/``__notes__``/``__traceback__``
  of exception instances. A chained exception is handed out only if it passed through the
  snippet's own code (its traceback has a snippet frame), was created by the snippet's
  classes, or was attached without being raised by a ``raise ... from`` in snippet code:
  an exception that host code raised and caught internally (an ``AttributeError`` whose
  ``obj`` is a real module, say) never reaches the snippet, unless it is of a builtin
  exception type and carries only plain scalars (``json``'s internal ``StopIteration(0)``);
  such a ``__context__`` that host code suppressed (``raise ... from None``) reads None.
  Traceback objects are safe: ``tb_lineno``/``tb_lasti``/``tb_next`` are plain data,
  ``tb_frame`` stays refused.
* ``object.__setattr__`` (the frozen-dataclass ``__post_init__`` idiom): the getattr
  guard hands out a stand-in that applies the ``setattr`` guard's rules first.
* ``super().__init_subclass__`` inside the snippet's own ``__init_subclass__``.
* ``obj.__version__`` (``np.__version__``, ``re.__version__``) on any object, when it is
  a string or a tuple of ints and strings: the interpreter gives the name no meaning, so
  it is data like any public attribute; other values (a submodule named ``__version__``)
  are refused. It is never read natively (a ``match`` value pattern refuses it), and
  module views carry only a string ``__version__`` (see ``_proxy.make_proxy``). The
  other module metadata stays refused: ``__file__``/``__path__``/``__cached__`` are host
  paths, ``__spec__``/``__loader__`` lead to the import machinery (a loader reads files).
"""

from __future__ import annotations

import types
from typing import Any, Final

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._owner import (
    PLAIN_BASES,
    SANDBOX_MARK,
    SANDBOX_MARK_NAME,
    describe,
    is_owned,
    private_ok,
    private_ok_class,
)
from ptcbox.sandbox._scope import frame_locals, snippet_frame
from ptcbox.sandbox._sized import public_mro

__all__ = ["GUARDED_DUNDER_READS", "dunder_value", "guarded_vars"]

_CHAIN: Final = frozenset({"__cause__", "__context__"})
_EXC_DATA: Final = frozenset({"__suppress_context__", "__notes__", "__traceback__"})
GUARDED_DUNDER_READS: Final[frozenset[str]] = frozenset(
    {"__class__", "__dict__", "__mro__", "__annotations__", "__setattr__", "__init_subclass__"}
    | {"__version__"}
    | _CHAIN
    | _EXC_DATA
)
"""Dunder names compiled to a guarded read; :func:`dunder_value` decides per object."""

_MISSING: Final = object()
_EXC_DICT: Final[Any] = BaseException.__dict__["__dict__"]
_FUNCTIONS: Final = (types.FunctionType, types.MethodType)
_MAX_TB: Final = 10_000
_SCALARS: Final = frozenset({str, int, float, bool, bytes, type(None)})
_FIELDS: Final = ("obj", "value", "name", "path", "name_from", "filename", "filename2",
                  "object", "code", "exceptions", "text")  # fmt: skip


def _refuse(name: str, obj: Any, why: str) -> PolicyViolation:
    return PolicyViolation(
        f"access to attribute {name!r} of {describe(obj)} is not allowed ({why})"
    )


def _snippet_frame(tb: Any) -> bool:
    return tb.tb_frame.f_globals.get(SANDBOX_MARK_NAME) is SANDBOX_MARK


def _passed_snippet_code(exc: BaseException) -> bool:
    tb = exc.__traceback__
    for _ in range(_MAX_TB):
        if tb is None:
            return False
        if _snippet_frame(tb):
            return True
        tb = tb.tb_next
    return False


def _raised_by_snippet(exc: BaseException) -> bool:
    """The innermost frame of ``exc``'s traceback (where it was raised) is snippet code."""
    tb = exc.__traceback__
    last = None
    for _ in range(_MAX_TB):
        if tb is None:
            break
        last, tb = tb, tb.tb_next
    return last is not None and _snippet_frame(last)


def _plain(exc: BaseException) -> bool:
    """A builtin exception type whose every field is a plain scalar: nothing of the host."""
    if type(exc) not in PLAIN_BASES or _EXC_DICT.__get__(exc):
        return False
    if not all(type(a) in _SCALARS for a in exc.args):
        return False
    return all(type(getattr(exc, f, None)) in _SCALARS for f in _FIELDS)


def _chained(obj: BaseException, name: str) -> Any:
    value = getattr(obj, name)
    if value is None or is_owned(value) or not isinstance(value, BaseException):
        return value  # None, or the snippet's own (a non-exception cannot be set)
    if _passed_snippet_code(value):
        return value
    if value.__traceback__ is None and _raised_by_snippet(obj):
        return value  # `raise X from Y(...)` in snippet code
    if _plain(value):
        return value  # a builtin exception carrying only plain data (json's StopIteration)
    if name == "__context__" and obj.__suppress_context__:
        return None  # host code hid it (`raise ... from None`); so does the sandbox
    raise PolicyViolation(
        f"{name} of this {type(obj).__name__} is an exception raised and handled inside "
        "host code, which the sandbox does not hand out"
    )


def dunder_value(obj: Any, name: str, default: Any = _MISSING) -> Any:
    """``obj.name`` for a name in :data:`GUARDED_DUNDER_READS`.

    Raises:
        PolicyViolation: ``obj`` is not an object this name may be read from.
        AttributeError: The attribute does not exist (and no ``default`` was given).
    """
    exc = isinstance(obj, BaseException)
    if name in _CHAIN or name in _EXC_DATA:
        if not exc:
            raise _refuse(name, obj, "only exceptions have it")
        try:
            return _chained(obj, name) if name in _CHAIN else getattr(obj, name)
        except AttributeError:
            if default is _MISSING:
                raise
            return default
    if name == "__class__":
        if isinstance(obj, type):
            raise _refuse(name, obj, "a class's __class__ is its metaclass; use type(obj)")
        if exc or is_owned(obj):
            return type(obj)
        raise _refuse(name, obj, "only on the snippet's own objects and exceptions; use type(obj)")
    if name == "__dict__":
        if isinstance(obj, type) or not is_owned(obj) or not private_ok(obj):
            raise _refuse(name, obj, "only on instances of the snippet's own classes")
        if isinstance(obj, BaseExceptionGroup):
            raise _refuse(name, obj, "not on exception groups")
        if exc:
            return _EXC_DICT.__get__(obj)
        if isinstance(obj, _FUNCTIONS):
            # read-only: host code (numpy's np.asarray) reads protocols such as
            # __array_interface__ from a function's dict; classes shadow them (seal_class)
            return types.MappingProxyType(_value_or_default(obj, name, default))
        return _value_or_default(obj, name, default)
    if name == "__mro__":
        if isinstance(obj, type) and is_owned(obj) and private_ok_class(obj):
            return public_mro(obj.__mro__)  # a checked base (bytes) as its stand-in
        raise _refuse(name, obj, "only on the snippet's own classes with builtin bases")
    if name == "__annotations__":
        if is_owned(obj) and (isinstance(obj, type) or type(obj) is types.FunctionType):
            return _value_or_default(obj, name, default)
        raise _refuse(name, obj, "only on the snippet's own functions and classes")
    if name == "__version__":
        return _version(obj, default)
    if name == "__setattr__":  # object.__setattr__ is handed out by the getattr guard
        raise _refuse(name, obj, "use setattr(obj, name, value)")
    # __init_subclass__: only super().__init_subclass__ from the snippet's own class
    if type(obj) is super and is_owned(super.__dict__["__thisclass__"].__get__(obj)):
        return getattr(obj, name)
    raise _refuse(name, obj, "call super().__init_subclass__(**kwargs) from your own class")


def _version(obj: Any, default: Any) -> Any:
    value = _value_or_default(obj, "__version__", default)
    if value is default or isinstance(value, str):
        return value
    if type(value) is tuple and all(type(v) in (int, str) for v in value):
        return value
    raise _refuse("__version__", obj, "only a version string or tuple is handed out")


def _value_or_default(obj: Any, name: str, default: Any) -> Any:
    if default is _MISSING:
        return getattr(obj, name)
    return getattr(obj, name, default)


def guarded_vars(*args: Any) -> Any:
    """vars(object) -- sandboxed: the ``__dict__`` of the snippet's own instances only."""
    if len(args) != 1:
        if not args:  # locals(): the snippet's names (see _scope)
            frame = snippet_frame("vars()")
            try:
                return frame_locals(frame)
            finally:
                del frame
        raise TypeError(f"vars expected at most 1 argument, got {len(args)}")
    obj = args[0]
    if not hasattr(type(obj), "__dict__") and not isinstance(obj, type):
        raise TypeError("vars() argument must have __dict__ attribute")
    return dunder_value(obj, "__dict__")

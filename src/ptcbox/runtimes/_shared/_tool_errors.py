"""A failing tool raises its own exception type in the snippet, rebuilt from data.

DESIGN.md, "Tools inside code": a tool raising ``KeyError('SKU-9')`` gives the snippet an
exception that ``except KeyError``, ``except LookupError`` and ``except ToolError`` all
catch, whose ``str``, ``repr`` and ``args`` are CPython's, and whose ``type(e).__name__``
is the tool's class name. The snippet never gets the host's exception object (nor its
traceback, its ``__context__`` or anything in its ``__dict__``): the host describes it as
data (:func:`exception_payload`), which crosses the process boundary as JSON, and each
runtime rebuilds it with :func:`rebuild_tool_error`:

- the class is the nearest builtin exception class in the host class's MRO (a class
  derived only from ``BaseException``, such as ``SystemExit``, counts as ``Exception``),
  combined with :class:`~ptcbox.errors.ToolError` in a class made once per builtin base
  and name: ``type(e).__name__ == "UserNotFoundError"``, ``isinstance(e, LookupError)``;
- ``args`` cross through the value codec (:mod:`~ptcbox.runtimes._shared._codec`), so
  they keep their types; objects that are not data become ``"<TypeName object>"``;
- ``OSError``'s ``errno``/``strerror``/``filename``/``filename2``, ``name`` of
  ``AttributeError``/``NameError``/``ImportError`` and ``path`` of ``ImportError``
  cross as well; an ``ExceptionGroup``'s members are rebuilt the same way;
- when ``str()`` of the host's exception differs from what its builtin base makes of its
  ``args`` (a class with its own ``__str__``), the snippet sees the host's text.

``e.tool_name`` is the tool's name and ``e.message`` the ``"KeyError: 'SKU-9'"`` text of
``ToolCallRecord.error``. What differs from CPython: ``type(e) is KeyError`` is false (the
class is a subclass of ``KeyError``), and a host class's own attributes and methods are
not there.
"""

from __future__ import annotations

import builtins
from typing import Any

from ptcbox.errors import ToolError
from ptcbox.runtimes._shared._codec import decode, encode
from ptcbox.runtimes._shared._error_text import describe_exception
from ptcbox.runtimes._shared._value import json_size_over

__all__ = ["BUILTIN_EXCEPTIONS", "exception_payload", "rebuild_tool_error", "tool_error_class"]

BUILTIN_EXCEPTIONS: dict[str, type[Exception]] = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, Exception) and not name.startswith("_")
}
"""The builtin exception classes a tool's exception may be rebuilt as, by name."""

_NAMES = {value: name for name, value in BUILTIN_EXCEPTIONS.items()}
_ATTRIBUTES: dict[type[BaseException], tuple[str, ...]] = {
    OSError: ("errno", "strerror", "filename", "filename2"),
    AttributeError: ("name",),
    NameError: ("name",),
    ImportError: ("name", "path"),
}
_MAX_NAME = 100
_MAX_ARGS_BYTES = 64 * 1024
_MAX_MEMBERS = 50
_MAX_NESTING = 4
_TEXT_ATTR = "_ptc_text"
_CLASSES: dict[tuple[type[BaseException], str, str], type[BaseException]] = {}
_MAX_CLASSES = 1024


def _base_of(cls: type[BaseException]) -> type[Exception]:
    for klass in cls.__mro__:
        name = _NAMES.get(klass)
        if name is not None:
            return BUILTIN_EXCEPTIONS[name]
    return Exception


def _identifier(text: Any, fallback: str) -> str:
    if isinstance(text, str) and text.isidentifier() and len(text) <= _MAX_NAME:
        return str.__str__(text)
    return fallback


def exception_payload(exc: BaseException, _depth: int = 0) -> dict[str, Any]:
    """Describe a tool's exception as JSON data (host side).

    Args:
        exc: The exception the tool raised.

    Returns:
        ``{"type", "module", "base", "args", "str", "attrs"}`` (and ``"members"`` for an
        exception group), every value JSON-compatible.
    """
    cls = type(exc)
    base = _base_of(cls)
    base_name = _NAMES[base]
    name = _identifier(type.__getattribute__(cls, "__name__"), base_name)
    module = type.__getattribute__(cls, "__module__")
    if not (isinstance(module, str) and all(part.isidentifier() for part in module.split("."))):
        module = "builtins"
    args: tuple[Any, ...] = BaseException.__dict__["args"].__get__(exc)
    if json_size_over(args, _MAX_ARGS_BYTES):
        args = (describe_exception(exc, 2000),)
    payload: dict[str, Any] = {
        "type": name,
        "module": module[:_MAX_NAME],
        "base": base_name,
        "args": [encode(item) for item in args],
        "str": _text_of(exc, type.__getattribute__(cls, "__name__")),
    }
    attrs = {}
    for owner, names in _ATTRIBUTES.items():
        if isinstance(exc, owner):
            for attr in names:
                value = owner.__dict__[attr].__get__(exc)
                if value is None or type(value) in (str, int, bytes):
                    attrs[attr] = encode(value)
    if attrs:
        payload["attrs"] = attrs
    if isinstance(exc, BaseExceptionGroup) and _depth < _MAX_NESTING:
        members = BaseExceptionGroup.exceptions.__get__(exc)[:_MAX_MEMBERS]
        payload["members"] = [exception_payload(sub, _depth + 1) for sub in members]
    return payload


def _text_of(exc: BaseException, name: Any) -> str:
    """``str(exc)`` (capped), read as :func:`describe_exception` reads it."""
    text = describe_exception(exc)
    prefix = f"{name}: " if isinstance(name, str) else ""
    return text[len(prefix) :] if prefix and text.startswith(prefix) else ""


def _text_str(self: BaseException) -> str:
    text = self.__dict__.get(_TEXT_ATTR)
    if isinstance(text, str):
        return text
    for klass in type(self).__mro__[1:]:
        if klass in _NAMES:
            return klass.__str__(self)
    return BaseException.__str__(self)  # pragma: no cover - every base is builtin


def tool_error_class(base: type[BaseException], name: str, module: str) -> type[BaseException]:
    """The class a tool's exception is rebuilt as: ``base`` and ``ToolError``, named ``name``.

    Made once per ``(base, name, module)`` and cached.
    """
    key = (base, name, module)
    cls = _CLASSES.get(key)
    if cls is None:
        namespace = {
            "__module__": module,
            "__qualname__": name,
            "__init__": base.__init__,
            "__str__": _text_str,
            "__reduce__": BaseException.__reduce__,
            "__doc__": f"The tool's {name} (a {base.__name__} that is also a ToolError).",
        }
        bases = (ToolError,) if issubclass(ToolError, base) else (base, ToolError)
        cls = type(name, bases, namespace)
        if len(_CLASSES) >= _MAX_CLASSES:
            _CLASSES.clear()
        _CLASSES[key] = cls
    return cls


def rebuild_tool_error(payload: Any, tool: str, message: str, _depth: int = 0) -> BaseException:
    """Rebuild a tool's exception for the snippet from :func:`exception_payload` data.

    Args:
        payload: The payload (unchecked: anything malformed gives a plain ``ToolError``).
        tool: The tool's name.
        message: The failure as ``ToolCallRecord.error`` shows it.

    Returns:
        An exception of the tool's builtin base that is also a ``ToolError``, or a plain
        ``ToolError(tool, message)`` when ``payload`` is unusable.
    """
    try:
        exc = _rebuild(payload, _depth)
    except Exception:
        exc = None
    if exc is None:
        return ToolError(tool, message)
    exc.__dict__["tool_name"] = tool
    exc.__dict__["message"] = message
    return exc


def _rebuild(payload: Any, depth: int) -> BaseException | None:
    if type(payload) is not dict or type(payload.get("args")) is not list:
        return None
    base: type[BaseException] = BUILTIN_EXCEPTIONS.get(payload.get("base"), Exception)  # type: ignore[arg-type]
    name = _identifier(payload.get("type"), base.__name__)
    module = payload.get("module")
    module = module if isinstance(module, str) and len(module) <= _MAX_NAME else "builtins"
    args = [decode(item) for item in payload["args"]]
    if issubclass(base, BaseExceptionGroup):
        members = payload.get("members")
        if type(members) is not list or depth >= _MAX_NESTING or not args:
            base, args = Exception, args[:1]
        else:
            rebuilt = [rebuild_tool_error(item, "", "", depth + 1) for item in members]
            args = [args[0], rebuilt]
    cls = tool_error_class(base, name, module)
    try:
        exc = cls(*args)
    except Exception:  # the base refuses these args (e.g. a UnicodeError's five fields)
        cls = tool_error_class(Exception, name, module)
        exc = cls(*args)
    attrs = payload.get("attrs")
    if type(attrs) is dict:
        for owner, names in _ATTRIBUTES.items():
            if isinstance(exc, owner):
                for attr in names:
                    if attr in attrs:
                        value = decode(attrs[attr])
                        if value is None or type(value) in (str, int, bytes):
                            owner.__dict__[attr].__set__(exc, value)
    text = payload.get("str")
    if isinstance(text, str) and text != _text_str(exc):
        exc.__dict__[_TEXT_ATTR] = text
    return exc

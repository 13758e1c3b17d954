"""Module views for logging and warnings: private to each execution.

* ``logging``: each execution has its own logger hierarchy (root, manager, ``getLogger``,
  ``basicConfig``, ``disable``, ``setLoggerClass``): nothing a snippet does adds a handler
  to, or changes the level of, the host's loggers, and no host logger or handler is
  reachable (``logging.Logger.manager``/``root`` are the execution's). Handlers write to
  the execution's stderr by default and are not entered in logging's process-wide handler
  registry; records name the snippet's frames only (``stacklevel``, ``stack_info``,
  ``exc_info`` text included). ``Formatter(style="{")`` accepts plain field names only
  (``str.format`` would walk attributes). Files, sockets, ``logging.config`` and
  ``logging.handlers`` are not available.
* ``warnings``: ``warn`` goes to the execution's stderr through the execution's own
  filters (``simplefilter``, ``filterwarnings``, ``catch_warnings(record=True)``,
  ``resetwarnings``), never the process's. Warnings raised by host code (a stdlib function
  the snippet calls) still follow the host's filters.
"""

from __future__ import annotations

import re
import string
import sys
import types
import warnings as _warnings
from typing import Any

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._owner import register_class
from ptcbox.sandbox._snippet_tb import format_exception, is_snippet_frame, stack_text
from ptcbox.sandbox._specbase import Attrs, ModuleContext, public
from ptcbox.sandbox._streams import Streams

__all__ = ["LOG_SPECS", "PER_EXECUTION_LOG"]

_FILES = "files are not accessible in the sandbox; log to a stream (stderr by default)"
_GLOBAL = "changes logging's process-wide state, shared with the host"
_LOG_EXCLUDED = {
    "FileHandler": _FILES,
    "Manager": "builds logger hierarchies outside the execution's own",
    "PlaceHolder": "internal to the logger hierarchy",
    "RootLogger": "use logging.getLogger() (the execution's root logger)",
    "addLevelName": _GLOBAL,
    "setLogRecordFactory": _GLOBAL,
    "captureWarnings": _GLOBAL,
    "shutdown": "flushes and closes every handler of the process",
    "currentframe": "returns frame objects",
    "PercentStyle": "use logging.Formatter(fmt, style=...)",
    "StrFormatStyle": "use logging.Formatter(fmt, style='{')",
    "StringTemplateStyle": "use logging.Formatter(fmt, style='$')",
    "BufferingFormatter": "not exposed in the sandbox",
}


def _snippet_frames() -> list[types.FrameType]:
    frames = []
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if is_snippet_frame(frame):
            frames.append(frame)
        frame = frame.f_back
    return frames  # innermost first


def _check_brace_format(fmt: Any) -> None:
    if not isinstance(fmt, str):
        return
    for _, field, spec, _ in string.Formatter().parse(fmt):
        if field is not None and (not field.isidentifier() or "{" in (spec or "")):
            raise PolicyViolation(
                f"logging.Formatter(style='{{'): field {field!r} is not a plain name (format "
                "fields may not read attributes or items in the sandbox)"
            )


def _logging_module(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    streams: Streams = ctx.streams
    L = module  # noqa: N806

    class Formatter(L.Formatter):  # type: ignore[misc, name-defined]
        __doc__ = L.Formatter.__doc__

        def __init__(
            self,
            fmt: Any = None,
            datefmt: Any = None,
            style: str = "%",
            validate: bool = True,
            *,
            defaults: Any = None,
        ) -> None:
            if style == "{":
                _check_brace_format(fmt)
            super().__init__(fmt, datefmt, style, validate, defaults=defaults)

        def formatException(self, ei: Any) -> str:  # noqa: N802 - the stdlib's name
            return "".join(format_exception(ei[1])).rstrip("\n")

    default_formatter = Formatter()

    class Handler(L.Handler):  # type: ignore[misc, name-defined]
        __doc__ = L.Handler.__doc__

        def __init__(self, level: Any = L.NOTSET) -> None:
            L.Filterer.__init__(self)
            self._name = None
            self.level = L._checkLevel(level)
            self.formatter = None
            self._closed = False
            self.createLock()  # not entered in logging's process-wide handler registry

        def get_name(self) -> Any:
            return self._name

        def set_name(self, name: Any) -> None:
            self._name = name

        name = property(get_name, set_name)

        def format(self, record: Any) -> str:
            text: str = (self.formatter or default_formatter).format(record)
            return text

        def handleError(self, record: Any) -> None:  # noqa: N802 - the stdlib's name
            exc = sys.exc_info()[1]
            streams.err("--- Logging error ---\n" + "".join(format_exception(exc)))

    class StreamHandler(Handler, L.StreamHandler):  # type: ignore[misc, name-defined]
        __doc__ = L.StreamHandler.__doc__

        def __init__(self, stream: Any = None) -> None:
            Handler.__init__(self)
            self.stream = streams.stderr if stream is None else stream

    class NullHandler(Handler):
        """A handler that does nothing."""

        def handle(self, record: Any) -> bool:
            return True

        def emit(self, record: Any) -> None:
            pass

    class _LastResort(Handler):
        def emit(self, record: Any) -> None:
            try:
                streams.err(self.format(record) + "\n")
            except Exception:
                self.handleError(record)

    last_resort = _LastResort(L.WARNING)

    class Logger(L.Logger):  # type: ignore[misc, name-defined]
        __doc__ = L.Logger.__doc__

        def findCaller(self, stack_info: bool = False, stacklevel: int = 1) -> Any:  # noqa: N802
            frames = _snippet_frames()
            if not frames:
                return "(unknown file)", 0, "(unknown function)", None
            frame = frames[min(max(stacklevel, 1), len(frames)) - 1]
            sinfo = stack_text(frames[frames.index(frame) :]) if stack_info else None
            code = frame.f_code
            return code.co_filename, frame.f_lineno, code.co_name, sinfo

        def callHandlers(self, record: Any) -> None:  # noqa: N802 - the stdlib's name
            c: Any = self
            found = 0
            while c:
                for hdlr in c.handlers:
                    found += 1
                    if record.levelno >= hdlr.level:
                        hdlr.handle(record)
                c = c.parent if c.propagate else None
            if found == 0 and record.levelno >= last_resort.level:
                last_resort.handle(record)

    class RootLogger(Logger):
        def __init__(self, level: Any) -> None:
            Logger.__init__(self, "root", level)  # type: ignore[call-arg]

    for cls in (Formatter, Handler, StreamHandler, NullHandler, Logger, RootLogger):
        cls.__module__ = "logging"
        register_class(cls)  # per execution: its loggers and handlers are the snippet's own
    root = RootLogger(L.WARNING)
    manager = L.Manager(root)
    manager.loggerClass = Logger
    Logger.root, Logger.manager = root, manager

    def getLogger(name: Any = None) -> Any:  # noqa: N802 - the stdlib's name
        """The execution's logger ``name`` (its root logger for ``None``)."""
        if not name or (isinstance(name, str) and name == root.name):
            return root
        return manager.getLogger(name)

    def getLoggerClass() -> Any:  # noqa: N802 - the stdlib's name
        """The class of the execution's new loggers."""
        return manager.loggerClass

    def setLoggerClass(klass: Any) -> None:  # noqa: N802 - the stdlib's name
        """Set the class of the execution's new loggers (a subclass of logging.Logger)."""
        if not (isinstance(klass, type) and issubclass(klass, Logger)):
            raise TypeError("logger not derived from logging.Logger: " + klass.__name__)
        manager.loggerClass = klass

    def disable(level: Any = L.CRITICAL) -> None:
        """Disable the execution's logging at ``level`` and below."""
        manager.disable = L._checkLevel(level)
        manager._clear_cache()

    def basicConfig(**kwargs: Any) -> None:  # noqa: N802 - the stdlib's name
        """Configure the execution's root logger (stream: its stderr by default)."""
        if kwargs.pop("force", False):
            for h in root.handlers[:]:
                root.removeHandler(h)
                h.close()
        kwargs.pop("encoding", None)
        kwargs.pop("errors", None)
        if root.handlers:
            return
        if "filename" in kwargs:
            raise PolicyViolation(f"logging.basicConfig(filename=...): {_FILES}")
        handlers = kwargs.pop("handlers", None)
        if handlers is None:
            handlers = [StreamHandler(kwargs.pop("stream", None))]
        elif "stream" in kwargs:
            raise ValueError("'stream' and 'handlers' should not be specified together")
        style = kwargs.pop("style", "%")
        if style not in L._STYLES:
            raise ValueError("Style must be one of: " + ",".join(L._STYLES.keys()))
        fmt = Formatter(
            kwargs.pop("format", L._STYLES[style][1]), kwargs.pop("datefmt", None), style
        )
        for h in handlers:
            if h.formatter is None:
                h.setFormatter(fmt)
            root.addHandler(h)
        level = kwargs.pop("level", None)
        if level is not None:
            root.setLevel(level)
        if kwargs:
            raise ValueError("Unrecognised argument(s): " + ", ".join(kwargs.keys()))

    def _module_level(method: str) -> Any:
        def log(*args: Any, **kwargs: Any) -> None:
            if not root.handlers:
                basicConfig()
            getattr(root, method)(*args, **kwargs)

        log.__name__ = log.__qualname__ = method
        log.__doc__ = f"Log with the execution's root logger ({method})."
        return log

    attrs = public(module, set(_LOG_EXCLUDED))
    attrs.update(
        Formatter=Formatter,
        Handler=Handler,
        StreamHandler=StreamHandler,
        NullHandler=NullHandler,
        Logger=Logger,
        root=root,
        lastResort=last_resort,
        getLogger=getLogger,
        getLoggerClass=getLoggerClass,
        setLoggerClass=setLoggerClass,
        disable=disable,
        basicConfig=basicConfig,
    )
    for method in (
        "critical",
        "fatal",
        "error",
        "exception",
        "warning",
        "warn",
        "info",
        "debug",
        "log",
    ):
        attrs[method] = _module_level(method)
    return attrs, dict(_LOG_EXCLUDED)


# -- warnings ---------------------------------------------------------------------------

_ACTIONS = ("error", "ignore", "always", "default", "module", "once")


def _default_filters() -> list[tuple[Any, ...]]:
    return [
        ("default", None, DeprecationWarning, re.compile("__main__"), 0),
        ("ignore", None, DeprecationWarning, None, 0),
        ("ignore", None, PendingDeprecationWarning, None, 0),
        ("ignore", None, ImportWarning, None, 0),
        ("ignore", None, ResourceWarning, None, 0),
    ]


def _warnings_module(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    streams = ctx.streams
    getattr_ = ctx.builtins.get("_getattr_", getattr)
    filters = _default_filters()
    registry: dict[Any, int] = {}
    once: dict[Any, int] = {}
    log: list[list[Any] | None] = [None]

    def showwarning(  # noqa: PLR0917 - the stdlib's signature
        message: Any, category: Any, filename: Any, lineno: Any, file: Any = None, line: Any = None
    ) -> None:
        """Write a warning to ``file`` (the execution's stderr by default)."""
        text = _warnings.formatwarning(message, category, filename, lineno, line)
        (streams.err if file is None else getattr_(file, "write"))(text)

    def warn_explicit(  # noqa: PLR0917 - the stdlib's signature
        message: Any,
        category: Any,
        filename: Any,
        lineno: Any,
        module: Any = None,
        registry_: Any = None,
        module_globals: Any = None,
        source: Any = None,
    ) -> None:
        """Issue a warning at an explicit place, through the execution's filters."""
        if isinstance(message, Warning):
            text, category = str(message), message.__class__
        else:
            text, message = message, category(message)
        name = module or "__main__"
        action = "default"
        for act, msg, cat, mod, ln in filters:
            if (
                (msg is None or msg.match(text))
                and issubclass(category, cat)
                and (mod is None or mod.match(name))
                and ln in (0, lineno)
            ):
                action = act
                break
        if action == "ignore":
            return
        if action == "error":
            raise message
        key = (text, category, 0 if action == "module" else lineno)
        if action == "once":
            if (text, category) in once:
                return
            once[text, category] = 1
        elif action != "always":
            if key in registry:
                return
            registry[key] = 1
        recording = log[0]
        if recording is not None:
            recording.append(_warnings.WarningMessage(message, category, filename, lineno))
        else:
            showwarning(message, category, filename, lineno)

    def warn(message: Any, category: Any = None, stacklevel: int = 1, source: Any = None) -> None:
        """Issue a warning (to the execution's stderr, through its own filters)."""
        if isinstance(message, Warning):
            category = message.__class__
        if category is None:
            category = UserWarning
        if not (isinstance(category, type) and issubclass(category, Warning)):
            raise TypeError(f"category must be a Warning subclass, not '{type(category).__name__}'")
        frames = _snippet_frames()
        if frames:
            frame = frames[min(max(int(stacklevel), 1), len(frames)) - 1]
            filename, lineno = frame.f_code.co_filename, frame.f_lineno or 0
            name = frame.f_globals.get("__name__", "__main__")
        else:
            filename, lineno, name = "sys", 1, "sys"
        warn_explicit(message, category, filename, lineno, name)

    def _check(action: Any, category: Any, lineno: Any) -> None:
        if action not in _ACTIONS:
            raise ValueError(f"invalid action: {action!r}")
        if not (isinstance(category, type) and issubclass(category, Warning)):
            raise TypeError("category must be a Warning subclass")
        if not isinstance(lineno, int) or lineno < 0:
            raise ValueError("lineno must be an int >= 0")

    def _add(item: tuple[Any, ...], append: bool) -> None:
        if item in filters:
            filters.remove(item)
        if append:
            filters.append(item)
        else:
            filters.insert(0, item)
        registry.clear()

    def simplefilter(
        action: str, category: Any = Warning, lineno: int = 0, append: bool = False
    ) -> None:
        """Insert a simple entry into the execution's warning filters."""
        _check(action, category, lineno)
        _add((action, None, category, None, lineno), append)

    def filterwarnings(  # noqa: PLR0917 - the stdlib's signature
        action: str,
        message: str = "",
        category: Any = Warning,
        module: str = "",
        lineno: int = 0,
        append: bool = False,
    ) -> None:
        """Insert an entry into the execution's warning filters."""
        _check(action, category, lineno)
        msg = re.compile(message, re.I) if message else None
        mod = re.compile(module) if module else None
        _add((action, msg, category, mod, lineno), append)

    def resetwarnings() -> None:
        """Clear the execution's warning filters."""
        filters.clear()
        registry.clear()

    class catch_warnings:  # noqa: N801 - the stdlib's name
        """Save and restore the execution's warning filters (and record warnings)."""

        def __init__(
            self,
            *,
            record: bool = False,
            module: Any = None,
            action: Any = None,
            category: Any = Warning,
            lineno: int = 0,
            append: bool = False,
        ) -> None:
            self._record, self._filter = record, (action, category, lineno, append)

        def __enter__(self) -> Any:
            self._saved = (list(filters), log[0])
            action, category, lineno, append = self._filter
            if action is not None:
                simplefilter(action, category, lineno, append)
            if self._record:
                log[0] = []
                return log[0]
            return None

        def __exit__(self, *exc: object) -> None:
            saved, log[0] = self._saved
            filters[:] = saved
            registry.clear()

    catch_warnings.__module__ = "warnings"
    attrs: Attrs = {
        "warn": warn,
        "warn_explicit": warn_explicit,
        "showwarning": showwarning,
        "formatwarning": _warnings.formatwarning,
        "simplefilter": simplefilter,
        "filterwarnings": filterwarnings,
        "resetwarnings": resetwarnings,
        "catch_warnings": catch_warnings,
        "WarningMessage": _warnings.WarningMessage,
    }
    reason = "per execution in the sandbox; use warnings.simplefilter / filterwarnings"
    excluded = {k: reason for k in vars(module) if not k.startswith("_") and k not in attrs}
    return attrs, excluded


LOG_SPECS = {"logging": _logging_module, "warnings": _warnings_module}

PER_EXECUTION_LOG = frozenset({"logging", "warnings"})
"""Both views hold the execution's own state (loggers, filters) and streams."""

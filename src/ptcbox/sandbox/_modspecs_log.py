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
* ``warnings``: see :mod:`ptcbox.sandbox._modspecs_warnings`.
"""

from __future__ import annotations

import string
import sys
import types
from typing import Any

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._modspecs_warnings import warnings_module
from ptcbox.sandbox._owner import register_class
from ptcbox.sandbox._snippet_tb import format_exception, snippet_frames, stack_text
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

        def close(self) -> None:
            """Tidy up (never touches logging's process-wide handler registry, where a
            host handler of the same name may be)."""
            self._closed = True

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
            frames = snippet_frames()
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


LOG_SPECS = {"logging": _logging_module, "warnings": warnings_module}

PER_EXECUTION_LOG = frozenset({"logging", "warnings"})
"""Both views hold the execution's own state (loggers, filters) and streams."""

"""The warnings view: the execution's own filters, to the execution's stderr.

``warn`` goes to the execution's stderr through the execution's own filters
(``simplefilter``, ``filterwarnings``, ``catch_warnings(record=True)``, ``resetwarnings``),
never the process's; the filters start as CPython's defaults for ``__main__`` code and
last one execution (also in a session). Warnings raised by host code (a stdlib function
the snippet calls) still follow the host's filters.
"""

from __future__ import annotations

import re
import types
import warnings as _warnings
from typing import Any

from ptcbox.sandbox._snippet_tb import snippet_frames
from ptcbox.sandbox._specbase import Attrs, ModuleContext

__all__ = ["warnings_module"]

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


def warnings_module(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
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
        frames = snippet_frames()
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

"""Event loops a snippet makes with ``asyncio.run``: their errors are the snippet's own.

The real ``asyncio.run`` reports what no one awaited ("Task exception was never
retrieved", an exception in a callback) through the default exception handler, which
logs to the host's ``asyncio`` logger: a snippet could forge multi-line records in the
host's logs while its captured stderr stayed empty, and a snippet stopped at its
timeout inside ``asyncio.run`` printed dozens of lines of traceback on the host's
stderr (issue 12). The sandbox's ``asyncio.run`` gives its loop :func:`_handler`:

* a stop of the execution (any ``BaseException`` that is not an ``Exception``) stops the
  loop, silently, so that ``run`` returns and the stop reaches the snippet's code;
* anything else is written to the execution's stderr (the stream the runtime set for
  this thread with :func:`set_snippet_stderr`, else ``sys.stderr``: the worker's).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import traceback
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["run", "set_snippet_stderr"]

T = TypeVar("T")


class _Local(threading.local):
    stderr: Any = None


_local = _Local()


def set_snippet_stderr(stream: Any) -> None:
    """Set (or, with ``None``, clear) where snippet event loops of this thread report."""
    _local.stderr = stream


def _handler(stream: Any) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, BaseException) and not isinstance(exc, Exception):
            loop.stop()  # the execution is being stopped: no report
            return
        text = str(context.get("message") or "Unhandled exception in event loop")
        if isinstance(exc, BaseException):
            text += "\n" + "".join(traceback.format_exception_only(type(exc), exc))
        with contextlib.suppress(Exception):  # a broken stream: nowhere to report
            stream.write(text.rstrip("\n") + "\n")

    return handler


class _SnippetLoop(asyncio.SelectorEventLoop):
    """A snippet's loop. One that a stopped execution abandoned (its ``Runner`` never got
    to close it) is closed quietly when the host collects it: its ``__del__`` printed
    an "Exception ignored" traceback on the host's stderr."""

    def __del__(self, _warn: Any = None) -> None:
        with contextlib.suppress(BaseException):
            super().__del__()


def run(main: Coroutine[Any, Any, T], *, debug: bool | None = None) -> T:
    """asyncio.run -- sandboxed: errors nobody retrieved go to the snippet's stderr,
    not to the host's ``asyncio`` logger."""
    stream = _local.stderr if _local.stderr is not None else sys.stderr
    with asyncio.Runner(debug=debug, loop_factory=_SnippetLoop) as runner:
        runner.get_loop().set_exception_handler(_handler(stream))
        return runner.run(main)

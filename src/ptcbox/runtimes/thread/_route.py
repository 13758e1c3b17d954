"""Where a snippet thread's ``print`` sinks, ``sleep`` and tool callables find the
execution running now: a :class:`Route` a session keeps, and the thread-local
:data:`current`."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ptcbox.runtimes.thread._tools import Run

__all__ = ["Route", "current"]


class _Sink:
    """A text stream for ``print``: writes to the current execution's buffer."""

    __slots__ = ("_route", "_stream")

    def __init__(self, route: Route, stream: str) -> None:
        self._route = route
        self._stream = stream

    def write(self, text: str) -> int:
        run = self._route.run
        assert run is not None
        buffer = run.stdout if self._stream == "stdout" else run.stderr
        return buffer.write(text)

    def flush(self) -> None:
        return None


class Route:
    """Points the snippet's tools, sinks and sleep at the execution running now."""

    __slots__ = ("__weakref__", "run", "sleep", "stderr", "stdout")

    def __init__(self) -> None:
        self.run: Run | None = None
        self.stdout = _Sink(self, "stdout")
        self.stderr = _Sink(self, "stderr")

        def sleep(seconds: float) -> None:
            run = self.run
            assert run is not None
            run.sleep(seconds)

        self.sleep = sleep


class _Current(threading.local):
    """The execution a snippet thread is running (``None`` in any other thread)."""

    run: Run | None = None


current = _Current()
"""Thread-local: ``current.run`` is set by the job for the duration of an execution."""

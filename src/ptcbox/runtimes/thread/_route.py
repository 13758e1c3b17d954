"""Where a snippet thread's ``print`` sinks, ``sleep`` and tool callables find the
execution running now: a :class:`Route` a session keeps, and the thread-local
:data:`current`."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ptcbox.runtimes.thread._tools import Run

__all__ = ["Route", "current"]


class _Target:
    """The execution a route points at now (held by the route, its sinks and sleep)."""

    __slots__ = ("run",)

    def __init__(self) -> None:
        self.run: Run | None = None


class _Sink:
    """A text stream for ``print``: writes to the current execution's buffer."""

    __slots__ = ("_stream", "_target")

    def __init__(self, target: _Target, stream: str) -> None:
        self._target = target
        self._stream = stream

    def write(self, text: str) -> int:
        run = self._target.run
        assert run is not None
        buffer = run.stdout if self._stream == "stdout" else run.stderr
        return buffer.write(text)

    def flush(self) -> None:
        return None


class Route:
    """Points the snippet's tools, sinks and sleep at the execution running now.

    Its sinks and ``sleep`` reach the execution through a :class:`_Target`, not through
    the route: no reference cycle, so an execution's route and everything it points at
    are freed as soon as the execution ends, not by the cyclic garbage collector.
    """

    __slots__ = ("__weakref__", "_target", "sleep", "stderr", "stdout")

    def __init__(self) -> None:
        target = self._target = _Target()
        self.stdout = _Sink(target, "stdout")
        self.stderr = _Sink(target, "stderr")

        def sleep(seconds: float) -> None:
            run = target.run
            assert run is not None
            run.sleep(seconds)

        self.sleep = sleep

    @property
    def run(self) -> Run | None:
        """The execution running now (``None`` between executions)."""
        return self._target.run

    @run.setter
    def run(self, run: Run | None) -> None:
        self._target.run = run


class _Current(threading.local):
    """The execution a snippet thread is running (``None`` in any other thread)."""

    run: Run | None = None


current = _Current()
"""Thread-local: ``current.run`` is set by the job for the duration of an execution."""

"""The context a tool receives when it declares a ``ToolContext`` parameter."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ProgressSink", "ToolContext"]

ProgressSink = Callable[["ToolContext", Any], None]
"""Receives ``(context, partial)`` for each progress report, on the event loop."""


class ToolContext:
    """Information about the current tool call, and a channel for progress reports.

    A tool gets one by declaring a parameter annotated ``ToolContext`` (any name); that
    parameter never appears in the tool's schema or stub.

    Args:
        tool_call_id: The id of this call (for calls made inside ``run_code``: the
            ``run_code`` call's id, a dot, and the call's number, e.g. ``"call_1.3"``).
        tool_name: The tool's name.
        parent: The context of the ``run_code`` call this call was made from, or
            ``None`` for a direct call.
        deps: Whatever the host passed as ``deps`` (a database handle, a user id, ...).
        sink: Receives progress reports on the event loop; ``None`` drops them.
        loop: The event loop the call belongs to; default: the running loop, if any.
    """

    __slots__ = (
        "_children",
        "_closed",
        "_lock",
        "_loop",
        "_sink",
        "deps",
        "parent",
        "tool_call_id",
        "tool_name",
    )

    def __init__(
        self,
        tool_call_id: str,
        tool_name: str,
        *,
        parent: ToolContext | None = None,
        deps: Any = None,
        sink: ProgressSink | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.parent = parent
        self.deps = deps
        self._sink = sink
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
        self._loop = loop
        self._lock = threading.Lock()
        self._closed = False
        self._children = itertools.count(1)

    @property
    def closed(self) -> bool:
        """``True`` once the call has returned; later reports are dropped."""
        return self._closed

    def report(self, partial: Any) -> None:
        """Report progress of this call (``ToolExecutionUpdate`` events in an agent).

        Thread-safe: callable from the event loop and from worker threads (sync tools
        run in one). Reports are delivered on the event loop, each thread's in the order
        it made them (a report made on the loop is delivered at once, one made in a
        worker thread through ``call_soon_threadsafe``); reports made after the call
        returned are dropped. Never blocks, never raises.

        Args:
            partial: Any value describing the progress so far (text, a dict, ...).
        """
        with self._lock:
            if self._closed:
                return
        parent = self.parent
        if self._sink is _FORWARD and parent is not None:
            parent.report(
                {"tool": self.tool_name, "tool_call_id": self.tool_call_id, "partial": partial}
            )
            return
        if self._sink is None:
            return
        loop = self._loop
        if loop is None or _running_loop() is loop:
            self._deliver(partial)
            return
        try:
            loop.call_soon_threadsafe(self._deliver, partial)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            return

    def close(self) -> None:
        """Mark the call as returned: pending and later reports are dropped."""
        with self._lock:
            self._closed = True

    def child(self, tool_name: str) -> ToolContext:
        """Return the context of a tool call made inside this call (``run_code``).

        The child's reports reach this context as
        ``{"tool": name, "tool_call_id": id, "partial": value}`` (forwarded at once, so
        they keep their order with this context's own reports).

        Args:
            tool_name: The tool the snippet called.
        """
        return ToolContext(
            f"{self.tool_call_id}.{next(self._children)}",
            tool_name,
            parent=self,
            deps=self.deps,
            sink=_FORWARD,
            loop=self._loop,
        )

    def _deliver(self, partial: Any) -> None:
        if self._closed or self._sink is None:
            return
        self._sink(self, partial)

    def __repr__(self) -> str:
        return f"ToolContext(tool_call_id={self.tool_call_id!r}, tool_name={self.tool_name!r})"


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _forward(context: ToolContext, partial: Any) -> None:  # pragma: no cover - marker only
    raise AssertionError("forwarding contexts report to their parent directly")


_FORWARD: ProgressSink = _forward

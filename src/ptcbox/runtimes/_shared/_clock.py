"""An execution's pausable deadline and the scope of the tool call running now (host only).

:class:`Deadline` is the wall clock of one execution. Host code can stop it while it
waits for something the snippet is not responsible for: an approval of a tool call
(:mod:`ptcbox.agent_glue._approval`) pauses it for as long as the decision takes.

**Concurrent pauses.** The clock stands still while *at least one* pause is active
and runs otherwise: two approvals pending over the same two seconds move the deadline
by two seconds, not four (the union of the paused intervals, never their sum). What a
snippet computes meanwhile (another task of its asyncio code) is not counted; that is
bounded by the approval timeout of each paused call times ``max_tool_calls``.

:class:`CallScope` is what a runtime hands the projections that ask for it
(``call_scope = True`` on the projection, as the approval and tracing wrappers of
:class:`~ptcbox.agent_glue.RunCodeTool` do): :func:`current_call` returns it while the
projection is called (in the context the call runs in). It names the call's position
in ``CodeResult.tool_calls``, carries the execution's deadline, and takes the arguments
the tool really got when a wrapper changed them (the record shows those, and the
snippet's own as ``requested_arguments``). Other projections cost nothing: the scope is
set only for those that ask.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["CallScope", "Deadline", "call_in_scope", "current_call", "enter_scope"]

_perf = time.perf_counter


class Deadline:
    """The pausable wall-clock limit of one execution (thread-safe).

    Args:
        limit: Seconds the execution may run (``math.inf``: no limit).
        started: When it started, in ``time.perf_counter()`` seconds.
    """

    __slots__ = (
        "_handle",
        "_lock",
        "_loop",
        "_on_expire",
        "_paused",
        "_pauses",
        "_since",
        "limit",
        "started",
    )

    def __init__(self, limit: float, started: float | None = None) -> None:
        self.limit = limit
        self.started = _perf() if started is None else started
        self._lock = threading.Lock()
        self._pauses = 0
        self._paused = 0.0  # seconds paused in finished pauses
        self._since = 0.0  # when the current pause began
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_expire: Callable[[], None] | None = None
        self._handle: asyncio.TimerHandle | None = None

    @property
    def paused(self) -> bool:
        """Whether a pause is active now."""
        return self._pauses > 0

    def paused_seconds(self, now: float | None = None) -> float:
        """Seconds the clock stood still so far (the active pause included)."""
        with self._lock:
            total = self._paused
            if self._pauses:
                total += max((_perf() if now is None else now) - self._since, 0.0)
        return total

    def end(self) -> float:
        """When the deadline passes if no further pause comes, in ``perf_counter`` seconds
        (``math.inf`` while paused or without a limit)."""
        with self._lock:
            if self._pauses or math.isinf(self.limit):
                return math.inf
            return self.started + self.limit + self._paused

    def budget_end(self) -> float:
        """When the budget left now would run out if the clock ran from now on, in
        ``perf_counter`` seconds (during a pause too; ``math.inf`` without a limit)."""
        return self.started + self.limit + self.paused_seconds()

    def remaining(self) -> float:
        """Seconds left (``math.inf`` while paused); never negative."""
        return max(self.end() - _perf(), 0.0)

    def used(self, at: float) -> float:
        """Seconds of the budget used from the start until ``at`` (pauses not counted)."""
        return at - self.started - self.paused_seconds(at)

    def pause(self) -> None:
        """Stop the clock until the matching :meth:`resume` (pauses may overlap)."""
        with self._lock:
            if self._pauses == 0:
                self._since = _perf()
            self._pauses += 1

    def resume(self) -> None:
        """End one pause; the clock runs again when none is left."""
        with self._lock:
            self._pauses -= 1
            if self._pauses == 0:
                self._paused += _perf() - self._since
        self._rearm()

    @contextlib.contextmanager
    def pausing(self) -> Iterator[None]:
        """``with deadline.pausing():`` the block's time does not count."""
        self.pause()
        try:
            yield
        finally:
            self.resume()

    # -- the timer on the host's event loop ----------------------------------------------

    def arm(self, loop: asyncio.AbstractEventLoop, on_expire: Callable[[], None]) -> None:
        """Call ``on_expire`` on ``loop`` once the deadline has passed (pauses respected)."""
        self._loop = loop
        self._on_expire = on_expire
        self._check()

    def disarm(self) -> None:
        """Cancel the timer (on the loop)."""
        self._on_expire = None
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _rearm(self) -> None:
        loop = self._loop
        if loop is not None and self._on_expire is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed
                loop.call_soon_threadsafe(self._check)

    def _check(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        on_expire, loop = self._on_expire, self._loop
        if on_expire is None or loop is None:
            return
        left = self.end() - _perf()
        if math.isinf(left):
            return  # paused (resume re-arms) or no limit
        if left <= 0:
            self._on_expire = None
            on_expire()
            return
        self._handle = loop.call_later(left, self._check)


class CallScope:
    """The tool call a projection is running for (see the module docstring).

    Attributes:
        index: The call's position in ``CodeResult.tool_calls``.
        name: The tool's name.
        deadline: The execution's clock.
        arguments: The arguments the tool really got, when a wrapper replaced the
            snippet's (:meth:`replace_arguments`); else ``None``.
    """

    __slots__ = ("arguments", "deadline", "index", "name")

    def __init__(self, index: int, name: str, deadline: Deadline) -> None:
        self.index = index
        self.name = name
        self.deadline = deadline
        self.arguments: dict[str, Any] | None = None

    def replace_arguments(self, arguments: Mapping[str, Any]) -> None:
        """Record that the tool is called with ``arguments`` instead of the snippet's."""
        self.arguments = dict(arguments)


_CURRENT: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar(
    "ptcbox_call_scope", default=None
)


def current_call() -> CallScope | None:
    """The scope of the tool call being made, in a projection that asked for one."""
    return _CURRENT.get()


def enter_scope(scope: CallScope) -> None:
    """Make ``scope`` current in this context (a task's own, or a copy)."""
    _CURRENT.set(scope)


def call_in_scope(scope: CallScope, fn: Callable[..., Any], /, **arguments: Any) -> Any:
    """Call ``fn(**arguments)`` with ``scope`` current (run it inside a context copy)."""
    _CURRENT.set(scope)
    return fn(**arguments)

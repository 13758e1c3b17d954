"""How many workers a pool forks ahead, and whether they rehearse, from recent demand.

A fresh worker needs a few milliseconds of wall time to set itself up (more on a loaded
machine, where it waits for a CPU); an execution that takes it earlier waits for the
rest. ``min_idle`` workers forked ahead hide that only while executions come less often
than ``min_idle`` per set-up time. :class:`Demand` counts the workers handed out in the
last :data:`WINDOW_S` seconds, less the ones that came back to serve again (reuse mode),
and the pool keeps that many forked ahead (at least ``min_idle``, at most
:data:`MAX_AHEAD`; none ahead when ``min_idle`` is 0, as asked). While more than one
was handed out in the window (executions back to back, not an agent's pace), new
workers skip their rehearsal (see ``worker/_main.py``): it faults in the pages of an
execution's path before a worker's first run, ~1.5-2 ms of CPU that makes an idle
worker's first run faster, but under sustained demand is CPU the executions need
(a worker is handed out before it is ready anyway, and its run faults in only the
pages it uses). Such a worker still rehearses if no run comes within 50 ms (the demand
has passed: it would otherwise serve an agent's next call unrehearsed).
"""

from __future__ import annotations

import time
from collections import deque

__all__ = ["MAX_AHEAD", "WINDOW_S", "Demand"]

WINDOW_S = 0.02
"""The window over which hand-outs are counted (about a worker's set-up time under load)."""
MAX_AHEAD = 8
"""Most workers forked ahead because of demand (``min_idle`` may ask for more)."""


class Demand:
    """Recent hand-outs of one pool.

    Args:
        min_idle: The pool's ``min_idle``.
    """

    def __init__(self, min_idle: int) -> None:
        self.min_idle = min_idle
        self._events: deque[tuple[float, int]] = deque()  # (when, +1 taken / -1 returned)
        self._net = 0

    def _note(self, change: int) -> None:
        now = time.monotonic()
        self._events.append((now, change))
        self._net += change
        self._prune(now)

    def _prune(self, now: float) -> None:
        events = self._events
        while events and now - events[0][0] > WINDOW_S:
            self._net -= events.popleft()[1]
        while len(events) > 4 * MAX_AHEAD:  # bounded, whatever the rate
            self._net -= events.popleft()[1]

    def taken(self) -> None:
        """A worker was handed out to an execution."""
        self._note(1)

    def returned(self) -> None:
        """A worker came back to serve again (reuse mode): it covers a later hand-out."""
        self._note(-1)

    def recent(self) -> int:
        """Hand-outs in the last :data:`WINDOW_S` seconds, less returns (at least 0)."""
        self._prune(time.monotonic())
        return max(0, self._net)

    def ahead(self) -> int:
        """Workers to keep forked and waiting now."""
        if self.min_idle == 0:
            return 0
        return max(self.min_idle, min(self.recent(), MAX_AHEAD))

    def deeper(self) -> bool:
        """Whether demand asks for more workers ahead than ``min_idle``."""
        return self.ahead() > self.min_idle

    def rehearse(self) -> bool:
        """Whether workers forked now should rehearse (not under sustained demand)."""
        return self.recent() <= 1

"""The host threads that serve SubprocessRuntime executions: one fresh thread each.

Each execution's socket is served by one host thread (blocking ``recv``, sync tools run
right there), which keeps a tool call's round trip free of event-loop scheduling. A
thread serves one execution and ends (issue 12, item 4: a ``threading.local`` a tool
sets must not reach a later execution's tools); a few are started in advance (see
:mod:`ptcbox.runtimes._shared._fresh_threads`). The pool is unbounded: a thread held by
a slow tool never delays another execution.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ptcbox.runtimes._shared._fresh_threads import FreshThreads

__all__ = ["ChannelThreads"]

_MAX_SPARES = 8


class ChannelThreads:
    """Run each callable in a daemon thread of its own.

    Args:
        name: Thread name prefix.
        idle_seconds: A thread started in advance ends after this many seconds unused.
    """

    def __init__(self, name: str, idle_seconds: float = 30.0) -> None:
        # more spares once executions start faster than 2 spares are replaced (8 in
        # flight: 18% of starts found none and started their thread on the loop)
        self._fresh = FreshThreads(
            name, spares=2, idle_seconds=idle_seconds, max_spares=_MAX_SPARES
        )

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` in a thread that ran nothing before and ends after it.

        Raises:
            RuntimeError: If the pool is shut down.
        """
        self._fresh.start(lambda: fn(*args))

    def threads(self) -> list[threading.Thread]:
        """The pool's live threads."""
        return self._fresh.threads()

    def shutdown(self, timeout: float) -> bool:
        """Stop the spare threads and wait up to ``timeout`` seconds for busy ones.

        Returns:
            ``True`` when every thread ended in time.
        """
        self._fresh.close()
        ended = True
        for thread in self._fresh.threads():
            if thread is not threading.current_thread():
                if timeout > 0:
                    thread.join(timeout)
                ended = ended and not thread.is_alive()
        return ended

"""The snippet threads of :class:`~ptcbox.runtimes.ThreadRuntime`: one fresh thread per
execution.

A thread runs one execution and ends (issue 12, item 4): a sync tool runs in the
snippet's thread, and a ``threading.local`` it sets must not reach a later execution's
tools. A few threads are kept started in advance (see
:mod:`ptcbox.runtimes._shared._fresh_threads`), so an execution does not wait for a
thread start; a stopped thread ends like any other (see
:mod:`ptcbox.runtimes.thread._control`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ptcbox.runtimes._shared._fresh_threads import FreshThreads

__all__ = ["submit", "tool_threads"]

_SPARES = 2

_snippets = FreshThreads("ptcbox-snippet", spares=_SPARES)
_tools = FreshThreads("ptcbox-tool", spares=_SPARES)


def submit(job: Callable[[], object]) -> None:
    """Run ``job`` in a thread of its own, which ends after it."""
    _snippets.start(job)


def tool_threads() -> FreshThreads:
    """Where an execution's sync tools called from its asyncio code run (see
    :class:`~ptcbox.runtimes._shared._fresh_threads.ScopedExecutor`)."""
    return _tools


def _after_fork_in_child() -> None:
    global _snippets, _tools
    _snippets = FreshThreads("ptcbox-snippet", spares=_SPARES)
    _tools = FreshThreads("ptcbox-tool", spares=_SPARES)


os.register_at_fork(after_in_child=_after_fork_in_child)

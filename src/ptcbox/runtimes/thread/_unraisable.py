"""A ``sys.unraisablehook`` that a stop pending in a snippet thread cannot break.

A stopped snippet's thread has :class:`~ptcbox.runtimes.thread._control.ExecutionInterrupted`
pending until it leaves the snippet, and the line tracer of the snippet's frames re-arms
it on every event, also the ``return`` of a generator frame that the garbage collector
closes in that thread (a snippet generator dropped or collected while the execution
stops). The collector then reports the generator's ``ExecutionInterrupted`` through
``sys.unraisablehook`` while another one is pending. A hook written in Python takes the
pending one on entering its frame (CPython checks for asynchronous exceptions there,
before any ``try`` could catch it), fails, and CPython prints *"Exception ignored in
sys.unraisablehook ... ExecutionInterrupted"* on the host's stderr.

The hook is therefore entered without running a Python frame's first instruction: the
callable CPython calls is C all the way (a property whose getter is
``operator.attrgetter``, on a ``threading.local``) down to ``send`` of a generator
suspended at a ``yield`` inside ``try``. A pending exception lands at that ``yield``,
where the ``except`` catches it. Each thread has its own generator (a generator runs in
one thread at a time) and a fresh one for a nested report on the same thread.

What is lost: a report that was interrupted this way (the thread is a stopped snippet's,
whose output no result carries any more) is dropped, never printed.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Generator
from typing import Any

__all__ = ["make_unraisablehook", "prime"]

Route = Callable[[Any], None]


def _reports(route: Route, interrupted: type[BaseException]) -> Generator[None, Any, None]:
    """Routes each value sent to it; an ``interrupted`` landing at a ``yield`` (or at a
    loop's back edge: the outer loop) is swallowed."""
    while True:
        try:
            while True:
                try:  # noqa: SIM105 - suppress() would run Python frames of its own
                    route((yield))
                except interrupted:
                    pass
        except interrupted:
            pass


class _PerThread(threading.local):
    """``send``: the ``send`` of this thread's suspended :func:`_reports` generator."""

    def __init__(self, route: Route, interrupted: type[BaseException]) -> None:
        reports = _reports(route, interrupted)
        next(reports)
        self.send = reports.send


def make_unraisablehook(
    route: Route, interrupted: type[BaseException], marks: dict[str, Any]
) -> Callable[[Any], None]:
    """A ``sys.unraisablehook`` that calls ``route(unraisable)`` from a generator.

    Args:
        route: The hook's logic (it may raise nothing: an error it raises is printed by
            CPython as a failure of the hook, and that thread's generator is replaced).
        interrupted: The stop exception a pending stop raises (swallowed).
        marks: Class attributes of the hook (``getattr(sys.unraisablehook, mark)``).

    Returns:
        The hook. Call ``prime(hook)`` in a thread before a stop can be pending there
        (its generator is made on first use, by Python code a pending stop would break).
    """

    def routed(unraisable: Any) -> None:
        # a nested report on this thread (route made one) must not find this thread's
        # generator running: it gets a fresh one; and an error route raises leaves a
        # working one behind
        _PerThread.__init__(state, routed, interrupted)
        route(unraisable)

    cls = type(
        "UnraisableHook",
        (_PerThread,),
        {"__slots__": (), "__call__": property(operator.attrgetter("send")), **marks},
    )
    state: _PerThread = cls(routed, interrupted)
    return state  # type: ignore[return-value]


def prime(hook: object) -> None:
    """Make the calling thread's generator of ``hook`` now, if ``hook`` is one of ours."""
    if isinstance(hook, _PerThread):
        hook.send  # noqa: B018 - the first access in a thread runs __init__

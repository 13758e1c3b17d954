"""Helpers of ThreadRuntime tool calls: a sync call the snippet may abandon, waiting for
an async call, and the plain-data copy of a result (see :mod:`ptcbox.runtimes.thread._tools`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Generator
from typing import Any

from ptcbox.errors import ToolError
from ptcbox.runtimes._shared._clock import CallScope
from ptcbox.runtimes._shared._codec import clone
from ptcbox.runtimes._shared._error_text import describe_exception
from ptcbox.runtimes._shared._host import ToolSpec, jsonable_arguments
from ptcbox.runtimes._shared._summary import summarize_arguments
from ptcbox.runtimes._shared._value import MAX_TOOL_DATA_BYTES, json_size_over, result_size_error
from ptcbox.runtimes.thread._control import Control
from ptcbox.runtimes.thread._plaincopy import UNHANDLED, sized_copy

__all__ = [
    "Finish",
    "SyncCall",
    "edited_arguments",
    "plain_result",
    "tool_error_text",
    "trace_entry",
    "wait_async",
]

_SCALARS = frozenset({int, float, bool, type(None)})

Finish = Callable[[int, "bool | None", "str | None", float], None]
"""Records a call's outcome once: ``finish(slot, ok, error, started)``."""


class SyncCall:
    """A sync tool run in a worker thread for a call from the snippet's asyncio code.

    A thread cannot be cancelled: when the snippet stops waiting, the call is
    *abandoned* and records its own real outcome when it ends (see
    :mod:`ptcbox.runtimes._shared._trace`).
    """

    __slots__ = ("abandoned", "finish", "lock", "outcome", "slot", "started")

    def __init__(self, finish: Finish, slot: int, started: float) -> None:
        self.finish = finish
        self.slot = slot
        self.started = started
        self.lock = threading.Lock()
        self.abandoned = False
        self.outcome: tuple[bool, str | None] | None = None

    def run(self, fn: Callable[..., Any], bound: dict[str, Any]) -> Any:
        try:
            value = fn(**bound)
        except BaseException as exc:
            self._ended(False, describe_exception(exc))
            raise
        self._ended(True, None)
        return value

    def _ended(self, ok: bool, error: str | None) -> None:
        with self.lock:
            self.outcome = (ok, error)
            late = self.abandoned
        if late:
            self.finish(self.slot, ok, error, self.started)

    def abandon(self) -> None:
        with self.lock:
            self.abandoned = True
            outcome = self.outcome
        if outcome is not None:  # it had just ended: its real outcome
            self.finish(self.slot, *outcome, self.started)


def wait_async(
    control: Control,
    future: concurrent.futures.Future[Any],
    cancelled: Callable[[], None] | None = None,
) -> Generator[Any, None, Any]:
    """What awaiting an :class:`AwaitableToolCall` of this runtime runs.

    ``cancelled`` records an async tool's call as cancelled when the snippet cancels
    the wait (the host's coroutine is cancelled with it, see ``_trace``).
    """
    try:
        return (yield from asyncio.wrap_future(future))
    except asyncio.CancelledError:
        if cancelled is not None:
            cancelled()
        raise
    finally:
        control.untrack(future)


def plain_result(spec: ToolSpec, result: Any) -> Any:
    """A tool result as a plain-data copy; raises if over the size limit."""
    if type(result) not in _SCALARS:
        copied = sized_copy(result, MAX_TOOL_DATA_BYTES)  # one walk, for the usual data
        if copied is not UNHANDLED:
            return copied
        over = json_size_over(result, MAX_TOOL_DATA_BYTES)
        if over:
            raise result_size_error(spec.name, over)
    return clone(result)


def tool_error_text(exc: BaseException) -> str:
    if isinstance(exc, ToolError):
        return exc.message
    return describe_exception(exc)


def trace_entry(  # noqa: PLR0917 - the record's fields, in order
    name: str,
    arguments: dict[str, Any],
    ok: bool | None,
    error: str | None,
    duration: float,
    requested: dict[str, Any] | None = None,
) -> tuple[Any, ...]:
    """A finished trace entry (the ``ToolCallRecord`` fields), arguments summarized."""
    if requested is None:
        return (name, summarize_arguments(arguments), ok, error, duration)
    summary = summarize_arguments(requested)
    return (name, summarize_arguments(arguments), ok, error, duration, summary)


def edited_arguments(
    scopes: dict[int, CallScope], slot: int, arguments: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The arguments a scoped call's tool got and, if a wrapper changed them, the
    snippet's (see :class:`~ptcbox.runtimes._shared._clock.CallScope`)."""
    scope = scopes.pop(slot, None)
    if scope is None or scope.arguments is None:
        return arguments, None
    return jsonable_arguments(scope.arguments), arguments

"""``asyncio.get_running_loop()`` for snippets: a view with the harmless loop methods.

The real loop object leads everywhere a snippet must not go (``run_in_executor`` threads,
``subprocess_exec``, sockets, ``set_exception_handler``, the loop's other tasks). Model
code asks it for the time (``loop.time()``, for ``asyncio.timeout_at``), whether it runs,
and to create tasks; the view answers exactly that, and names what it leaves out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Final

__all__ = ["LOOP_METHODS", "RunningLoop", "get_running_loop"]

LOOP_METHODS: Final = ("time", "is_running", "is_closed", "create_task")


class RunningLoop:
    """The running event loop as a snippet sees it (see the module docstring)."""

    __slots__ = ("_loop",)  # "_loop" is refused on every object (RESTRICTED_ATTRS)
    _loop: asyncio.AbstractEventLoop

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        object.__setattr__(self, "_loop", loop)

    def time(self) -> float:
        """The loop's clock, in seconds (what ``asyncio.timeout_at`` expects)."""
        return self._loop.time()

    def is_running(self) -> bool:
        """True while the loop runs (always, from inside a coroutine)."""
        return self._loop.is_running()

    def is_closed(self) -> bool:
        """True once the loop is closed."""
        return self._loop.is_closed()

    def create_task(self, coro: Coroutine[Any, Any, Any], *, name: str | None = None) -> Any:
        """Schedule ``coro`` as a task on this loop (as ``asyncio.create_task``)."""
        return self._loop.create_task(coro, name=name)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"loop.{name} is not available in the sandbox (it reaches threads, processes, "
            f"sockets or other tasks); the loop offers {', '.join(LOOP_METHODS)}"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("the event loop view is read-only")

    def __repr__(self) -> str:
        return "<running event loop (sandbox view)>"


def get_running_loop() -> RunningLoop:
    """asyncio.get_running_loop() -- sandboxed: a view with time/is_running/create_task.

    Raises:
        RuntimeError: No event loop is running (as ``asyncio.get_running_loop``).
    """
    return RunningLoop(asyncio.get_running_loop())

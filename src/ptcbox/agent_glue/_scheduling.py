"""Ordering tool calls: parallel-safe calls overlap, every other call runs alone.

Calls are started in source order as they arrive. A parallel-safe call waits only for
the last non-parallel-safe call before it; a call that is not parallel-safe waits for
every call before it, and every later call waits for it. So a batch of parallel-safe
calls runs concurrently, a batch with any other call keeps strict source order around
that call, and a streaming turn can start each call as soon as its arguments are
complete without knowing the calls still to come.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import anyio

from ptcbox.agent_glue._tool_result import ToolResult

__all__ = ["CallScheduler"]


class CallScheduler:
    """Starts tool calls as asyncio tasks in source order, honouring parallel safety."""

    __slots__ = ("_barrier", "_since_barrier", "tasks")

    def __init__(self) -> None:
        self._barrier: asyncio.Task[ToolResult] | None = None
        self._since_barrier: list[asyncio.Task[ToolResult]] = []
        self.tasks: list[asyncio.Task[ToolResult]] = []

    def start(
        self, run: Callable[[], Awaitable[ToolResult]], *, parallel_safe: bool
    ) -> asyncio.Task[ToolResult]:
        """Schedule one call.

        Args:
            run: Runs the call; started once the calls it must follow are done.
            parallel_safe: Whether the call may overlap other parallel-safe calls.

        Returns:
            The task whose result is the call's result.
        """
        if parallel_safe:
            waits = [self._barrier] if self._barrier is not None else []
        else:
            waits = [*([self._barrier] if self._barrier is not None else []), *self._since_barrier]
        task = asyncio.create_task(_after(waits, run))
        if parallel_safe:
            self._since_barrier.append(task)
        else:
            self._barrier = task
            self._since_barrier = []
        self.tasks.append(task)
        return task

    async def cancel_all(self) -> None:
        """Cancel every call not yet finished and wait until all have ended."""
        for task in self.tasks:
            task.cancel()
        if self.tasks:
            with anyio.CancelScope(shield=True):
                await asyncio.gather(*self.tasks, return_exceptions=True)


async def _after(
    waits: list[asyncio.Task[ToolResult]], run: Callable[[], Awaitable[ToolResult]]
) -> ToolResult:
    pending = [task for task in waits if not task.done()]
    if pending:
        await asyncio.wait(pending)
    return await run()

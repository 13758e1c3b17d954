"""The Ray actor of a RayRuntime: one SubprocessRuntime pool on one node of the cluster.

:class:`RayHost` is a plain class; the caller makes it a Ray actor (``ray.remote``) with
its resources, so this module imports nothing of Ray. It runs as an async actor: every
method runs on the actor's event loop, concurrently. :meth:`RayHost.execute` is a
streaming generator (``num_returns="streaming"``): it runs one snippet in the actor's
SubprocessRuntime and yields JSON text, batches of events (tool calls for the caller to
run, cancelled calls, records and output when the caller observes them), the last one
ending with the result. The caller answers each call with :meth:`RayHost.tool_result`.
Nothing but JSON text and plain strings leaves the actor.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import orjson

from ptcbox.errors import RuntimeClosedError, SessionEndedError
from ptcbox.runtimes.ray._messages import event_batch
from ptcbox.runtimes.ray._proxy import ExecutionLink, ProxyTool
from ptcbox.runtimes.subprocess import SubprocessRuntime, SubprocessSession
from ptcbox.sandbox import SandboxPolicy

__all__ = ["RayHost"]

_CANCEL_S = 5.0
_RAISED = (RuntimeClosedError, SessionEndedError, TypeError, ValueError)


class RayHost:
    """One actor: a SubprocessRuntime and the executions it runs for callers.

    Args:
        policy: The sandbox policy (sent by the caller; a frozen dataclass of data).
        options: Keyword arguments of its :class:`SubprocessRuntime`.
    """

    def __init__(self, policy: SandboxPolicy, options: dict[str, Any]) -> None:
        self._runtime = SubprocessRuntime(policy, **options)
        self._links: dict[str, ExecutionLink] = {}
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._sessions: dict[str, SubprocessSession] = {}

    async def ready(self) -> int:
        """Start the worker pool; returns the actor's process id."""
        await self._runtime.start()
        import os  # noqa: PLC0415 - only here

        return os.getpid()

    async def execute(
        self,
        execution_id: str,
        request: str,
        timeout: float,
        extra_globals: dict[str, Any] | None,
    ) -> AsyncIterator[str]:
        """Run one snippet; yield batches of events as JSON text, the result last.

        Args:
            execution_id: The caller's id of this execution (for replies and cancel).
            request: ``{"code", "tools", "calls", "output", "session"}`` as JSON text.
            timeout: The execution's timeout in seconds.
            extra_globals: JSON-compatible globals (checked by the caller).
        """
        loop = asyncio.get_running_loop()
        spec = orjson.loads(request)
        link = ExecutionLink(loop)
        self._links[execution_id] = link
        namespace = {tool["name"]: ProxyTool(link, tool) for tool in spec["tools"]}
        target: SubprocessRuntime | SubprocessSession = self._runtime
        session_id = spec.get("session")
        if session_id is not None:
            session = self._sessions.get(session_id)
            if session is None:
                session = self._sessions[session_id] = self._runtime.session()
            target = session
        task = loop.create_task(
            target.execute(
                spec["code"],
                namespace,
                timeout=timeout,
                extra_globals=extra_globals,
                on_tool_call=link.record if spec["calls"] else None,
                on_output=link.output if spec["output"] else None,
            )
        )
        self._tasks[execution_id] = task
        waiter: asyncio.Task[Any] | None = None
        try:
            while not task.done():
                waiter = loop.create_task(link.wakeup.wait())
                await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if link.events and not task.done():
                    yield event_batch(link.take())
            events = link.take()
            try:
                result = task.result()
            except asyncio.CancelledError:
                events.append({"t": "cancelled"})
            except _RAISED as exc:
                reason = exc.reason if isinstance(exc, SessionEndedError) else str(exc)
                events.append({"t": "raise", "kind": type(exc).__name__, "message": reason})
            else:
                events.append({"t": "result", "r": result.to_dict()})
            yield event_batch(events)
        finally:
            if waiter is not None:
                waiter.cancel()
            link.end()
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            self._links.pop(execution_id, None)
            self._tasks.pop(execution_id, None)

    async def tool_result(self, execution_id: str, call_id: int, text: str) -> None:
        """The caller's reply to a tool call; late or unknown replies are dropped."""
        link = self._links.get(execution_id)
        if link is not None:
            link.answer(call_id, text)

    async def cancel(self, execution_id: str) -> None:
        """Cancel an execution (its worker process is killed); unknown ids are ignored."""
        task = self._tasks.get(execution_id)
        if task is not None:
            task.cancel()  # the SubprocessRuntime kills the worker before it ends
            await asyncio.wait({task}, timeout=_CANCEL_S)

    async def close_session(self, session_id: str) -> None:
        """Close a session (its worker process is killed)."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            await session.aclose()

    async def close(self) -> None:
        """Close the SubprocessRuntime: every worker killed; running executions end."""
        await self._runtime.aclose()

"""Actor side of a RayRuntime execution: tools that forward each call to the caller.

The actor runs the snippet in its own :class:`~ptcbox.runtimes.SubprocessRuntime`, whose
namespace is made of :class:`ProxyTool` projections. The SubprocessRuntime does all it
does for any tool (binding by the tool's signature, the call limit, the trace, the
concurrency bound, cancellation); each proxy call becomes a ``call`` event on the
execution's :class:`ExecutionLink`, which the actor sends to the caller, and waits for
the caller's reply (``RayHost.tool_result``). A sync tool's proxy blocks the
SubprocessRuntime's channel thread, as a sync tool does; an async tool's proxy awaits on
the actor's event loop and tells the caller when the snippet stops waiting for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
from typing import Any

from ptcbox._result import ToolCallRecord
from ptcbox.errors import ToolError
from ptcbox.runtimes._shared._codec import encode
from ptcbox.runtimes.ray._messages import read_reply, signature_from_descriptor

__all__ = ["ExecutionLink", "ProxyTool"]

_ENDED = "the execution ended before the caller answered"


class ExecutionLink:
    """The events of one execution on their way to the caller, and the calls awaiting replies.

    Args:
        loop: The actor's event loop (every method but :meth:`call_from_thread` runs on it).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.events: list[dict[str, Any]] = []
        self.wakeup = asyncio.Event()
        self._ids = itertools.count()
        self._waiting: dict[int, asyncio.Future[str] | concurrent.futures.Future[str]] = {}
        self._ended = False

    def put(self, event: dict[str, Any]) -> None:
        """Queue an event for the caller (on the loop)."""
        self.events.append(event)
        self.wakeup.set()

    def take(self) -> list[dict[str, Any]]:
        """Every queued event, oldest first (on the loop)."""
        events, self.events = self.events, []
        self.wakeup.clear()
        return events

    def answer(self, call_id: int, text: str) -> None:
        """The caller's reply to a call (on the loop); unknown or late replies are dropped."""
        future = self._waiting.pop(call_id, None)
        if future is not None and not future.done():
            future.set_result(text)

    def end(self) -> None:
        """Fail every call still waiting (their threads and tasks return). Idempotent."""
        self._ended = True
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ToolError("", _ENDED))
        self._waiting.clear()

    def start_call(self, name: str, kwargs: dict[str, Any]) -> tuple[int, asyncio.Future[str]]:
        """Send a call to the caller (on the loop); returns its id and its reply."""
        future: asyncio.Future[str] = self.loop.create_future()
        call_id = next(self._ids)
        if self._ended:
            future.set_exception(ToolError(name, _ENDED))
            return call_id, future
        self._waiting[call_id] = future
        self.put({"t": "call", "id": call_id, "name": name, "kwargs": kwargs})
        return call_id, future

    def cancel_call(self, call_id: int) -> None:
        """The snippet stopped waiting for an async call: tell the caller (on the loop)."""
        if self._waiting.pop(call_id, None) is not None:
            self.put({"t": "cancel", "id": call_id})

    def call_from_thread(self, name: str, kwargs: dict[str, Any]) -> str:
        """Send a call from a SubprocessRuntime thread and block until the reply."""
        future: concurrent.futures.Future[str] = concurrent.futures.Future()

        def start() -> None:
            if self._ended:
                future.set_exception(ToolError(name, _ENDED))
                return
            call_id = next(self._ids)
            self._waiting[call_id] = future
            self.put({"t": "call", "id": call_id, "name": name, "kwargs": kwargs})

        self.loop.call_soon_threadsafe(start)
        return future.result()

    def record(self, record: ToolCallRecord) -> None:
        """``on_tool_call`` of the actor's SubprocessRuntime: relay the record."""
        self.put({"t": "record", "r": record.to_dict()})

    def output(self, stream: str, text: str) -> None:
        """``on_output`` of the actor's SubprocessRuntime: relay the chunk."""
        self.put({"t": "out", "s": stream, "x": text})


class ProxyTool:
    """A projection that forwards its calls to the caller's tool of the same name.

    Args:
        link: The execution's link to the caller.
        descriptor: The tool as :func:`~ptcbox.runtimes.ray._messages.tool_descriptor`
            describes it.
    """

    def __init__(self, link: ExecutionLink, descriptor: dict[str, Any]) -> None:
        self._link = link
        self.name: str = descriptor["name"]
        self.doc: str | None = descriptor["doc"]
        self.is_async: bool = descriptor["async"] is True
        self.signature = signature_from_descriptor(descriptor["params"])

    def __call__(self, **kwargs: Any) -> Any:
        encoded = {key: encode(value) for key, value in kwargs.items()}
        if self.is_async:
            return self._call_async(encoded)
        return read_reply(self._link.call_from_thread(self.name, encoded), self.name)

    async def _call_async(self, encoded: dict[str, Any]) -> Any:
        call_id, reply = self._link.start_call(self.name, encoded)
        try:
            text = await reply
        except asyncio.CancelledError:
            with contextlib.suppress(RuntimeError):
                self._link.cancel_call(call_id)
            raise
        return read_reply(text, self.name)

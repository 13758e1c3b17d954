"""Caller side of one RayRuntime execution: read the actor's events, run the tools here.

:class:`CallerExecution` reads the actor's batches of events (JSON text only), runs each tool
call in the caller's process (async tools as tasks on the caller's event loop, sync
tools in the runtime's tool threads, so a slow tool never blocks the loop and calls from
``asyncio.gather`` in the snippet run at once) and answers with
``actor.tool_result.remote(...)``. It relays records and output to the caller's
observers, keeps the output and the calls it saw for the result of an actor that dies,
and cancels an async tool when the actor says the snippet stopped waiting for it.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import time
from collections.abc import AsyncIterator
from concurrent.futures import Executor
from typing import Any

from ptcbox._result import ToolCallRecord
from ptcbox.errors import WireProtocolError
from ptcbox.runtimes._protocol import OutputCallback, ToolCallCallback
from ptcbox.runtimes._shared._codec import decode
from ptcbox.runtimes._shared._error_text import describe_exception
from ptcbox.runtimes._shared._host import ToolSpec, jsonable_arguments
from ptcbox.runtimes._shared._output import call_observer
from ptcbox.runtimes._shared._trace import CANCELLED, CANCELLED_AT_END, RUNNING_AT_END
from ptcbox.runtimes._shared._value import (
    MAX_TOOL_DATA_BYTES,
    json_size_over,
    result_size_error,
)
from ptcbox.runtimes.ray._messages import parse_batch, record_from_data, reply_text

__all__ = ["CallerExecution"]

_SCALARS = frozenset({int, float, bool, type(None)})


class CallerExecution:
    """Serve one execution's events.

    Args:
        actor: The actor's handle (answers go to ``actor.tool_result``).
        execution_id: The execution's id.
        specs: The caller's tools by name.
        executor: Where sync tools run.
        on_tool_call: The caller's observer of finished calls.
        on_output: The caller's observer of output chunks.
        max_output_bytes: The policy's output cap (output kept for a crash result).
    """

    def __init__(  # noqa: PLR0917
        self,
        actor: Any,
        execution_id: str,
        specs: dict[str, ToolSpec],
        executor: Executor,
        on_tool_call: ToolCallCallback | None,
        on_output: OutputCallback | None,
        max_output_bytes: int,
    ) -> None:
        self._actor = actor
        self._id = execution_id
        self._specs = specs
        self._executor = executor
        self._on_tool_call = on_tool_call
        self._on_output = on_output
        self._loop = asyncio.get_running_loop()
        self._context = contextvars.copy_context()
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._keep = 4 * max_output_bytes
        self._kept = 0
        self._records: list[ToolCallRecord | None] = []  # in start order
        self._open: dict[int, tuple[ToolSpec, dict[str, Any], float]] = {}  # by index

    @property
    def calls(self) -> tuple[ToolCallRecord, ...]:
        """The calls this side ran, in start order (for the result of an actor that died)."""
        return tuple(record for record in self._records if record is not None)

    async def serve(self, stream: AsyncIterator[Any]) -> dict[str, Any]:
        """Serve the batches (JSON text) until the last event (``result``, ``raise`` or
        ``cancelled``).

        Raises:
            WireProtocolError: The actor sent something malformed.
            ray.exceptions.RayActorError: The actor died.
        """
        try:
            async for text in stream:
                for event in parse_batch(text):
                    kind = event.get("t")
                    if kind == "call":
                        self._start(event)
                    elif kind == "cancel":
                        task = self._tasks.get(event.get("id"))  # type: ignore[arg-type]
                        if task is not None:
                            task.cancel()
                    elif kind == "record":
                        if self._on_tool_call is not None:
                            record = record_from_data(event.get("r") or {})
                            call_observer(self._loop, self._on_tool_call, record)
                    elif kind == "out":
                        self._output(event)
                    elif kind in ("result", "raise", "cancelled"):
                        return event
                    else:
                        raise WireProtocolError(f"unknown event {str(kind)[:50]!r} from the actor")
            raise WireProtocolError("the actor's stream ended without a result")
        finally:
            for task in self._tasks.values():
                task.cancel()
            for index, (spec, _, started) in list(self._open.items()):
                if spec.is_async:
                    self._trace(index, False, CANCELLED_AT_END, started)
                else:  # its thread runs on; its reply is dropped
                    self._trace(index, None, RUNNING_AT_END, started)

    def _output(self, event: dict[str, Any]) -> None:
        stream, text = event.get("s"), event.get("x")
        if not isinstance(text, str) or stream not in ("stdout", "stderr"):
            raise WireProtocolError("malformed output event from the actor")
        if self._kept < self._keep:  # for a crash result, which caps it again
            self._kept += len(text)
            (self.stdout if stream == "stdout" else self.stderr).append(text)
        if self._on_output is not None:
            call_observer(self._loop, self._on_output, str(stream), text)

    def _start(self, event: dict[str, Any]) -> None:
        call_id, name, kwargs = event.get("id"), event.get("name"), event.get("kwargs")
        if type(call_id) is not int or type(name) is not str or type(kwargs) is not dict:
            raise WireProtocolError("malformed tool call from the actor")
        spec = self._specs.get(name)
        if spec is None:
            raise WireProtocolError(f"the actor called an unknown tool {name[:100]!r}")
        try:
            arguments = {str(key): decode(value) for key, value in kwargs.items()}
        except ValueError as exc:
            raise WireProtocolError(f"malformed tool arguments: {exc}") from None
        index = len(self._records)
        self._records.append(None)
        self._open[index] = (spec, arguments, time.perf_counter())
        context = self._context.copy()
        task = self._loop.create_task(self._run(call_id, index, spec, arguments), context=context)
        self._tasks[call_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(call_id, None))

    async def _run(
        self, call_id: int, index: int, spec: ToolSpec, arguments: dict[str, Any]
    ) -> None:
        started = time.perf_counter()
        try:
            if spec.is_async:
                value = await spec.call(**arguments)
            else:
                context = contextvars.copy_context()
                value = await self._loop.run_in_executor(
                    self._executor, lambda: context.run(spec.call, **arguments)
                )
                if inspect.isawaitable(value):  # a "sync" projection returned an awaitable
                    value = await value
        except asyncio.CancelledError:
            self._trace(index, False, CANCELLED, started)
            raise
        except Exception as exc:
            self._fail(call_id, index, exc, started)
            return
        if type(value) not in _SCALARS:
            over = json_size_over(value, MAX_TOOL_DATA_BYTES)
            if over:  # refused here: it never travels to the actor
                self._fail(call_id, index, result_size_error(spec.name, over), started)
                return
        self._trace(index, True, None, started)
        self._actor.tool_result.remote(self._id, call_id, reply_text(True, value))

    def _fail(self, call_id: int, index: int, exc: Exception, started: float) -> None:
        self._trace(index, False, describe_exception(exc), started)
        self._actor.tool_result.remote(self._id, call_id, reply_text(False, exc))

    def _trace(self, index: int, ok: bool | None, error: str | None, started: float) -> None:
        entry = self._open.pop(index, None)
        if entry is not None:
            spec, arguments, _ = entry
            seconds = time.perf_counter() - started
            self._records[index] = ToolCallRecord(
                spec.name, jsonable_arguments(arguments), ok, error, seconds
            )

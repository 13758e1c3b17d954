"""One model turn with its tool calls: :func:`step` and :class:`StepResult`.

Design source: MoonshotAI/kosong ``step``. The turn is streamed; each tool call starts
as soon as its arguments are complete (when the next call begins or the stream ends),
so tools run while the model is still writing. ``history`` is never modified. On a
provider error or cancellation every started tool call is cancelled and awaited before
the exception propagates. Needs an asyncio event loop (tool calls are asyncio tasks
that outlive the call to ``step``; ``StepResult.tool_results`` collects them).
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio

from ptcbox._tracing import set_attributes, span
from ptcbox.agent_glue._history import repair_tool_history
from ptcbox.agent_glue._messages import Message, ToolCall, Usage
from ptcbox.agent_glue._provider import ChatProvider, StreamedPart, TextPart, ToolCallPart
from ptcbox.agent_glue._registry import Toolset
from ptcbox.agent_glue._scheduling import CallScheduler
from ptcbox.agent_glue._tool_result import ToolResult, interrupted_result

__all__ = ["TRUNCATED", "StepResult", "step"]

TRUNCATED = (
    "your previous message was cut off by the output-token limit (finish_reason "
    '"length") before it was complete, so no tool call from it was run. Send the tool '
    "calls again, complete; keep each call's arguments short (split a long snippet into "
    "several run_code calls)."
)
"""The error result every tool call of a truncated turn gets."""

MessagePartCallback = Callable[[StreamedPart], Awaitable[None] | None]
ToolResultCallback = Callable[[ToolResult], None]


@dataclass(frozen=True, slots=True)
class StepResult:
    """The outcome of one :func:`step`.

    Attributes:
        id: The message id the provider gave, or ``None``.
        message: The assistant message (text and tool calls, complete).
        usage: Token usage of the request, if the provider reported it.
        tool_calls: The turn's tool calls, in the order the model made them.
        finish_reason: Why the model stopped (``"stop"``, ``"tool_calls"``,
            ``"length"``, ...), if reported.
    """

    id: str | None
    message: Message
    usage: Usage | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None = None
    _futures: tuple[asyncio.Future[ToolResult], ...] = field(default=(), repr=False)

    async def tool_results(self) -> list[ToolResult]:
        """Wait for the turn's tool results; returns them in tool-call order.

        Always cleans up: if waiting is cancelled (or fails), every call not yet
        finished is cancelled and awaited before the exception propagates. A call that
        was cancelled on its own yields an ``"interrupted"`` error result; an
        unexpected exception from a toolset yields an error result naming it.

        Returns:
            One result per tool call.
        """
        try:
            results: list[ToolResult] = []
            for call, future in zip(self.tool_calls, self._futures, strict=True):
                if not future.done():
                    await asyncio.wait([future])
                results.append(_outcome(call, future))
            return results
        finally:
            pending = [future for future in self._futures if not future.done()]
            for future in pending:
                future.cancel()
            if pending:
                with anyio.CancelScope(shield=True):
                    await asyncio.gather(*pending, return_exceptions=True)


def _outcome(call: ToolCall, future: asyncio.Future[ToolResult]) -> ToolResult:
    if future.cancelled():
        return interrupted_result(call.id, call.name)
    error = future.exception()
    if error is not None:
        return ToolResult.failure(
            f"tool {call.name!r} failed unexpectedly: {type(error).__name__}: {error}"
        ).with_call(call.id, call.name)
    return future.result()


async def step(
    provider: ChatProvider,
    system_prompt: str,
    toolset: Toolset,
    history: Sequence[Message],
    *,
    on_message_part: MessagePartCallback | None = None,
    on_tool_result: ToolResultCallback | None = None,
) -> StepResult:
    """Generate one assistant turn and start its tool calls.

    The history is repaired with :func:`repair_tool_history` before it is sent (never
    modified). Tool calls are started through ``toolset.execute`` as soon as each is
    complete, honouring parallel safety (see ``ToolRegistry.execute_batch``). A turn
    cut by the output-token limit (``finish_reason == "length"``) runs no tool call:
    calls already started are cancelled and every call gets an error result telling
    the model to retry complete.

    Args:
        provider: The chat provider.
        system_prompt: The system prompt.
        toolset: The tools (a ``ToolRegistry`` or any ``Toolset``).
        history: The conversation so far.
        on_message_part: Called with each streamed part (sync or async).
        on_tool_result: Called with each tool result as soon as it is ready.

    Returns:
        The turn; ``await result.tool_results()`` gives the tool results.

    Raises:
        ChatProviderError: If the provider fails (started tool calls are cancelled).
        asyncio.CancelledError: If cancelled (started tool calls are cancelled first).
    """
    messages = repair_tool_history(history).messages
    scheduler = CallScheduler()
    builder = _TurnBuilder()

    def start(call: ToolCall) -> None:
        async def run() -> ToolResult:
            result = await toolset.execute(call)
            if on_tool_result is not None:
                on_tool_result(result)  # before the result is visible to tool_results()
            return result

        task = scheduler.start(run, parallel_safe=toolset.is_parallel_safe(call.name))
        builder.futures.append(task)

    model = provider.model_name
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": getattr(provider, "provider_name", None),
        "gen_ai.request.model": model,
    }
    try:
        with span(f"chat {model}", attributes) as active:
            stream = await provider.generate(system_prompt, toolset.definitions(), messages)
            try:
                async for part in stream:
                    if on_message_part is not None:
                        maybe = on_message_part(part)
                        if inspect.isawaitable(maybe):
                            await maybe
                    for call in builder.add(part):
                        start(call)
            finally:
                with anyio.CancelScope(shield=True):
                    await stream.aclose()
            _record_response(active, stream.id, stream.finish_reason, stream.usage)
        truncated = stream.finish_reason == "length"
        if truncated:
            await scheduler.cancel_all()
        else:
            for call in builder.finish():
                start(call)
    except BaseException:
        await scheduler.cancel_all()
        raise
    calls = builder.calls()
    futures: list[asyncio.Future[ToolResult]]
    if truncated:
        futures = [_resolved(ToolResult.failure(TRUNCATED).with_call(c.id, c.name)) for c in calls]
        if on_tool_result is not None:
            for future in futures:
                on_tool_result(future.result())
    else:
        futures = list(builder.futures)
    return StepResult(
        id=stream.id,
        message=Message.assistant(builder.text(), tuple(calls)),
        usage=stream.usage,
        tool_calls=tuple(calls),
        finish_reason=stream.finish_reason,
        _futures=tuple(futures),
    )


def _record_response(
    active: object, response_id: str | None, finish: str | None, usage: Usage | None
) -> None:
    set_attributes(
        active,  # type: ignore[arg-type]
        {
            "gen_ai.response.id": response_id,
            "gen_ai.response.finish_reasons": [finish] if finish else None,
            "gen_ai.usage.input_tokens": usage.input_tokens if usage else None,
            "gen_ai.usage.output_tokens": usage.output_tokens if usage else None,
            "gen_ai.usage.cache_read.input_tokens": usage.cached_input_tokens if usage else None,
            "gen_ai.usage.cache_creation.input_tokens": (
                usage.cache_write_input_tokens if usage else None
            ),
        },
    )


def _resolved(result: ToolResult) -> asyncio.Future[ToolResult]:
    future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
    future.set_result(result)
    return future


class _PendingCall:
    __slots__ = ("arguments", "id", "name")

    def __init__(self, call_id: str | None, name: str | None) -> None:
        self.id = call_id or ""
        self.name = name or ""
        self.arguments: list[str] = []

    def build(self, position: int) -> ToolCall:
        call_id = self.id or f"call_{position}_{uuid.uuid4().hex[:8]}"
        return ToolCall(id=call_id, name=self.name, arguments="".join(self.arguments))


class _TurnBuilder:
    """Assembles streamed parts; reports each tool call once it is complete."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._pending: list[_PendingCall] = []
        self._by_index: dict[int, _PendingCall] = {}
        self._built: list[ToolCall] = []
        self.futures: list[asyncio.Future[ToolResult]] = []

    def add(self, part: StreamedPart) -> list[ToolCall]:
        if isinstance(part, TextPart):
            self._text.append(part.text)
            return []
        if not isinstance(part, ToolCallPart):  # pragma: no cover - protocol misuse
            return []
        current = self._by_index.get(part.index)
        if current is None or (part.id and current.id and part.id != current.id):
            current = _PendingCall(part.id, part.name)
            self._by_index[part.index] = current
            self._pending.append(current)
        else:
            current.id = current.id or part.id or ""
            current.name = current.name or part.name or ""
        current.arguments.append(part.arguments)
        # every call before the one being written is complete
        return self._complete(upto=self._pending.index(current))

    def finish(self) -> list[ToolCall]:
        return self._complete(upto=len(self._pending))

    def _complete(self, upto: int) -> list[ToolCall]:
        done = [
            pending.build(position)
            for position, pending in enumerate(self._pending[:upto])
            if position >= len(self._built)
        ]
        self._built.extend(done)
        return done

    def calls(self) -> list[ToolCall]:
        built = list(self._built)
        built.extend(p.build(i) for i, p in enumerate(self._pending) if i >= len(built))
        return built

    def text(self) -> str:
        return "".join(self._text)

"""The agent loop: :class:`Agent` runs steps until the model stops calling tools.

Safety behaviour of mature agent runtimes (pi-mono's agent loop, kosong's ``step``):
hooks before and after each tool call, ``terminate`` from a tool, progress events,
interrupts that leave a valid history (every unfinished call gets
``"Tool call interrupted by user"``), user messages queued while tools run inserted
at the turn boundary, and usage accumulated per run.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

import anyio

from ptcbox._execute import run_blocking
from ptcbox._tracing import set_attributes, span
from ptcbox.agent_glue._context import ToolContext
from ptcbox.agent_glue._events import (
    AfterToolCall,
    AgentEnd,
    AgentEvent,
    AgentRunResult,
    AgentStart,
    BeforeToolCall,
    BlockToolCall,
    MessageDelta,
    StopReason,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from ptcbox.agent_glue._messages import Message, ToolCall, Usage
from ptcbox.agent_glue._provider import ChatProvider, StreamedPart, TextPart
from ptcbox.agent_glue._registry import ToolRegistry, as_registry
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.agent_glue._step import StepResult, step
from ptcbox.agent_glue._tool import Tool
from ptcbox.agent_glue._tool_result import ToolResult, interrupted_result

__all__ = ["Agent"]

EventCallback = Callable[[AgentEvent], None]


class Agent:
    """A tool-calling agent over a :class:`ChatProvider`.

    Args:
        provider: The model.
        tools: A :class:`ToolRegistry`, or tools/functions to put in one (include a
            ``RunCodeTool`` to let the model program the others).
        system_prompt: The system prompt.
        max_steps: Most model requests per run.
        before_tool_call: Hook run before each call: block it or rewrite its arguments.
        after_tool_call: Hook run after each call: replace its result.
        on_event: Called with every :data:`AgentEvent`, on the event loop, in order.
            Must not block.
        messages: A conversation to continue.

    Example:
        >>> agent = Agent(provider, [RunCodeTool(registry)], "You are a careful analyst.")
        >>> result = await agent.run("Which engineers went over their Q3 travel budget?")
        >>> result.final_text, result.usage.total_tokens
    """

    def __init__(
        self,
        provider: ChatProvider,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any]] = (),
        system_prompt: str = "",
        *,
        max_steps: int = 20,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        on_event: EventCallback | None = None,
        messages: Sequence[Message] = (),
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.provider = provider
        self.tools = as_registry(tools)
        self.system_prompt = system_prompt
        self.max_steps = max_steps
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self._listeners: list[EventCallback] = [on_event] if on_event is not None else []
        self._messages: list[Message] = list(messages)
        self._queued: list[Message] = []
        self._queue_lock = threading.Lock()
        self._scope: anyio.CancelScope | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.usage = Usage(requests=0)

    # -- state -------------------------------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        """The conversation so far (without the system prompt)."""
        return tuple(self._messages)

    @property
    def running(self) -> bool:
        """``True`` while :meth:`run` is active."""
        return self._scope is not None

    def queue_user_message(self, text: str) -> None:
        """Queue a user message; it is inserted at the next turn boundary.

        While tools run, the message waits until the turn's results are in the history;
        a run that would end continues with one more turn to answer it. Thread-safe.

        Args:
            text: The message.
        """
        with self._queue_lock:
            self._queued.append(Message.user(text))

    def interrupt(self) -> None:
        """Stop the current run as soon as possible. Thread-safe; no-op when idle.

        Unfinished tool calls are cancelled and get ``"Tool call interrupted by user"``
        results; :meth:`run` returns with ``stop_reason="interrupted"``.
        """
        loop, scope = self._loop, self._scope
        if loop is None or scope is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            scope.cancel()
        else:
            loop.call_soon_threadsafe(scope.cancel)

    # -- running -----------------------------------------------------------------------

    async def run(self, prompt: str | None = None) -> AgentRunResult:
        """Run the loop for one prompt.

        Args:
            prompt: The user's message; ``None`` continues the conversation as it is.

        Returns:
            What the run did (new messages, final text, usage, stop reason).

        Raises:
            RuntimeError: If the agent is already running.
            ChatProviderError: If the model API fails (the history stays valid).
        """
        if self._scope is not None:
            raise RuntimeError("the agent is already running; queue_user_message() instead")
        start = len(self._messages)
        self._loop = asyncio.get_running_loop()
        self._scope = scope = anyio.CancelScope()
        usage, steps = Usage(requests=0), 0
        stop: StopReason = "completed"
        turn: _Turn | None = None
        self._drain_queue()
        if prompt is not None:
            self._messages.append(Message.user(prompt))
        self._emit(AgentStart(prompt))
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": getattr(self.provider, "provider_name", None),
            "gen_ai.request.model": self.provider.model_name,
        }
        try:
            with span("invoke_agent", attributes) as active, scope:
                while True:
                    if steps >= self.max_steps:
                        stop = "max_steps"
                        break
                    steps += 1
                    turn = _Turn(steps, self)
                    self._emit(TurnStart(steps))
                    result = await step(
                        self.provider,
                        self.system_prompt,
                        turn,
                        self._messages,
                        on_message_part=turn.on_part,
                    )
                    turn.step = result
                    usage = usage + result.usage if result.usage else usage
                    results = await result.tool_results()
                    self._commit(turn, result.message, results, result.usage)
                    turn = None
                    queued = self._drain_queue()
                    if any(r.terminate for r in results):
                        stop = "terminated"
                        break
                    if not result.tool_calls and not queued:
                        stop = "length" if result.finish_reason == "length" else "completed"
                        break
                set_attributes(active, _run_attributes(steps, stop, usage))
        finally:
            if turn is not None:
                self._commit(turn, *turn.interrupted())
            self._scope = None
            self._loop = None
            self.usage = self.usage + usage
        if scope.cancelled_caught:
            stop = "interrupted"
        new = tuple(self._messages[start:])
        final = next((m.content for m in reversed(new) if m.role == "assistant"), "")
        outcome = AgentRunResult(new, final, usage, steps, stop)
        self._emit(AgentEnd(outcome))
        return outcome

    def run_sync(self, prompt: str | None = None) -> AgentRunResult:
        """Run like :meth:`run` from sync code; blocks until the run ends.

        Safe in a plain script and in Jupyter (or any thread whose event loop is
        running): the run happens on ptcbox's private event-loop thread, the one
        ``ptcbox.execute()`` uses, so ``on_event``, the hooks and async tools run there.
        Async clients inside the provider bind to that loop on first use, so use one
        agent either with ``run_sync`` or with ``await run`` on your own loop, not both.
        Ctrl-C cancels the run (unfinished tool calls are cancelled and awaited).

        Args:
            prompt: As for :meth:`run`.

        Returns:
            As for :meth:`run`.

        Raises:
            RuntimeError: If the agent is already running.
            ChatProviderError: If the model API fails (the history stays valid).
        """
        return run_blocking(lambda _where: self.run(prompt))

    async def stream(self, prompt: str | None = None) -> AsyncIterator[AgentEvent]:
        """Run like :meth:`run` and yield every event; the last one is :class:`AgentEnd`.

        Closing the iterator early interrupts the run and waits for it to end; to leave
        a loop with ``break``, iterate under ``contextlib.aclosing(agent.stream(...))``
        so the close happens right away.

        Args:
            prompt: As for :meth:`run`.

        Yields:
            Events in order.
        """
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        self._listeners.append(queue.put_nowait)
        task = asyncio.create_task(self.run(prompt))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task
        finally:
            self._listeners.remove(queue.put_nowait)
            if not task.done():
                self.interrupt()
                with anyio.CancelScope(shield=True):
                    await asyncio.wait([task])

    # -- internals ---------------------------------------------------------------------

    def _emit(self, event: AgentEvent) -> None:
        for listener in tuple(self._listeners):
            listener(event)

    def _drain_queue(self) -> bool:
        with self._queue_lock:
            queued, self._queued = self._queued, []
        self._messages.extend(queued)
        return bool(queued)

    def _commit(
        self, turn: _Turn, message: Message, results: Sequence[ToolResult], usage: Usage | None
    ) -> None:
        turn.committed = True
        if not message.content and not message.tool_calls:
            return
        self._messages.append(message)
        self._messages.extend(result.to_message() for result in results)
        self._emit(TurnEnd(turn.number, message, tuple(results), usage))


class _Turn:
    """The toolset of one turn: runs hooks, emits events, remembers calls for interrupts."""

    def __init__(self, number: int, agent: Agent) -> None:
        self.number = number
        self.agent = agent
        self.step: StepResult | None = None
        self.committed = False
        self.text: list[str] = []
        self.started: list[ToolCall] = []
        self.results: dict[int, ToolResult] = {}

    def definitions(self) -> tuple[ToolDefinition, ...]:
        return self.agent.tools.definitions()

    def is_parallel_safe(self, name: str) -> bool:
        return self.agent.tools.is_parallel_safe(name)

    def on_part(self, part: StreamedPart) -> None:
        if isinstance(part, TextPart):
            self.text.append(part.text)
        self.agent._emit(MessageDelta(self.number, part))

    async def execute(self, tool_call: ToolCall) -> ToolResult:
        agent = self.agent
        self.started.append(tool_call)
        agent._emit(ToolExecutionStart(tool_call))
        result: ToolResult | None = None
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool_call.name,
            "gen_ai.tool.call.id": tool_call.id,
        }
        try:
            with span(f"execute_tool {tool_call.name}", attributes) as active:
                result = await self._run(tool_call)
                set_attributes(active, {"ptcbox.tool.ok": result.ok})
        except Exception as exc:  # a hook failed: the model sees it, the history stays valid
            result = ToolResult.failure(
                f"tool call failed in a hook: {type(exc).__name__}: {exc}"
            ).with_call(tool_call.id, tool_call.name)
        except asyncio.CancelledError:
            result = interrupted_result(tool_call.id, tool_call.name)
            raise
        finally:
            if result is not None:
                self.results[id(tool_call)] = result
                agent._emit(ToolExecutionEnd(tool_call, result, result.is_error))
        return result

    async def _run(self, tool_call: ToolCall) -> ToolResult:
        agent = self.agent
        call = tool_call
        if agent.before_tool_call is not None:
            decision = await _maybe_await(agent.before_tool_call(tool_call))
            if isinstance(decision, BlockToolCall):
                return ToolResult.failure(f"tool call blocked: {decision.reason}").with_call(
                    tool_call.id, tool_call.name
                )
            if isinstance(decision, ToolCall):
                call = ToolCall(tool_call.id, decision.name, decision.arguments)

        def sink(_: ToolContext, partial: Any) -> None:
            agent._emit(ToolExecutionUpdate(tool_call, partial))

        result = await agent.tools.execute(call, sink=sink)
        if agent.after_tool_call is not None:
            replaced = await _maybe_await(agent.after_tool_call(tool_call, result))
            if isinstance(replaced, ToolResult):
                result = replaced.with_call(tool_call.id, tool_call.name, result.duration_s)
        return result

    def interrupted(self) -> tuple[Message, list[ToolResult], Usage | None]:
        """The turn as far as it got, every unfinished call answered as interrupted."""
        if self.step is not None:
            message, usage = self.step.message, self.step.usage
        else:
            message, usage = Message.assistant("".join(self.text), tuple(self.started)), None
        results = [
            self.results.get(id(call)) or interrupted_result(call.id, call.name)
            for call in message.tool_calls
        ]
        for call, result in zip(message.tool_calls, results, strict=True):
            if id(call) not in self.results:
                self.agent._emit(ToolExecutionEnd(call, result, True))
        return message, results, usage


def _run_attributes(steps: int, stop: str, usage: Usage) -> dict[str, Any]:
    return {
        "ptcbox.agent.steps": steps,
        "ptcbox.agent.stop_reason": stop,
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
    }


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value

"""Running a scenario's trajectories through the real agent step loop and counting tokens.

Every trajectory goes through the agent loop (:class:`ptcbox.agent_glue.Agent`, one
:func:`~ptcbox.agent_glue.step` per turn) with real tools, and for ``run_code`` a real
runtime (:mod:`ptcbox.bench._toolsets` says what each kind is offered). Every request the
loop makes is recorded as a :class:`~ptcbox.agent_glue.ChatRequest` (system prompt, tool
definitions, history exactly as sent) and its input tokens are counted with
``o200k_base``; output tokens are counted on what the model emitted (text, tool names,
arguments). The final answer is checked by :func:`~ptcbox.bench.check_run` against what
the run fetched and saw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ptcbox._result import CodeResult
from ptcbox.agent_glue import Agent, AgentEvent, TurnEnd
from ptcbox.agent_glue._messages import Message, Usage
from ptcbox.agent_glue._provider import ChatProvider, ChatRequest, StreamedMessage
from ptcbox.agent_glue._registry import ToolRegistry
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.agent_glue._scripted import ScriptedProvider
from ptcbox.agent_glue._scripted import ScriptedTurn as GlueTurn
from ptcbox.bench._checks import CallLog, check_run
from ptcbox.bench._results import MODES, Mode, ScenarioComparison, TrajectoryRun
from ptcbox.bench._scenario import RUN_CODE, Scenario, ScriptedTurn
from ptcbox.bench._toolsets import build_toolset, definition_tokens, trajectory_for
from ptcbox.projections._stubs import count_tokens
from ptcbox.runtimes import CodeRuntime

__all__ = [
    "SYSTEM_PROMPT",
    "RecordingProvider",
    "output_tokens",
    "run_scenario",
    "run_trajectory",
    "script_for",
]

SYSTEM_PROMPT = (
    "You are an analyst agent for a mid-sized company. Answer the user's question with "
    "the tools you are given; never guess a number you can look up. Be precise: keep "
    "identifiers and amounts exactly as the tools report them. When you have the answer, "
    "reply with it concisely."
)
"""The system prompt of every trajectory (the same text, so only the tools differ)."""

DEFAULT_MAX_TURNS = 12

ProviderFactory = Callable[[Scenario, Mode], ChatProvider]
"""Makes the model for one run; default: a scripted provider playing the trajectory."""


class RecordingProvider:
    """Wraps a :class:`ChatProvider` and records every request exactly as sent.

    Args:
        inner: The provider that answers.

    Attributes:
        requests: One :class:`ChatRequest` per ``generate`` call, in order.
    """

    def __init__(self, inner: ChatProvider) -> None:
        self.inner = inner
        self.requests: list[ChatRequest] = []

    @property
    def model_name(self) -> str:
        """The wrapped provider's model name."""
        return self.inner.model_name

    async def generate(
        self, system_prompt: str, tools: Sequence[ToolDefinition], history: Sequence[Message]
    ) -> StreamedMessage:
        """Record the request, then let the wrapped provider answer it."""
        self.requests.append(ChatRequest(system_prompt, tuple(tools), tuple(history)))
        return await self.inner.generate(system_prompt, tools, history)


def script_for(turns: Sequence[ScriptedTurn]) -> list[GlueTurn]:
    """Convert a scenario trajectory into :class:`ScriptedProvider` turns."""
    return [
        GlueTurn(text=t.text, tool_calls=[(c.name, c.arguments) for c in t.tool_calls])
        for t in turns
    ]


def output_tokens(message: Message) -> int:
    """Tokens the model emitted in ``message``: its text, tool names and arguments."""
    return count_tokens(message.content) + sum(
        count_tokens(call.name) + count_tokens(call.arguments) for call in message.tool_calls
    )


@dataclass(slots=True)
class _Trace:
    turns: int = 0
    tool_calls: int = 0
    code_tool_calls: int = 0
    tool_errors: int = 0
    output_tokens: int = 0
    answer: str = ""
    seen: list[str] = field(default_factory=list)
    usage: Usage | None = None


async def _drive(
    provider: ChatProvider,
    toolset: ToolRegistry,
    prompt: str,
    max_turns: int,
    trace: _Trace,
) -> bool:
    """Run the agent loop on ``prompt``; returns whether it ended with an answer."""

    def on_event(event: AgentEvent) -> None:
        if not isinstance(event, TurnEnd):
            return
        trace.turns += 1
        trace.output_tokens += output_tokens(event.message)
        trace.tool_calls += len(event.message.tool_calls)
        for tool_result in event.tool_results:
            trace.tool_errors += tool_result.is_error
            trace.seen.append(tool_result.content)
            if tool_result.name == RUN_CODE and isinstance(tool_result.output, CodeResult):
                trace.code_tool_calls += len(tool_result.output.tool_calls)

    agent = Agent(provider, toolset, SYSTEM_PROMPT, max_steps=max_turns, on_event=on_event)
    result = await agent.run(prompt)
    trace.usage = result.usage
    trace.answer = result.final_text
    return result.stop_reason == "completed"


async def run_trajectory(
    scenario: Scenario,
    mode: Mode,
    runtime: CodeRuntime,
    *,
    provider: ChatProvider | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    strict: bool = False,
) -> TrajectoryRun:
    """Run one trajectory of ``scenario`` and measure it.

    Args:
        scenario: The scenario.
        mode: ``"classic"``, ``"ptc"`` or ``"hybrid"``.
        runtime: Runs ``run_code`` snippets.
        provider: The model; default: a :class:`ScriptedProvider` playing the
            scenario's scripted trajectory for ``mode``.
        max_turns: Most model turns before the run counts as failed.
        strict: Scripted runs that use ``run_code`` explore the data first.

    Returns:
        The measured run; ``correct`` is the verdict of
        :func:`~ptcbox.bench.check_run` (coverage, facts, backed figures).
    """
    scripted = provider is None
    if provider is None:
        turns = trajectory_for(scenario, mode, strict=strict)
        provider = ScriptedProvider(script_for(turns), chunk_chars=512)
    recorder = RecordingProvider(provider)
    log = CallLog(scenario.tools)
    toolset = build_toolset(scenario, mode, runtime, log)
    trace = _Trace()
    error: str | None = None
    started = time.perf_counter()
    try:
        answered = await _drive(recorder, toolset, scenario.prompt, max_turns, trace)
        if not answered:
            error = f"no final answer after {max_turns} turns"
    except Exception as exc:  # a model API failure is reported, not raised
        error = f"{type(exc).__name__}: {exc}"
    wall = time.perf_counter() - started
    verdict = check_run(scenario, trace.answer, log, trace.seen)
    usage = None if scripted else trace.usage
    return TrajectoryRun(
        scenario=scenario.name,
        mode=mode,
        turns=trace.turns,
        tool_calls=trace.tool_calls,
        code_tool_calls=trace.code_tool_calls,
        input_tokens=sum(request.input_tokens for request in recorder.requests),
        output_tokens=trace.output_tokens,
        wall_time_s=wall,
        correct=error is None and verdict.correct,
        answer=trace.answer,
        tool_errors=trace.tool_errors,
        request_inputs=tuple(request.input_tokens for request in recorder.requests),
        definition_tokens=definition_tokens(toolset),
        problem=error or verdict.problem,
        api_input_tokens=None if usage is None else usage.input_tokens,
        api_output_tokens=None if usage is None else usage.output_tokens,
        error=error,
    )


async def run_scenario(
    scenario: Scenario,
    runtime: CodeRuntime,
    *,
    provider_factory: ProviderFactory | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    strict: bool = False,
    on_run: Callable[[TrajectoryRun], Any] | None = None,
) -> ScenarioComparison:
    """Run the classic, PTC and hybrid trajectories of ``scenario``, in that order.

    Args:
        scenario: The scenario.
        runtime: Runs the snippets.
        provider_factory: Makes a fresh model per run (real-model mode); default scripted.
        max_turns: Most model turns per run.
        strict: Scripted runs that use ``run_code`` explore the data first.
        on_run: Called with each finished run (progress displays).

    Returns:
        The comparison.
    """
    runs: dict[str, TrajectoryRun] = {}
    for mode in MODES:
        provider = None if provider_factory is None else provider_factory(scenario, mode)
        run = await run_trajectory(
            scenario, mode, runtime, provider=provider, max_turns=max_turns, strict=strict
        )
        runs[mode] = run
        if on_run is not None:
            on_run(run)
    return ScenarioComparison(
        scenario.name, scenario.title, scenario.shape, runs["classic"], runs["ptc"], runs["hybrid"]
    )

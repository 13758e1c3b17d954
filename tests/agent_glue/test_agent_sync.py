"""Agent.run_sync: from plain sync code, under a running event loop (Jupyter), nested."""

from __future__ import annotations

import asyncio
import threading

from ptcbox.agent_glue import Agent, ScriptedOpenAIServer, ScriptedTurn, tool

from ._helpers import provider_for


@tool
def whoami() -> str:
    """The name of the thread the tool runs on."""
    return threading.current_thread().name


def _agent(server: ScriptedOpenAIServer, kind: str = "chat", **options: object) -> Agent:
    return Agent(provider_for(kind, server), [whoami], "Be brief.", **options)  # type: ignore[arg-type]


def _script() -> list[object]:
    return [ScriptedTurn(tool_calls=[("whoami", {})]), lambda r: f"ran: {r.messages[-1].content}"]


def test_run_sync_from_plain_code() -> None:
    with ScriptedOpenAIServer(_script()) as server:
        events: list[str] = []
        agent = _agent(server, "anthropic", on_event=lambda e: events.append(type(e).__name__))
        result = agent.run_sync("who are you?")
    assert result.stop_reason == "completed" and result.steps == 2
    assert result.final_text.startswith("ran: ")
    assert events[0] == "AgentStart" and events[-1] == "AgentEnd"
    assert result.usage.requests == 2 and result.usage.input_tokens > 0


def test_run_sync_inside_a_running_event_loop_like_jupyter() -> None:
    async def notebook_cell() -> str:
        # a cell's code runs while the kernel's loop is running in this thread
        with ScriptedOpenAIServer(_script()) as server:
            return _agent(server, "responses").run_sync("who are you?").final_text

    assert asyncio.run(notebook_cell()).startswith("ran: ")


def test_run_sync_twice_and_from_an_async_tool_on_the_private_loop() -> None:
    with ScriptedOpenAIServer(["helper says hi", "helper says hi again"]) as inner:
        helper = _agent(inner)

        @tool
        async def ask_helper() -> str:
            """Ask the helper agent (blocks, from inside another agent's run)."""
            return helper.run_sync("hi").final_text

        script = [ScriptedTurn(tool_calls=[("ask_helper", {})]), lambda r: r.messages[-1].content]
        with ScriptedOpenAIServer(script) as outer:
            agent = Agent(provider_for("chat", outer), [ask_helper], "")
            assert agent.run_sync("go").final_text == "helper says hi"
        assert helper.run_sync("again").final_text == "helper says hi again"

"""Helpers shared by the agent tests."""

from __future__ import annotations

from typing import Any

from ptcbox.agent_glue import Agent, OpenAIChatProvider, ScriptedOpenAIServer


def agent_for(server: ScriptedOpenAIServer, tools: Any, **options: Any) -> Agent:
    """An agent over the real openai SDK talking to ``server``."""
    provider = OpenAIChatProvider(server.client(), "scripted-model")
    return Agent(provider, tools, options.pop("system_prompt", "You are careful."), **options)

"""Helpers shared by the agent tests."""

from __future__ import annotations

from typing import Any

from ptcbox.agent_glue import Agent, OpenAIChatProvider, ScriptedOpenAIServer


def agent_for(server: ScriptedOpenAIServer, tools: Any, **options: Any) -> Agent:
    """An agent over the real openai SDK talking to ``server``."""
    provider = OpenAIChatProvider(server.client(), "scripted-model")
    return Agent(provider, tools, options.pop("system_prompt", "You are careful."), **options)


PROVIDER_KINDS = ("chat", "responses", "anthropic")
"""Every provider over a real SDK that the scripted server speaks to."""


def provider_for(kind: str, server: ScriptedOpenAIServer, **options: Any) -> Any:
    """The provider of ``kind`` over its real SDK, talking to ``server``."""
    from ptcbox.agent_glue import AnthropicProvider, OpenAIResponsesProvider

    if kind == "chat":
        return OpenAIChatProvider(server.client(), "scripted-model", **options)
    if kind == "responses":
        return OpenAIResponsesProvider(server.client(), "scripted-model", **options)
    return AnthropicProvider(server.anthropic_client(), "scripted-model", **options)

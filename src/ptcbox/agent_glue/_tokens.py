"""Counting the input tokens of a model request, for token-cost benchmarks."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ptcbox.agent_glue._messages import Message
from ptcbox.agent_glue._schemas import ToolDefinition
from ptcbox.projections._stubs import count_tokens

__all__ = ["count_request_tokens"]

_PER_MESSAGE = 3
_REPLY_PRIMING = 3


def count_request_tokens(
    system_prompt: str,
    tools: Sequence[ToolDefinition],
    messages: Sequence[Message],
) -> int:
    """Count the input tokens of one Chat Completions request (``o200k_base``).

    The count follows OpenAI's documented recipe for chat requests: 3 tokens of
    framing per message plus the tokens of its role, text, tool-call id and tool calls
    (their compact JSON), 3 tokens priming the reply, plus the tokens of the compact
    JSON of the tool definitions in the Chat Completions shape. It measures exactly
    what the request carries, so it compares classic tool calling with ``run_code``
    fairly; a real API's reported ``prompt_tokens`` may differ by a few percent
    because each provider renders tools its own way.

    Args:
        system_prompt: The system prompt (``""`` for none).
        tools: The tools offered.
        messages: The history sent.

    Returns:
        The number of input tokens.
    """
    total = _REPLY_PRIMING
    if system_prompt:
        total += _PER_MESSAGE + count_tokens("system") + count_tokens(system_prompt)
    for message in messages:
        total += _PER_MESSAGE + count_tokens(message.role) + count_tokens(message.content)
        if message.tool_call_id:
            total += count_tokens(message.tool_call_id)
        if message.tool_calls:
            calls = [call.to_openai() for call in message.tool_calls]
            total += count_tokens(_compact(calls))
    if tools:
        total += count_tokens(_compact([tool.to_format("openai") for tool in tools]))
    return total


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

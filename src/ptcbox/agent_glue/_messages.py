"""Chat messages, tool calls and token usage: the data a step and an agent exchange.

The message model follows the OpenAI Chat Completions roles (``system``, ``user``,
``assistant`` with ``tool_calls``, ``tool`` with ``tool_call_id``) with one addition:
tool messages carry ``is_error`` so that formats which have the flag (Anthropic's
``tool_result``) keep it. :meth:`Message.to_openai` / :meth:`Message.from_openai`
convert to and from the wire shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Message", "Role", "ToolCall", "Usage"]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call requested by the model.

    Attributes:
        id: The call id the model (or provider) assigned; results refer to it.
        name: The tool's name.
        arguments: The arguments exactly as the model produced them: JSON text, which
            may be malformed (tools report that as an error result).
    """

    id: str
    name: str
    arguments: str = "{}"

    def to_openai(self) -> dict[str, Any]:
        """Return the Chat Completions shape ``{"id", "type": "function", "function"}``."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message.

    Attributes:
        role: ``"system"``, ``"user"``, ``"assistant"`` or ``"tool"``.
        content: The text of the message (``""`` when an assistant turn only calls tools).
        tool_calls: Tool calls of an assistant message, in the order the model made them.
        tool_call_id: For a tool message: the call it answers.
        name: For a tool message: the tool's name (optional).
        is_error: For a tool message: the result is an error.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False

    @classmethod
    def system(cls, content: str) -> Message:
        """Build a system message."""
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> Message:
        """Build a user message."""
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        """Build an assistant message, optionally with tool calls."""
        return cls(role="assistant", content=content, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(
        cls, tool_call_id: str, content: str, *, name: str | None = None, is_error: bool = False
    ) -> Message:
        """Build a tool-result message answering ``tool_call_id``."""
        return cls(
            role="tool", content=content, tool_call_id=tool_call_id, name=name, is_error=is_error
        )

    def to_openai(self) -> dict[str, Any]:
        """Return the Chat Completions message dict.

        Returns:
            ``{"role", "content"}``; assistant messages with tool calls carry
            ``"tool_calls"`` (and ``"content": None`` when there is no text); tool
            messages carry ``"tool_call_id"``.
        """
        if self.role == "assistant" and self.tool_calls:
            return {
                "role": "assistant",
                "content": self.content or None,
                "tool_calls": [call.to_openai() for call in self.tool_calls],
            }
        if self.role == "tool":
            return {
                "role": "tool",
                "tool_call_id": self.tool_call_id or "",
                "content": self.content,
            }
        return {"role": self.role, "content": self.content}

    @classmethod
    def from_openai(cls, data: Mapping[str, Any]) -> Message:
        """Build a message from a Chat Completions message dict.

        Content given as a list of parts keeps the text parts, joined. Legacy
        ``"function"`` messages are read as tool messages.

        Args:
            data: A dict such as ``{"role": "user", "content": "hi"}``.

        Returns:
            The message.

        Raises:
            ValueError: If the role is missing or unknown.
        """
        role = data.get("role")
        if role == "developer":
            role = "system"
        if role == "function":
            role = "tool"
        if role not in ("system", "user", "assistant", "tool"):
            raise ValueError(f"unknown message role {role!r}")
        calls = tuple(
            ToolCall(
                id=str(call.get("id") or ""),
                name=str((call.get("function") or {}).get("name") or ""),
                arguments=str((call.get("function") or {}).get("arguments") or ""),
            )
            for call in data.get("tool_calls") or ()
        )
        return cls(
            role=role,
            content=_text_of(data.get("content")),
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id") or (data.get("name") if role == "tool" else None),
            name=data.get("name") if role == "tool" else None,
            is_error=bool(data.get("is_error", False)),
        )


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [part.get("text", "") for part in content if isinstance(part, Mapping)]
        return "".join(text for text in texts if isinstance(text, str))
    return str(content)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one or more model requests.

    Attributes:
        input_tokens: Tokens the model read (prompt, including cached ones).
        output_tokens: Tokens the model wrote (completion).
        cached_input_tokens: The part of ``input_tokens`` served from the prompt cache
            (Anthropic's ``cache_read_input_tokens``, OpenAI's ``cached_tokens``).
        cache_write_input_tokens: The part of ``input_tokens`` written to the prompt
            cache (Anthropic's ``cache_creation_input_tokens``; 0 for OpenAI).
        requests: How many requests this usage sums up.

    ``a + b`` adds two usages field by field.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    requests: int = 1
    cache_write_input_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """``input_tokens + output_tokens``."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            requests=self.requests + other.requests,
            cache_write_input_tokens=self.cache_write_input_tokens + other.cache_write_input_tokens,
        )

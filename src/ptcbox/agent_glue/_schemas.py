"""Tool definitions and their shapes for each model API.

- OpenAI Chat Completions: ``{"type": "function", "function": {"name", "description",
  "parameters"}}`` (``ChatCompletionFunctionToolParam``).
- OpenAI Responses: ``{"type": "function", "name", "description", "parameters",
  "strict": false}`` (``FunctionToolParam``; ``strict`` is required there and defaults
  to true server-side, which would reject optional parameters, so it is sent as false).
- Anthropic Messages: ``{"name", "description", "input_schema"}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["SchemaFormat", "ToolDefinition", "clean_schema"]

SchemaFormat = Literal["openai", "responses", "anthropic"]
"""A model API's tool shape: ``"openai"`` (Chat Completions), ``"responses"``, ``"anthropic"``."""

_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_KEYS = ("items", "additionalProperties", "not", "contains")


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as a model API sees it: name, description and JSON schema.

    Attributes:
        name: The tool's name.
        description: What it does (may be ``""``).
        parameters: JSON schema of the arguments object.
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})

    def to_format(self, format: SchemaFormat = "openai") -> dict[str, Any]:
        """Return the definition in one API's shape (see the module docstring).

        Args:
            format: ``"openai"`` (Chat Completions), ``"responses"`` or ``"anthropic"``.

        Returns:
            A new dict, ready to send.

        Raises:
            ValueError: If ``format`` is unknown.
        """
        if format == "openai":
            function: dict[str, Any] = {"name": self.name}
            if self.description:
                function["description"] = self.description
            function["parameters"] = self.parameters
            return {"type": "function", "function": function}
        if format == "responses":
            out: dict[str, Any] = {"type": "function", "name": self.name}
            if self.description:
                out["description"] = self.description
            out["parameters"] = self.parameters
            out["strict"] = False
            return out
        if format == "anthropic":
            return {
                "name": self.name,
                "description": self.description,
                "input_schema": self.parameters,
            }
        raise ValueError(
            f"unknown schema format {format!r}; use 'openai', 'responses' or 'anthropic'"
        )


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's ``title`` keys (they cost tokens and tell a model nothing).

    Only keywords are removed: a *property* named ``title`` stays.

    Args:
        schema: A JSON schema as ``model_json_schema()`` returns it.

    Returns:
        A cleaned copy.
    """
    cleaned: dict[str, Any] = _clean(schema)
    return cleaned


def _clean(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(
            value, dict
        ):
            out[key] = {name: _clean(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [_clean(sub) for sub in value]
        elif key in _SUBSCHEMA_KEYS:
            out[key] = _clean(value)
        else:
            out[key] = value
    return out

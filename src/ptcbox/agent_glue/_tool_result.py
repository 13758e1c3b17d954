"""The outcome of one tool call: :class:`ToolResult`."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from ptcbox._jsonable import scrub_text, to_jsonable
from ptcbox._result import CodeResult
from ptcbox.agent_glue._messages import Message

__all__ = ["INTERRUPTED", "ToolResult", "interrupted_result"]

INTERRUPTED = "Tool call interrupted by user"
"""The error text of a tool call that an interrupt (or a lost result) left unfinished."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one tool call produced. Tools may also return one to set ``terminate``.

    Attributes:
        ok: ``True`` when the tool returned normally.
        output: The tool's return value (any Python value) when ``ok``; for ``run_code``
            the :class:`~ptcbox.CodeResult`, also when it failed.
        error: Why the call failed, written for the model (what was expected, what was
            given); ``None`` when ``ok``.
        tool_call_id: The call this result answers (``""`` outside a model turn).
        name: The tool's name.
        text: The text the model sees, when it differs from the default rendering.
        terminate: Ask the agent loop to stop after this turn.
        duration_s: Wall-clock time of the call, in seconds.
    """

    ok: bool
    output: Any = None
    error: str | None = None
    tool_call_id: str = ""
    name: str = ""
    text: str | None = None
    terminate: bool = False
    duration_s: float = 0.0

    @classmethod
    def success(
        cls, output: Any = None, *, text: str | None = None, terminate: bool = False
    ) -> ToolResult:
        """Build a successful result.

        Args:
            output: The value to return.
            text: The text the model sees; default: ``output`` rendered (see ``content``).
            terminate: Ask the agent loop to stop after this turn.
        """
        return cls(ok=True, output=output, text=text, terminate=terminate)

    @classmethod
    def failure(cls, error: str, *, terminate: bool = False) -> ToolResult:
        """Build a failed result whose ``error`` the model reads."""
        return cls(ok=False, error=error, terminate=terminate)

    @property
    def is_error(self) -> bool:
        """``True`` when the call failed (``not ok``)."""
        return not self.ok

    @property
    def content(self) -> str:
        """The text the model sees.

        ``text`` when set; else for a failure ``"Error: <error>"``; for a string output
        the string; for a :class:`~ptcbox.CodeResult` its ``render()``; otherwise the
        output as JSON (``to_jsonable`` rules).
        """
        if self.text is not None:
            return scrub_text(self.text)
        if not self.ok:
            return "Error: " + scrub_text(self.error or "the tool failed")
        output = self.output
        if isinstance(output, str):
            return scrub_text(output)
        if isinstance(output, CodeResult):
            return output.render()
        return json.dumps(to_jsonable(output), ensure_ascii=False)

    def with_call(
        self, tool_call_id: str, name: str, duration_s: float | None = None
    ) -> ToolResult:
        """Return a copy bound to a tool call (id, name and optionally duration)."""
        return dataclasses.replace(
            self,
            tool_call_id=tool_call_id,
            name=name,
            duration_s=self.duration_s if duration_s is None else duration_s,
        )

    def to_message(self) -> Message:
        """Return the ``tool`` message that carries this result to the model."""
        return Message.tool(
            self.tool_call_id, self.content, name=self.name or None, is_error=not self.ok
        )


def interrupted_result(tool_call_id: str, name: str) -> ToolResult:
    """The result of a call an interrupt left unfinished: exactly ``INTERRUPTED``."""
    return ToolResult(
        ok=False, error=INTERRUPTED, text=INTERRUPTED, tool_call_id=tool_call_id, name=name
    )

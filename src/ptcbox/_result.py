"""The result of one execution: :class:`CodeResult` and its :class:`ToolCallRecord` trace.

The four seed fields (``stdout``, ``stderr``, ``return_code``, ``error``) come from the
toolregistry ``runtimes`` contract; every extension is defaulted so that
``CodeResult(stdout=..., stderr=..., return_code=..., error=...)`` stays valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ptcbox._jsonable import JSONValue, scrub_text, to_jsonable
from ptcbox._render import render_result

__all__ = ["CodeResult", "ToolCallRecord"]


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call made by a snippet, as recorded by the runtime.

    Attributes:
        name: The tool's name in the namespace.
        arguments: The keyword arguments the tool was called with (positional arguments
            already bound to their parameter names).
        ok: ``True`` when the tool returned, ``False`` when it raised, was refused or
            was cancelled, ``None`` when it was still running when the execution ended
            (a sync tool, which cannot be cancelled; see
            :mod:`ptcbox.runtimes._shared._trace`).
        error: The error message when ``ok`` is not ``True``, else ``None``.
        duration_s: Wall-clock time the call took, in seconds.
        requested_arguments: The arguments the snippet passed, when they differ from
            ``arguments`` because an approval edited them (``arguments`` is what the
            tool got); ``None`` otherwise.
    """

    name: str
    arguments: dict[str, Any]
    ok: bool | None
    error: str | None = None
    duration_s: float = 0.0
    requested_arguments: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, JSONValue]:
        """Return this record as JSON-encodable data.

        Returns:
            ``{"name", "arguments", "ok", "error", "duration_s"}`` and
            ``"requested_arguments"`` when an approval edited the arguments; arguments
            converted with :func:`ptcbox._jsonable.to_jsonable`.
        """
        data: dict[str, JSONValue] = {
            "name": scrub_text(self.name),
            "arguments": to_jsonable(self.arguments),
            "ok": self.ok,
            "error": None if self.error is None else scrub_text(self.error),
            "duration_s": self.duration_s,
        }
        if self.requested_arguments is not None:
            data["requested_arguments"] = to_jsonable(self.requested_arguments)
        return data


@dataclass(frozen=True, slots=True)
class CodeResult:
    """Everything one execution of a snippet produced. Immutable.

    Attributes:
        stdout: Text the snippet printed (capped to the policy's ``max_output_bytes``).
        stderr: Text written to standard error (warnings; capped likewise).
        return_code: ``0`` on success, ``1`` when the code failed (exception, timeout,
            limit, policy violation, crash).
        error: Traceback or message for the model; ``None`` on success.
        error_type: Class name of the failure, e.g. ``"ZeroDivisionError"``,
            ``"TimeoutError"``, ``"PolicyViolation"``, ``"WorkerCrashed"``.
        timed_out: ``True`` when the wall-clock timeout ended the execution.
        value: Value of a trailing expression statement, like a REPL shows it, converted
            to JSON-compatible data; ``None`` when there is none. A value whose JSON
            encoding is over the policy's ``max_output_bytes`` is dropped: ``value`` is
            ``None``, ``truncated`` is ``True`` and stderr says ``[value omitted: ...]``
            with its size and the limit.
        tool_calls: Every tool call the snippet made, in start order.
        duration_s: Wall-clock time of the whole execution, in seconds.
        truncated: ``True`` when stdout, stderr or the error were cut to the byte cap,
            or the value was dropped.
    """

    stdout: str
    stderr: str
    return_code: int
    error: str | None
    error_type: str | None = None
    timed_out: bool = False
    value: Any = None
    tool_calls: tuple[ToolCallRecord, ...] = ()
    duration_s: float = 0.0
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """``True`` when ``return_code == 0``."""
        return self.return_code == 0

    def to_dict(self) -> dict[str, JSONValue]:
        """Return the result as data that ``json.dumps`` always encodes.

        Returns:
            A dict with every field; ``tool_calls`` as a list of dicts, ``value`` converted
            with :func:`ptcbox._jsonable.to_jsonable`, text with lone surrogates replaced.
        """
        return {
            "stdout": scrub_text(self.stdout),
            "stderr": scrub_text(self.stderr),
            "return_code": self.return_code,
            "error": None if self.error is None else scrub_text(self.error),
            "error_type": self.error_type,
            "timed_out": self.timed_out,
            "value": to_jsonable(self.value),
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "duration_s": self.duration_s,
            "truncated": self.truncated,
        }

    def render(self, max_chars: int = 8000) -> str:
        """Return the text a model sees for this result.

        The snippet's output and error text are shown in fenced blocks it cannot close
        (the fence is longer than any backtick run in the text), so printed text cannot
        pass for ptcbox's own lines::

            [stdout]
            ```
            <stdout>
            ```
            [stderr]
            ```
            <stderr>
            ```
            [value] <the trailing expression's value as one line of JSON>
            [output was truncated to the sandbox's byte limit]
            [error: ZeroDivisionError]           (or [ptcbox error: TimeoutError] for
            ```                                   ptcbox's own: the timeout, limits,
            <traceback or message>                policy, crash, wire, tool failure)
            ```

        Only the parts present are shown; nothing at all renders as ``[no output]``.
        Beyond ``max_chars`` the longest parts are cut in the middle, keeping the head
        and the tail, with a ``[... N characters omitted ...]`` marker (see
        :mod:`ptcbox._render`).

        Args:
            max_chars: Longest text to return, in characters (at least 200).

        Returns:
            The rendered text.

        Raises:
            ValueError: If ``max_chars`` is below 200.
        """
        if max_chars < 200:
            raise ValueError(f"max_chars must be at least 200, got {max_chars}")
        return render_result(self, max_chars)

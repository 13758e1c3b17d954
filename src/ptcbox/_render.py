"""The text a model sees for a result (:meth:`ptcbox.CodeResult.render`).

Everything the snippet controls (its stdout, its stderr, the text of its error) is shown
inside a fenced block whose fence is longer than any run of backticks in that text (the
CommonMark rule), so printed text cannot close the block and add lines of its own. Every
line outside a block is ptcbox's: the ``[stdout]``-style headers, ``[value] <json>``
(JSON on one line, line separators escaped), the truncation note and the error header.
The error header says who raised the error: ``[error: ZeroDivisionError]`` for an
exception of the code, ``[ptcbox error: TimeoutError]`` for ptcbox's own (the timeout,
limits, policy refusals, crashes, wire errors, tool failures); a snippet class that only
shares such a name is reported as ``<snippet>.TimeoutError`` by the runtimes, so it
cannot pass for one (a *compromised* SubprocessRuntime worker can still name any error
type it likes, except the timeout, which the host sets).
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from ptcbox import errors
from ptcbox._jsonable import scrub_text, to_jsonable

__all__ = ["PTCBOX_ERROR_TYPES", "Renderable", "is_ptcbox_error", "render_result"]


class Renderable(Protocol):
    """What :func:`render_result` reads of a :class:`~ptcbox.CodeResult`."""

    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...
    @property
    def return_code(self) -> int: ...
    @property
    def error(self) -> str | None: ...
    @property
    def error_type(self) -> str | None: ...
    @property
    def timed_out(self) -> bool: ...
    @property
    def value(self) -> Any: ...
    @property
    def truncated(self) -> bool: ...


PTCBOX_ERROR_TYPES: frozenset[str] = frozenset(
    name
    for name, value in vars(errors).items()
    if isinstance(value, type) and issubclass(value, errors.PtcboxError)
)
"""Error types ptcbox itself raises (``TimeoutError`` counts only when ``timed_out``)."""

_BACKTICKS = re.compile(r"`+")
_LINE_SEPARATORS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_MIN_CONTENT = 40


def _fence(text: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def _block(header: str, text: str) -> str:
    fence = _fence(text)
    return f"{header}\n{fence}\n{text}\n{fence}"


def _cut(text: str, keep: int) -> str:
    """``text`` cut in the middle to about ``keep`` characters, with a marker line."""
    if len(text) <= keep:
        return text
    head = keep * 2 // 3
    tail = keep - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[len(text) - tail :]}"


def _value_line(value: object) -> str:
    encoded = json.dumps(to_jsonable(value), ensure_ascii=False)
    for char, escape in _LINE_SEPARATORS.items():
        encoded = encoded.replace(char, escape)
    return encoded


def is_ptcbox_error(result: Renderable) -> bool:
    """Whether the failure of ``result`` was raised by ptcbox itself."""
    if result.timed_out:
        return True
    return result.error_type in PTCBOX_ERROR_TYPES


def render_result(result: Renderable, max_chars: int) -> str:
    """The model's view of ``result`` in at most about ``max_chars`` characters.

    Args:
        result: The result.
        max_chars: Budget in characters (at least 200); the longest pieces are cut in
            the middle (head and tail kept) until the text fits.

    Returns:
        The text; ``[no output]`` when there is nothing to show.
    """
    pieces: list[list[str]] = []  # [header, content, kind]: kind "block" or "line"
    if result.stdout:
        pieces.append(["[stdout]", scrub_text(result.stdout).rstrip("\n"), "block"])
    if result.stderr:
        pieces.append(["[stderr]", scrub_text(result.stderr).rstrip("\n"), "block"])
    if result.value is not None:
        pieces.append(["[value] ", _value_line(result.value), "line"])
    notes: list[str] = []
    if result.truncated:
        notes.append("[output was truncated to the sandbox's byte limit]")
    if result.return_code != 0:
        kind = scrub_text(result.error_type or "Error").replace("\n", " ")
        header = f"[ptcbox error: {kind}]" if is_ptcbox_error(result) else f"[error: {kind}]"
        message = scrub_text(result.error or "the code failed").rstrip("\n")
        pieces.append([header, message, "block"])
    if not pieces and not notes:
        return "[no output]"
    for _ in range(len(pieces) + 1):
        text = _join(pieces, notes)
        excess = len(text) - max_chars
        if excess <= 0:
            break
        longest = max(pieces, key=lambda piece: len(piece[1]))
        keep = max(_MIN_CONTENT, len(longest[1]) - excess - 60)
        if keep >= len(longest[1]):
            break
        if longest[2] == "line":
            omitted = len(longest[1]) - keep
            longest[1] = (
                f"{longest[1][: keep // 2]} [... {omitted} characters omitted ...] "
                + (longest[1][len(longest[1]) - keep // 2 :])
            )
        else:
            longest[1] = _cut(longest[1], keep)
    return _join(pieces, notes)


def _join(pieces: list[list[str]], notes: list[str]) -> str:
    out: list[str] = []
    for header, content, kind in pieces:
        if kind == "line":
            out.append(header + content)
        else:
            if header.startswith(("[error", "[ptcbox error")):
                out.extend(notes)
                notes = []
            out.append(_block(header, content))
    out.extend(notes)
    return "\n".join(out)

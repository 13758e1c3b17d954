"""Error text for the model, the same in both runtimes and in the worker process.

Error text shows the snippet's own frames only (line number, function and the source
line), never a frame or a path of ptcbox or of the host, and is capped like output.
"""

from __future__ import annotations

import traceback

from ptcbox import errors
from ptcbox.runtimes._shared._frames import thread_frame
from ptcbox.runtimes._shared._output import cap_text, truncation_marker
from ptcbox.sandbox._refusals import builtin_hint

__all__ = [
    "SNIPPET_FILENAME",
    "describe_exception",
    "error_type_name",
    "format_snippet_error",
    "snippet_location",
    "timeout_error_text",
]

SNIPPET_FILENAME = "<snippet>"
"""The filename snippets are compiled under; frames with it are the snippet's own."""

_MAX_CHAIN = 5
_MAX_REPEATS = 3
_MAX_GROUP_ITEMS = 10
_TOOL_MESSAGE_CHARS = 20_000


def _reserved_classes() -> dict[str, type[BaseException]]:
    classes: dict[str, type[BaseException]] = {"TimeoutError": TimeoutError}
    for value in vars(errors).values():
        if isinstance(value, type) and issubclass(value, errors.PtcboxError):
            classes[value.__name__] = value
    return classes


_RESERVED = _reserved_classes()
"""ptcbox's own error names (its exceptions and ``TimeoutError``) and their classes."""


def error_type_name(exc: BaseException) -> str:
    """Return the class name reported as ``CodeResult.error_type``, e.g. ``"ValueError"``.

    A class that only shares the name of one of ptcbox's own errors (a snippet's
    ``class TimeoutError(Exception)`` or ``class PolicyViolation(Exception)``) is
    reported as ``"<snippet>.TimeoutError"``, so that it cannot pass for ptcbox's
    (checked by identity: a name or ``__module__`` can be set by the snippet).
    """
    cls = type(exc)
    name = type.__getattribute__(cls, "__name__")
    if not isinstance(name, str):
        return "Exception"
    genuine = _RESERVED.get(name)
    if genuine is not None and cls is not genuine:
        return f"{SNIPPET_FILENAME}.{name}"
    return name


def _message(exc: BaseException, max_chars: int) -> str:
    try:
        text = str(exc)
    except Exception:
        return "<the exception's message could not be read>"
    if not isinstance(text, str):  # pragma: no cover - str() always returns str
        return ""
    if len(text) > max_chars:
        half = max_chars // 2
        text = text[:half] + truncation_marker(len(text) - 2 * half) + text[-half:]
    return text


def describe_exception(exc: BaseException, max_chars: int = _TOOL_MESSAGE_CHARS) -> str:
    """Return ``"ExcType: message"`` (or ``"ExcType"``), the message cut to ``max_chars``.

    Used for a failed tool's message in ``ToolError`` and in ``ToolCallRecord.error``.
    """
    message = _message(exc, max_chars)
    name = error_type_name(exc)
    return f"{name}: {message}" if message else name


def _frames(exc: BaseException, lines: list[str], filename: str) -> list[str]:
    out: list[str] = []
    last: tuple[int, str] | None = None
    repeats = 0
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == filename:
            lineno = tb.tb_lineno or 0
            key = (lineno, code.co_name)
            if key == last:
                repeats += 1
            else:
                if repeats > _MAX_REPEATS:
                    out.append(f"  [Previous line repeated {repeats - _MAX_REPEATS} more times]")
                repeats, last = 1, key
            if repeats <= _MAX_REPEATS:
                out.append(f'  File "{filename}", line {lineno}, in {code.co_name}')
                if 0 < lineno <= len(lines) and lines[lineno - 1].strip():
                    out.append("    " + lines[lineno - 1].strip())
        tb = tb.tb_next
    if repeats > _MAX_REPEATS:
        out.append(f"  [Previous line repeated {repeats - _MAX_REPEATS} more times]")
    return out


def _exception_lines(exc: BaseException, max_chars: int) -> list[str]:
    if isinstance(exc, SyntaxError):
        try:
            return [line.rstrip("\n") for line in traceback.format_exception_only(exc)]
        except Exception:  # pragma: no cover - defensive
            pass
    out = [describe_exception(exc, max_chars)]
    hint = builtin_hint(exc)  # open(), input(), eval() ...: why, and what to do instead
    if hint is not None:
        out.append(hint)
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list):
        out.extend(note for note in notes[:_MAX_GROUP_ITEMS] if isinstance(note, str))
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions[:_MAX_GROUP_ITEMS]:
            out.append("  - " + describe_exception(sub, max_chars // 4))
        if len(exc.exceptions) > _MAX_GROUP_ITEMS:
            out.append(f"  - ... and {len(exc.exceptions) - _MAX_GROUP_ITEMS} more")
    return out


def format_snippet_error(
    exc: BaseException, source: str, max_bytes: int, *, filename: str = SNIPPET_FILENAME
) -> tuple[str, bool]:
    """Format an exception raised by a snippet as a traceback of the snippet's frames.

    Frames of code not compiled from the snippet (ptcbox, the sandbox's guards, tools)
    are left out; chained exceptions (``raise ... from``, exceptions during handling) are
    shown like Python shows them, up to five links. Runs code of the snippet (its
    exception's ``__str__``), so call it where the time limit applies.

    Args:
        exc: The exception.
        source: The snippet's source, for the source lines.
        max_bytes: Byte cap for the whole text (head and tail kept).
        filename: The filename the snippet was compiled under.

    Returns:
        ``(text, truncated)``.
    """
    lines = source.splitlines()
    chain: list[tuple[BaseException, str | None]] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    link: str | None = None
    while current is not None and id(current) not in seen and len(chain) < _MAX_CHAIN:
        seen.add(id(current))
        chain.append((current, link))
        cause = current.__cause__
        if cause is not None:
            current, link = (
                cause,
                ("The above exception was the direct cause of the following exception:"),
            )
        elif current.__context__ is not None and not current.__suppress_context__:
            current = current.__context__
            link = "During handling of the above exception, another exception occurred:"
        else:
            current = None
    parts: list[str] = []
    for item, follow in reversed(chain):
        frames = _frames(item, lines, filename)
        if frames:
            parts.append("Traceback (most recent call last):")
            parts.extend(frames)
        parts.extend(_exception_lines(item, max_bytes))
        if follow is not None:
            parts.extend(["", follow, ""])
    return cap_text("\n".join(parts), max_bytes)


def snippet_location(thread_id: int, source: str, *, filename: str = SNIPPET_FILENAME) -> str:
    """Describe where a thread is in the snippet, e.g. ``"line 3: while True:"``.

    Args:
        thread_id: ``threading.get_ident()`` of the thread running the snippet.
        source: The snippet's source.
        filename: The filename the snippet was compiled under.

    Returns:
        The innermost snippet line the thread is executing, or ``""`` when it is not in
        the snippet's code (e.g. inside a tool or a C call made from the host).
    """
    frame = thread_frame(thread_id)
    while frame is not None:
        if frame.f_code.co_filename == filename:
            lineno = frame.f_lineno or 0
            lines = source.splitlines()
            text = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
            return f"line {lineno}: {text[:200]}" if text else f"line {lineno}"
        frame = frame.f_back
    return ""


def timeout_error_text(timeout: float, location: str = "", paused: float = 0.0) -> str:
    """Return the ``CodeResult.error`` of a timed-out execution.

    Args:
        timeout: The execution's own time limit, in seconds.
        location: Where the code was when it was stopped (``""``: unknown).
        paused: Seconds the clock stood still while tool-call approvals were awaited
            (they do not count against ``timeout``; see ``_clock.Deadline``).
    """
    unit = "second" if timeout == 1 else "seconds"
    text = f"TimeoutError: the code did not finish within {timeout:g} {unit}"
    if paused >= 0.05:  # the wall time was longer than the limit: say why
        text = (
            f"TimeoutError: the code did not finish within its time limit of {timeout:g} "
            f"{unit} (the {paused:.1f} seconds it waited for tool-call approvals were not "
            f"counted: {timeout + paused:.1f} seconds passed in all)"
        )
    return f"{text} (it was running {location})" if location else text

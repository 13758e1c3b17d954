"""The snippet's standard streams: what ``sys.stdout``/``sys.stderr`` are in the sandbox.

Each execution gets one :class:`Streams`: its ``print``, the ``sys`` view, ``pprint``,
``traceback.print_exc``, ``logging`` and ``warnings`` write through it to the execution's
own capture, never to the host's ``sys.stdout``/``sys.stderr`` (in ``ThreadRuntime`` those
are the host's real streams). ``contextlib.redirect_stdout`` switches the execution's
current target, not a process-wide attribute.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

__all__ = ["NULL_STREAMS", "SnippetStream", "Streams"]


class SnippetStream:
    """A write-only text stream onto the execution's capture (``sys.stdout`` in a snippet).

    Args:
        write: Receives each written str.
        name: ``"<stdout>"`` or ``"<stderr>"``.
    """

    __slots__ = ("_sink", "name")
    encoding = "utf-8"
    errors = "strict"
    newlines = None
    line_buffering = False
    closed = False

    def __init__(self, write: Callable[[str], Any], name: str) -> None:
        self._sink = write
        self.name = name

    def write(self, s: str, /) -> int:
        """Write ``s`` (a str) to the execution's output; returns its length."""
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        text = str.__str__(s)
        self._sink(text)
        return len(text)

    def writelines(self, lines: Any, /) -> None:
        """Write each str of ``lines``."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Nothing to do: the capture has no buffer of its own."""

    def isatty(self) -> bool:
        """Always ``False``."""
        return False

    def readable(self) -> bool:
        """Always ``False``."""
        return False

    def writable(self) -> bool:
        """Always ``True``."""
        return True

    def seekable(self) -> bool:
        """Always ``False``."""
        return False

    def fileno(self) -> int:
        """Refused: the stream has no file descriptor in the sandbox."""
        raise io.UnsupportedOperation("fileno")

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"cannot pickle or copy sys.{self.name.strip('<>')}")

    def __repr__(self) -> str:
        return f"<_io.TextIOWrapper name='{self.name}' mode='w' encoding='utf-8'>"


def _discard(text: str) -> None:
    pass


_UNMADE: Any = object()


class Streams:
    """One execution's current ``stdout``/``stderr`` (objects) and their write callables.

    Attributes:
        stdout: What ``sys.stdout`` is now (a :class:`SnippetStream`, or the target of a
            ``redirect_stdout``).
        stderr: Likewise for ``sys.stderr``.
        out: ``stdout``'s write callable (what ``print`` calls).
        err: ``stderr``'s write callable.
    """

    __slots__ = ("_stderr", "_stdout", "err", "out")

    def __init__(self, stdout: Callable[[str], Any], stderr: Callable[[str], Any]) -> None:
        self._stdout: Any = _UNMADE  # the SnippetStream objects are made on first use
        self._stderr: Any = _UNMADE
        self.out: Callable[[str], Any] = stdout  # print's text is a str: the sink directly
        self.err: Callable[[str], Any] = stderr

    @property
    def stdout(self) -> Any:
        """What ``sys.stdout`` is now."""
        if self._stdout is _UNMADE:
            self._stdout = SnippetStream(self.out, "<stdout>")
        return self._stdout

    @property
    def stderr(self) -> Any:
        """What ``sys.stderr`` is now."""
        if self._stderr is _UNMADE:
            self._stderr = SnippetStream(self.err, "<stderr>")
        return self._stderr

    def redirect(self, which: str, target: Any, getattr_: Callable[[Any, str], Any]) -> Any:
        """Make ``target`` the current ``which`` (``"stdout"``/``"stderr"``); return the
        previous state for :meth:`restore`. ``target``'s ``write`` is read with the
        sandbox's getattr guard (``None`` discards, as ``sys.stdout = None`` does)."""
        previous = (which, getattr(self, which), self.out if which == "stdout" else self.err)
        write = _discard if target is None else getattr_(target, "write")
        self.restore((which, target, write))
        return previous

    def restore(self, previous: Any) -> None:
        """Undo one :meth:`redirect`."""
        which, target, write = previous
        if which == "stdout":
            self._stdout, self.out = target, write
        else:
            self._stderr, self.err = target, write


NULL_STREAMS = Streams(_discard, _discard)
"""Streams that discard everything (module views built without an execution)."""

"""Runtimes: where snippets run (a worker thread, or a separate process).

- :mod:`ptcbox.runtimes._protocol`: the :class:`CodeRuntime` protocol and its callbacks.
- :mod:`ptcbox.runtimes.thread`: :class:`ThreadRuntime`, snippets in a worker thread.
- :mod:`ptcbox.runtimes.subprocess`: :class:`SubprocessRuntime`, the host side of
  snippets in pre-forked worker processes; :mod:`ptcbox.runtimes.subprocess.worker` is
  the only code that runs in the sandboxed child.
- :mod:`ptcbox.runtimes._wire`: the protocol the host and the child speak.
- :mod:`ptcbox.runtimes._shared`: what both runtimes (and the child) use.
"""

from ptcbox.runtimes._protocol import CodeRuntime, OutputCallback, ToolCallCallback
from ptcbox.runtimes.subprocess import SubprocessRuntime, SubprocessSession, WorkerStartError
from ptcbox.runtimes.thread import ThreadRuntime, ThreadSession

__all__ = [
    "CodeRuntime",
    "OutputCallback",
    "SubprocessRuntime",
    "SubprocessSession",
    "ThreadRuntime",
    "ThreadSession",
    "ToolCallCallback",
    "WorkerStartError",
]

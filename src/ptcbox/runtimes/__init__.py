"""Runtimes: where snippets run (a worker thread, or a separate process)."""

from ptcbox.runtimes._pool import WorkerStartError
from ptcbox.runtimes._protocol import CodeRuntime, OutputCallback, ToolCallCallback
from ptcbox.runtimes._subprocess import SubprocessRuntime
from ptcbox.runtimes._subprocess_session import SubprocessSession
from ptcbox.runtimes._thread import ThreadRuntime, ThreadSession

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

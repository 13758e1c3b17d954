"""Runtimes: where snippets run (a worker thread, or a separate process)."""

from ptcbox.runtimes._protocol import CodeRuntime, OutputCallback, ToolCallCallback
from ptcbox.runtimes._thread import ThreadRuntime, ThreadSession

__all__ = ["CodeRuntime", "OutputCallback", "ThreadRuntime", "ThreadSession", "ToolCallCallback"]

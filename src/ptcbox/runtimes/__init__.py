"""Runtimes: where snippets run (a worker thread, or a separate process)."""

from ptcbox.runtimes._protocol import CodeRuntime, OutputCallback, ToolCallCallback

__all__ = ["CodeRuntime", "OutputCallback", "ToolCallCallback"]

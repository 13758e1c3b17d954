"""Runtimes: where snippets run (a worker thread, or a separate process).

- :mod:`ptcbox.runtimes._protocol`: the :class:`CodeRuntime` protocol and its callbacks.
- :mod:`ptcbox.runtimes.thread`: :class:`ThreadRuntime`, snippets in a worker thread.
- :mod:`ptcbox.runtimes.subprocess`: :class:`SubprocessRuntime`, the host side of
  snippets in pre-forked worker processes; :mod:`ptcbox.runtimes.subprocess.worker` is
  the only code that runs in the sandboxed child.
- :mod:`ptcbox.runtimes.ray`: :class:`RayRuntime`, SubprocessRuntime pools on the nodes
  of a Ray cluster (the ``ray`` extra; imported on first use of the name, so
  ``import ptcbox`` never imports it or Ray).
- :mod:`ptcbox.runtimes._wire`: the protocol the host and the child speak.
- :mod:`ptcbox.runtimes._shared`: what both runtimes (and the child) use.
"""

from typing import TYPE_CHECKING

from ptcbox.runtimes._protocol import CodeRuntime, OutputCallback, ToolCallCallback
from ptcbox.runtimes.subprocess import SubprocessRuntime, SubprocessSession, WorkerStartError
from ptcbox.runtimes.thread import ThreadRuntime, ThreadSession

if TYPE_CHECKING:
    from ptcbox.runtimes.ray import RayRuntime, RaySession

__all__ = [
    "CodeRuntime",
    "OutputCallback",
    "RayRuntime",
    "RaySession",
    "SubprocessRuntime",
    "SubprocessSession",
    "ThreadRuntime",
    "ThreadSession",
    "ToolCallCallback",
    "WorkerStartError",
]


def __getattr__(name: str) -> object:
    """``RayRuntime`` and ``RaySession``, imported on first use (PEP 562)."""
    if name in ("RayRuntime", "RaySession"):
        from ptcbox.runtimes import ray  # noqa: PLC0415 - lazy: the ray extra is optional

        return getattr(ray, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

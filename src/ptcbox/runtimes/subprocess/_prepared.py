"""What the host prepares for one SubprocessRuntime execution before a worker runs it.

:class:`Preparer` turns a snippet into its ``run`` frame, one of two ways.

The overlap: the frame (source only) is sent first and the pre-flight check
(``runtimes/_shared/_preflight.py``) runs in ``HostExecution.run`` while the worker
compiles the snippet, before anything the worker sends is read. That needs a free CPU:
the host's write to the worker's Unix socket is a synchronous wake-up, which places the
worker on the host's CPU when the others are busy, and the worker then waits for the
check to end (~0.3 ms for a 13-line snippet) before it starts to compile.

Serial: a short snippet (up to
:data:`~ptcbox.runtimes.subprocess._compile.HOST_INLINE_MAX_CHARS`) is checked, then
compiled by the host from the syntax tree the check parsed, before a worker is taken:
the snippet is parsed once instead of twice, the worker only decodes the code object
(~40-140 µs instead of ~0.2 ms for ``print(1)`` and ~0.9-1.0 ms for the throughput
benchmark's 13-line, 9-call snippet), and a refused snippet takes no worker.

Measured (``benchmarks/latency_breakdown.py``, same-process interleaved A/B, that
13-line snippet, new source each time, paced 20 ms): on the 2-core VM loaded by other
processes (load 3-4) serial ended it 0.2-0.45 ms sooner; with a CPU kept free for the
worker (host and workers at real-time priority) the overlap was 0.06-0.16 ms sooner.
So a new short snippet goes the overlap way when a CPU is idle right now
(:func:`a_cpu_is_free`), serially otherwise, and always serially in a session (whose
check comes first: a refusal must not end it). Longer snippets always overlap.
"""

from __future__ import annotations

import ast
import functools
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from ptcbox._result import CodeResult
from ptcbox.runtimes._shared._host import ToolSpec
from ptcbox.runtimes._shared._preflight import (
    PreflightFailure,
    oversized,
    preflight,
    preflight_parsed,
    refused,
)
from ptcbox.runtimes._wire import encode_message
from ptcbox.runtimes.subprocess._compile import HOST_INLINE_MAX_CHARS, host_compiled
from ptcbox.runtimes.subprocess._extra_globals import json_globals
from ptcbox.sandbox import SandboxPolicy

__all__ = ["Prepared", "Preparer", "a_cpu_is_free", "run_frame"]

_FRAME_CACHE_SIZE = 128


class Prepared(NamedTuple):
    """An execution's ``run`` frame and what the host needs to serve it."""

    frame: bytes
    specs: dict[str, ToolSpec]
    seconds: float
    names_sync_tool: bool
    refusal: CodeResult | None = None  # the pre-flight check's failure: nothing to run
    session: bool = False
    check: Callable[[], PreflightFailure | None] | None = None  # run while the worker compiles


class Preparer:
    """Builds the ``run`` frames of one runtime, and keeps those of repeated snippets.

    Args:
        policy: The runtime's policy.
    """

    def __init__(self, policy: SandboxPolicy) -> None:
        self.policy = policy
        # run frames of repeated snippets (only those the host compiled), oldest first
        self.frames: dict[tuple[Any, ...], tuple[bytes, bool, tuple[ToolSpec, ...]]] = {}

    def prepare(
        self,
        code: str,
        specs: dict[str, ToolSpec],
        seconds: float,
        extra_globals: Mapping[str, Any] | None,
        session: bool,
    ) -> Prepared:
        """The execution of ``code`` (see the module docstring).

        Raises:
            TypeError: An extra global is not JSON-compatible, or the code or a tool doc
                cannot be encoded (a lone surrogate).
        """
        started = time.perf_counter()
        too_long = oversized(code, self.policy.max_code_chars, started)
        if too_long is not None:
            return Prepared(b"", specs, seconds, False, refusal=too_long)
        # a session's globals live in its worker: unknown names are left to run time there
        known = None if session else {*(extra_globals or ())}
        check = functools.partial(preflight, code, specs, known)
        key: tuple[Any, ...] | None = None
        if not extra_globals:  # a repeated snippet with the same tools: the same frame
            key = (code, session, *specs, *map(id, specs.values()))
            hit = self.frames.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[2], specs.values(), strict=True)):
                failure = check()  # its analysis is cached: cheap
                if failure is not None:
                    return Prepared(b"", specs, seconds, False, refusal=refused(failure, started))
                return Prepared(hit[0], specs, seconds, hit[1], session=session)
        # a session checks first anyway; otherwise the overlap is worth it with a free CPU
        inline = len(code) <= HOST_INLINE_MAX_CHARS and (session or not a_cpu_is_free())
        tree = None
        if session or inline:  # checked now: a call that cannot work takes no worker
            failure, tree = preflight_parsed(code, specs, known)
            if failure is not None:
                return Prepared(b"", specs, seconds, False, refusal=refused(failure, started))
        deferred = None if session or inline else check
        try:
            frame, compiled = run_frame(
                code, specs, self.policy, extra_globals, session, inline=inline, tree=tree
            )
        except (TypeError, ValueError) as exc:
            failure = None if deferred is None else deferred()
            if failure is not None:
                return Prepared(b"", specs, seconds, False, refusal=refused(failure, started))
            raise TypeError(f"code or tool docs cannot be sent to the worker: {exc}") from None
        # a hint only (see HostExecution.run): a sync tool called under another name is
        # served all the same
        names_sync_tool = any(name in code for name, spec in specs.items() if not spec.is_async)
        if key is not None and compiled:
            if len(self.frames) >= _FRAME_CACHE_SIZE:
                del self.frames[next(iter(self.frames))]
            self.frames[key] = (frame, names_sync_tool, tuple(specs.values()))
        return Prepared(frame, specs, seconds, names_sync_tool, session=session, check=deferred)


def a_cpu_is_free() -> bool:
    """Whether fewer tasks are runnable on the machine right now than it has CPUs.

    The caller (running) is one of them, so ``True`` means a CPU is idle: a worker
    woken now gets it (the overlap of the check with its compile pays off). The
    instantaneous count is ``/proc/loadavg``'s fourth field (~2 µs to read); ``False``
    when it cannot be read.
    """
    try:
        fd = os.open(_LOADAVG_PATH, os.O_RDONLY | os.O_CLOEXEC)
        try:
            text = os.pread(fd, 128, 0)
        finally:
            os.close(fd)
        running = int(text.split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return False
    return running < _CPUS


_LOADAVG_PATH = "/proc/loadavg"
_CPUS = len(os.sched_getaffinity(0))


def run_frame(
    code: str,
    specs: dict[str, ToolSpec],
    policy: SandboxPolicy,
    extra_globals: Mapping[str, Any] | None,
    session: bool,
    *,
    inline: bool = False,
    tree: ast.Module | None = None,
) -> tuple[bytes, bool]:
    """The ``run`` frame of ``code``, and whether it carries the code compiled by the host.

    ``inline`` and ``tree``: see :func:`~ptcbox.runtimes.subprocess._compile.host_compiled`.

    Raises:
        TypeError: An extra global is not JSON-compatible.
        ValueError: The code or a tool doc cannot be encoded (a lone surrogate).
    """
    message = {
        "t": "run",
        "code": code,
        "compiled": host_compiled(code, policy, block=False, inline=inline, tree=tree),
        "tools": [[name, _doc(spec)] for name, spec in specs.items()],
        "globals": json_globals(extra_globals),
        "session": session,
    }
    return encode_message(message), message["compiled"] is not None


def _doc(spec: ToolSpec) -> str | None:
    doc = spec.projection.doc
    return doc if isinstance(doc, str) else None

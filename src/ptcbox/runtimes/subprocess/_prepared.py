"""What the host prepares for one SubprocessRuntime execution before a worker runs it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from ptcbox._result import CodeResult
from ptcbox.runtimes._shared._host import ToolSpec
from ptcbox.runtimes._shared._preflight import PreflightFailure
from ptcbox.runtimes._wire import encode_message
from ptcbox.runtimes.subprocess._compile import host_compiled
from ptcbox.runtimes.subprocess._extra_globals import json_globals
from ptcbox.sandbox import SandboxPolicy

__all__ = ["Prepared", "run_frame"]


class Prepared(NamedTuple):
    """An execution's ``run`` frame and what the host needs to serve it."""

    frame: bytes
    specs: dict[str, ToolSpec]
    seconds: float
    names_sync_tool: bool
    refusal: CodeResult | None = None  # the pre-flight check's failure: nothing to run
    session: bool = False
    check: Callable[[], PreflightFailure | None] | None = None  # run while the worker compiles


def run_frame(
    code: str,
    specs: dict[str, ToolSpec],
    policy: SandboxPolicy,
    extra_globals: Mapping[str, Any] | None,
    session: bool,
) -> tuple[bytes, bool]:
    """The ``run`` frame of ``code``, and whether it carries the code compiled by the host.

    Raises:
        TypeError: An extra global is not JSON-compatible.
        ValueError: The code or a tool doc cannot be encoded (a lone surrogate).
    """
    message = {
        "t": "run",
        "code": code,
        "compiled": host_compiled(code, policy, block=False),
        "tools": [[name, _doc(spec)] for name, spec in specs.items()],
        "globals": json_globals(extra_globals),
        "session": session,
    }
    return encode_message(message), message["compiled"] is not None


def _doc(spec: ToolSpec) -> str | None:
    doc = spec.projection.doc
    return doc if isinstance(doc, str) else None

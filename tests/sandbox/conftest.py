"""Helpers for sandbox tests: compile + build_globals + exec, the way runtimes do it."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from ptcbox.sandbox import VALUE_NAME, SandboxPolicy, build_globals, compile_snippet


@dataclass
class Ran:
    """What a snippet run produced."""

    stdout: str
    stderr: str
    value: Any
    globals: dict[str, Any]


def search(q: str = "") -> str:
    """A host tool whose globals (this module's) must never leak into a snippet."""
    return f"result for {q}"


HOST_SECRET = "host-secret-do-not-leak"


def run(
    code: str,
    policy: SandboxPolicy | None = None,
    *,
    tools: Mapping[str, Callable[..., Any]] | None = None,
    extra_globals: Mapping[str, Any] | None = None,
    sleep: Callable[[float], None] | None = None,
    os_enforced_limits: bool = False,
    globals_: dict[str, Any] | None = None,
) -> Ran:
    """Compile and run ``code`` in the sandbox; exceptions from the snippet propagate."""
    policy = policy or SandboxPolicy()
    out, err = io.StringIO(), io.StringIO()
    compiled = compile_snippet(code, policy, os_enforced_limits=os_enforced_limits)
    g = globals_
    if g is None:
        g = build_globals(
            policy,
            tools={"search": search} if tools is None else tools,
            extra_globals=extra_globals,
            stdout=out,
            stderr=err,
            sleep=sleep,
        )
    if compiled.is_async:
        asyncio.run(eval(compiled.code, g))
    else:
        exec(compiled.code, g)
    value = g.get(VALUE_NAME) if compiled.has_value else None
    return Ran(out.getvalue(), err.getvalue(), value, g)


@pytest.fixture
def sandbox_run() -> Callable[..., Ran]:
    return run

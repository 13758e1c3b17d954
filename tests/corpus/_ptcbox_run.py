"""Running a corpus snippet on a ptcbox runtime and judging it against CPython's outcome.

Shared by ``test_corpus.py`` and ``benchmarks/corpus.py``. A snippet gets the same kind of
tools as under plain CPython (``_plain.py``): the ``async def`` variants when it awaits
anywhere, the plain functions otherwise, through the public ``ptcbox.resolve_tools``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _atools import ASYNC_TOOLS
from _snippets import Snippet
from _tools import SYNC_TOOLS

from ptcbox import CodeResult, ToolProjection, resolve_tools

__all__ = ["RUNTIME_NAMES", "SNIPPET_TIMEOUT_S", "judge", "namespace_for", "run_snippet"]

RUNTIME_NAMES = ("thread", "subprocess")
"""The runtimes the corpus runs on (``ptcbox.runtimes.ThreadRuntime`` and
``SubprocessRuntime`` with the default policy)."""

SNIPPET_TIMEOUT_S = 20.0
"""Per-snippet timeout: far above any snippet's need (none should wait for a slow_query)."""

_NAMESPACES: dict[bool, dict[str, ToolProjection]] = {}


def namespace_for(snippet: Snippet) -> dict[str, ToolProjection]:
    """The resolved tools for a snippet (built once per kind)."""
    awaits = snippet.awaits
    if awaits not in _NAMESPACES:
        tools: dict[str, Callable[..., Any]] = ASYNC_TOOLS if awaits else SYNC_TOOLS
        _NAMESPACES[awaits] = resolve_tools(list(tools.values()))
    return _NAMESPACES[awaits]


async def run_snippet(runtime: Any, snippet: Snippet) -> CodeResult:
    """Execute one snippet on an open runtime."""
    result: CodeResult = await runtime.execute(
        snippet.code, namespace_for(snippet), timeout=SNIPPET_TIMEOUT_S
    )
    return result


def judge(result: CodeResult, expected: dict[str, Any]) -> str | None:
    """``None`` if ``result`` matches CPython's outcome, else what differs (one paragraph)."""
    problems = []
    if result.stdout != expected["stdout"]:
        problems.append(f"stdout {result.stdout!r} != expected {expected['stdout']!r}")
    if result.return_code != expected["return_code"]:
        problems.append(f"return_code {result.return_code} != {expected['return_code']}")
    elif expected["return_code"] and result.error_type != expected["error_type"]:
        problems.append(f"error_type {result.error_type!r} != {expected['error_type']!r}")
    if not problems:
        return None
    error = (result.error or "").strip().splitlines()
    tail = f"; error: {error[-1]}" if error else ""
    return "; ".join(problems) + tail

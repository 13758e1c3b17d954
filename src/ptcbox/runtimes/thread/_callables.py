"""The callables a ThreadRuntime snippet calls for its tools (one per :class:`ToolSpec`).

Each finds the execution that runs now through the calling thread
(:data:`ptcbox.runtimes.thread._route.current`) and hands the call to its
:class:`~ptcbox.runtimes.thread._tools.Run`.
"""

from __future__ import annotations

from asyncio import events
from collections.abc import Callable
from typing import Any

from ptcbox.runtimes._shared._host import ToolSpec
from ptcbox.runtimes.thread._route import current

__all__ = ["make_tool", "tool_callables"]

_get_running_loop = events._get_running_loop

_TOOL_CACHE: dict[int, tuple[ToolSpec, Callable[..., Any]]] = {}
_TOOL_CACHE_MAX = 4096


def tool_callables(specs: dict[str, ToolSpec]) -> dict[str, Callable[..., Any]]:
    """One callable per tool, made once per :class:`ToolSpec` and reused by every
    execution (a tool finds the execution through the thread it is called in)."""
    out: dict[str, Callable[..., Any]] = {}
    cache = _TOOL_CACHE
    for name, spec in specs.items():
        entry = cache.get(id(spec))
        if entry is None or entry[0] is not spec:
            if len(cache) >= _TOOL_CACHE_MAX:
                cache.clear()
            entry = cache[id(spec)] = (spec, make_tool(spec))
        out[name] = entry[1]
    return out


def make_tool(spec: ToolSpec) -> Callable[..., Any]:
    """The callable a snippet calls for ``spec``: a value in sync code, an awaitable in
    running asyncio code.

    It works only in the thread of a running execution: a snippet that hands a tool to
    host code running elsewhere (another thread, the host's loop) gets a RuntimeError
    there instead of snippet code escaping the time limit. And only while its tool is in
    the namespace of the execution that runs now: a name a session kept from an earlier
    execution (``t = search``) calls the tool of that name the execution has now, as in
    ``SubprocessRuntime`` (the worker sends the name), and none if it was removed.
    """
    name = spec.name

    def tool(*args: Any, **kwargs: Any) -> Any:
        run = current.run
        if run is None:
            raise RuntimeError(
                f"{name}() can only be called by the snippet, in the thread it runs in"
            )
        current_spec = run.specs.get(name)
        if current_spec is None:
            raise RuntimeError(
                f"{name}() is not a tool of this execution (it is not in the namespace "
                "the execution was given); call only the tools listed for this run"
            )
        if _get_running_loop() is None:
            return run.call(current_spec, args, kwargs)
        return run.acall(current_spec, args, kwargs)

    tool.__name__ = tool.__qualname__ = spec.name
    tool.__doc__ = spec.projection.doc
    return tool

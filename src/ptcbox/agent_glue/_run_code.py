""":class:`RunCodeTool`: the one ``run_code`` tool a model calls to program its tools.

Its description lists the tools as Python stubs, its schema is ``{code, timeout?}``,
and its result is ``CodeResult.render()``. Malformed arguments (invalid JSON, not an
object, wrong types, empty code) never reach the runtime (case B26). While the code
runs, its output chunks and tool calls are reported as progress
(``ToolExecutionUpdate`` events in an agent).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from ptcbox._result import ToolCallRecord
from ptcbox._tracing import ExecutionSpan
from ptcbox._tracing_calls import traced_namespace
from ptcbox.agent_glue._approval import ApprovalHook, ApprovingProjection
from ptcbox.agent_glue._context import ToolContext
from ptcbox.agent_glue._registry import ToolRegistry
from ptcbox.agent_glue._tool import Tool
from ptcbox.agent_glue._tool_result import ToolResult
from ptcbox.projections import ToolProjection, validate_namespace
from ptcbox.projections._stubs import count_tokens, render_stubs
from ptcbox.projections._validated import preview
from ptcbox.runtimes import CodeRuntime, SubprocessRuntime, ThreadRuntime
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._policy import check_policy_argument

__all__ = ["RunCodeTool"]

_INTRO = (
    "Run Python code in a sandbox and get back what it printed.\n\n"
    "The tools below are predefined Python functions: call them directly with keyword "
    "arguments (no import needed). Loop, filter and aggregate in code instead of making "
    "one tool call per step, and print only what you need: only printed output, errors "
    "and the value of a final expression come back (output in fenced blocks; "
    "`[error: X]` is an exception of your code, `[ptcbox error: X]` the sandbox's: "
    "time limit, limits, policy). A failing tool raises its own exception type "
    "(e.g. KeyError, also a ToolError), catchable as usual. "
    "In code that uses `await`, tool calls must be awaited "
    "(`await tool(...)`); `await asyncio.gather(...)` runs them concurrently. "
    "Time limit: {limit:g} s."
)

ToolsArgument = (
    ToolRegistry | Mapping[str, ToolProjection | Tool] | Iterable[Tool | Callable[..., Any]]
)

_RUNTIMES_BY_NAME: dict[str, Callable[[SandboxPolicy | None], CodeRuntime]] = {
    "subprocess": SubprocessRuntime,
    "thread": ThreadRuntime,
}
"""Runtimes :class:`RunCodeTool` creates by name (as ``execute(runtime=...)`` names them)."""


class RunCodeTool(Tool):
    """The ``run_code`` tool: runs model-written Python that calls your tools.

    Args:
        tools: The tools the code may call: a :class:`ToolRegistry` (every tool,
            ``code_only`` ones included; read at each call, so later registrations
            count), a namespace of projections, or an iterable of tools/functions.
        runtime: The :class:`~ptcbox.runtimes.CodeRuntime` to run code in, or the name
            of one to create (``"subprocess"`` or ``"thread"``); default:
            ``"subprocess"`` (model-written code is untrusted). A runtime created by name
            is created on first use with ``policy`` and closed by :meth:`aclose`; a
            runtime instance you pass is never closed here. ``"thread"`` (or a
            ``ThreadRuntime``) is for speed with code you trust.
        policy: The sandbox policy of a runtime created by name.
        max_timeout: Cap on the wall-clock time of one execution, in seconds; a model
            asking for more gets the cap (and the cap when it asks for nothing).
        name: The tool's name.
        extra_globals: More names for the code (JSON-compatible data for
            process-isolated runtimes).
        max_result_chars: Longest result text the model sees (head and tail kept).
        is_parallel_safe: Whether run_code calls may overlap in one turn.
        approve: Hook consulted before each tool call the code makes (see
            :class:`ApprovalRequest`): allow, allow with edited arguments, or deny (the
            call raises ``PermissionError`` with the reason in the code, which catches it
            as ``PermissionError`` or ``ToolError``). Without a hook, tools made
            with ``requires_approval=True`` are denied and the others run.
        approval_timeout: Longest wait for one decision, in seconds; then the call is
            denied. The wait does not count against the code's time limit (the
            execution's clock stands still while any decision is pending).

    Raises:
        ValueError: If both a runtime instance and ``policy`` are given, ``runtime`` is
            an unknown name, ``max_timeout`` or ``approval_timeout`` is not positive, or
            the namespace is malformed.
        TypeError: If ``runtime`` is neither a name nor a runtime, or ``policy`` is not a
            :class:`~ptcbox.sandbox.SandboxPolicy`.
    """

    callable_in_code: ClassVar[bool] = False

    def __init__(
        self,
        tools: ToolsArgument = (),
        runtime: CodeRuntime | str | None = None,
        policy: SandboxPolicy | None = None,
        *,
        max_timeout: float = 30.0,
        name: str = "run_code",
        extra_globals: Mapping[str, Any] | None = None,
        max_result_chars: int = 8000,
        is_parallel_safe: bool = False,
        approve: ApprovalHook | None = None,
        approval_timeout: float = 60.0,
    ) -> None:
        self._runtime_kind = "subprocess"
        check_policy_argument(policy)
        if isinstance(runtime, str):
            if runtime not in _RUNTIMES_BY_NAME:
                known = ", ".join(repr(n) for n in _RUNTIMES_BY_NAME)
                raise ValueError(f"unknown runtime {runtime!r}; expected one of {known}")
            self._runtime_kind = runtime
            runtime = None
        elif runtime is not None and not isinstance(runtime, CodeRuntime):
            raise TypeError(
                "runtime must be 'subprocess', 'thread' or a CodeRuntime instance, "
                f"not {type(runtime).__name__}"
            )
        elif runtime is not None and policy is not None:
            raise ValueError("pass the policy to the runtime you give, not to RunCodeTool")
        if not max_timeout > 0:
            raise ValueError(f"max_timeout must be positive seconds, got {max_timeout!r}")
        if not approval_timeout > 0:
            raise ValueError(f"approval_timeout must be positive seconds, got {approval_timeout!r}")
        self._tools = _as_tools(tools)
        self.approve = approve
        self.approval_timeout = float(approval_timeout)
        self._runtime = runtime
        self._owns_runtime = runtime is None
        self._policy = policy
        self.max_timeout = float(max_timeout)
        self._extra_globals = dict(extra_globals) if extra_globals else None
        self._max_result_chars = max_result_chars
        self._stubs_key: tuple[tuple[str, int], ...] | None = None
        self._stubs = ""
        super().__init__(self._run, name=name, description="", is_parallel_safe=is_parallel_safe)
        properties = self.parameters["properties"]
        properties["code"]["description"] = "Python source to run."
        properties["timeout"]["description"] = (
            f"Seconds before the code is stopped; at most {self.max_timeout:g} (the default)."
        )

    def __repr__(self) -> str:
        # Tool's repr shows fn, here the bound self._run, whose repr is this one again
        names = list(self._tools.names if isinstance(self._tools, ToolRegistry) else self._tools)
        runtime = self._runtime_kind if self._runtime is None else type(self._runtime).__name__
        return f"{type(self).__name__}(name={self.name!r}, tools={names!r}, runtime={runtime!r})"

    # -- what the model sees -----------------------------------------------------------

    @property
    def description(self) -> str:
        """The intro and the stubs of every tool the code may call."""
        stubs = self.stubs
        intro = _INTRO.format(limit=self.max_timeout)
        return f"{intro}\n\n```python\n{stubs}```" if stubs else intro

    @property
    def stubs(self) -> str:
        """The tools as Python stubs (cached until the set of tools changes)."""
        namespace = self.namespace()
        key = tuple((tool_name, id(self._tools.get(tool_name))) for tool_name in namespace)
        if key != self._stubs_key:
            self._stubs = render_stubs(namespace)
            self._stubs_key = key
        return self._stubs

    @property
    def description_tokens(self) -> int:
        """Size of the description in ``o200k_base`` tokens."""
        return count_tokens(self.description)

    def namespace(self, parent: ToolContext | None = None) -> dict[str, ToolProjection]:
        """Return the namespace the code runs with.

        Args:
            parent: The ``run_code`` call's context (tools that take a context get a
                child of it).
        """
        if isinstance(self._tools, ToolRegistry):
            return dict(self._tools.projections(parent))
        return {
            key: value.projection(parent) if isinstance(value, Tool) else value
            for key, value in self._tools.items()
        }

    # -- running -----------------------------------------------------------------------

    @property
    def runtime(self) -> CodeRuntime:
        """The runtime (the default ``SubprocessRuntime`` is created on first access)."""
        if self._runtime is None:
            self._runtime = _RUNTIMES_BY_NAME[self._runtime_kind](self._policy)
        return self._runtime

    async def aclose(self) -> None:
        """Close the default runtime, if this tool created one."""
        runtime, owned = self._runtime, self._owns_runtime
        if owned and runtime is not None:
            self._runtime = None
            close = getattr(runtime, "aclose", None)
            if close is not None:
                await close()

    async def __aenter__(self) -> RunCodeTool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _run(
        self, code: str, timeout: float | None = None, *, context: ToolContext
    ) -> ToolResult:
        if not code.strip():
            return ToolResult.failure(
                f"{self.name} got invalid arguments: 'code' is empty; send the Python "
                f'source to run. Given: {{"code": {preview(code)}}}'
            )
        if timeout is not None and not timeout > 0:
            return ToolResult.failure(
                f"{self.name} got invalid arguments: 'timeout' must be a positive number "
                f"of seconds, at most {self.max_timeout:g}. Given: {preview(timeout)}"
            )
        limit = self.max_timeout if timeout is None else min(timeout, self.max_timeout)
        namespace = self._with_approvals(self.namespace(context), context)
        validate_namespace(namespace)

        def on_output(stream: str, text: str) -> None:
            context.report({"stream": stream, "text": text})

        def on_tool_call(record: ToolCallRecord) -> None:
            context.report({"tool_call": record.to_dict()})

        runtime = self.runtime
        trace = ExecutionSpan(type(runtime).__name__, getattr(runtime, "policy", None), limit)
        try:
            result = await runtime.execute(
                code,
                traced_namespace(trace, namespace),
                timeout=limit,
                extra_globals=self._extra_globals,
                on_tool_call=trace.wrap(on_tool_call),
                on_output=on_output,
            )
        except BaseException as exc:
            trace.finish(None, exc)
            raise
        trace.finish(result)
        text = result.render(self._max_result_chars)
        return ToolResult(ok=result.ok, output=result, error=None if result.ok else text, text=text)

    def _with_approvals(
        self, namespace: dict[str, ToolProjection], context: ToolContext
    ) -> dict[str, ToolProjection]:
        """Wrap the projections that must ask before each call (all, with a hook)."""

        def required(name: str) -> bool:
            found = self._tools.get(name)
            return isinstance(found, Tool) and getattr(found, "requires_approval", False)

        asking = [name for name in namespace if self.approve is not None or required(name)]
        if not asking:
            return namespace
        counter = itertools.count(1)
        wrapped = dict(namespace)
        for name in asking:
            wrapped[name] = ApprovingProjection(
                namespace[name], self.approve, self.approval_timeout, context.tool_call_id, counter
            )
        return wrapped


def _as_tools(tools: ToolsArgument) -> ToolRegistry | dict[str, ToolProjection | Tool]:
    if isinstance(tools, ToolRegistry):
        return tools
    if isinstance(tools, Mapping):
        namespace = dict(tools)
        for key, value in namespace.items():
            shown = value.projection() if isinstance(value, Tool) else value
            validate_namespace({key: shown})
        return namespace
    return ToolRegistry(tools)

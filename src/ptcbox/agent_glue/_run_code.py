""":class:`RunCodeTool`: the one ``run_code`` tool a model calls to program its tools.

Its description lists the tools as Python stubs, its schema is ``{code, timeout?}``,
and its result is ``CodeResult.render()``. Malformed arguments (invalid JSON, not an
object, wrong types, empty code) never reach the runtime (case B26). While the code
runs, its output chunks and tool calls are reported as progress
(``ToolExecutionUpdate`` events in an agent).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from ptcbox._result import ToolCallRecord
from ptcbox.agent_glue._context import ToolContext
from ptcbox.agent_glue._registry import ToolRegistry
from ptcbox.agent_glue._tool import Tool
from ptcbox.agent_glue._tool_result import ToolResult
from ptcbox.projections import ToolProjection, validate_namespace
from ptcbox.projections._stubs import count_tokens, render_stubs
from ptcbox.projections._validated import preview
from ptcbox.runtimes import CodeRuntime, SubprocessRuntime
from ptcbox.sandbox import SandboxPolicy

__all__ = ["RunCodeTool"]

_INTRO = (
    "Run Python code in a sandbox and get back what it printed.\n\n"
    "The tools below are predefined Python functions: call them directly with keyword "
    "arguments (no import needed). Loop, filter and aggregate in code instead of making "
    "one tool call per step, and print only what you need: only printed output, errors "
    "and the value of a final expression come back (output in fenced blocks; "
    "`[error: X]` is an exception of your code, `[ptcbox error: X]` the sandbox's: "
    "time limit, limits, policy). A failing tool raises ToolError "
    "(catchable). In code that uses `await`, tool calls must be awaited "
    "(`await tool(...)`); `await asyncio.gather(...)` runs them concurrently. "
    "Time limit: {limit:g} s."
)

ToolsArgument = (
    ToolRegistry | Mapping[str, ToolProjection | Tool] | Iterable[Tool | Callable[..., Any]]
)


class RunCodeTool(Tool):
    """The ``run_code`` tool: runs model-written Python that calls your tools.

    Args:
        tools: The tools the code may call: a :class:`ToolRegistry` (every tool,
            ``code_only`` ones included; read at each call, so later registrations
            count), a namespace of projections, or an iterable of tools/functions.
        runtime: The :class:`~ptcbox.runtimes.CodeRuntime` to run code in; default: a
            ``SubprocessRuntime(policy)`` (model-written code is untrusted) created on
            first use and closed by :meth:`aclose`; pass a ``ThreadRuntime`` for speed
            with code you trust.
        policy: The sandbox policy of the default runtime.
        max_timeout: Cap on the wall-clock time of one execution, in seconds; a model
            asking for more gets the cap (and the cap when it asks for nothing).
        name: The tool's name.
        extra_globals: More names for the code (JSON-compatible data for
            process-isolated runtimes).
        max_result_chars: Longest result text the model sees (head and tail kept).
        is_parallel_safe: Whether run_code calls may overlap in one turn.

    Raises:
        ValueError: If both ``runtime`` and ``policy`` are given, ``max_timeout`` is not
            positive, or the namespace is malformed.
    """

    callable_in_code: ClassVar[bool] = False

    def __init__(
        self,
        tools: ToolsArgument = (),
        runtime: CodeRuntime | None = None,
        policy: SandboxPolicy | None = None,
        *,
        max_timeout: float = 30.0,
        name: str = "run_code",
        extra_globals: Mapping[str, Any] | None = None,
        max_result_chars: int = 8000,
        is_parallel_safe: bool = False,
    ) -> None:
        if runtime is not None and policy is not None:
            raise ValueError("pass the policy to the runtime you give, not to RunCodeTool")
        if not max_timeout > 0:
            raise ValueError(f"max_timeout must be positive seconds, got {max_timeout!r}")
        self._tools = _as_tools(tools)
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
            self._runtime = SubprocessRuntime(self._policy)
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
        namespace = self.namespace(context)
        validate_namespace(namespace)

        def on_output(stream: str, text: str) -> None:
            context.report({"stream": stream, "text": text})

        def on_tool_call(record: ToolCallRecord) -> None:
            context.report({"tool_call": record.to_dict()})

        result = await self.runtime.execute(
            code,
            namespace,
            timeout=limit,
            extra_globals=self._extra_globals,
            on_tool_call=on_tool_call,
            on_output=on_output,
        )
        text = result.render(self._max_result_chars)
        return ToolResult(ok=result.ok, output=result, error=None if result.ok else text, text=text)


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

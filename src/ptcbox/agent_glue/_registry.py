"""The :class:`ToolRegistry`: a named set of tools, their schemas and their execution."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ptcbox.agent_glue._context import ProgressSink, ToolContext
from ptcbox.agent_glue._messages import ToolCall
from ptcbox.agent_glue._scheduling import CallScheduler
from ptcbox.agent_glue._schemas import SchemaFormat, ToolDefinition
from ptcbox.agent_glue._tool import Tool
from ptcbox.agent_glue._tool_result import ToolResult
from ptcbox.projections import ToolProjection

__all__ = ["ToolRegistry", "Toolset"]


@runtime_checkable
class Toolset(Protocol):
    """What ``step`` needs from a set of tools (a :class:`ToolRegistry` is one)."""

    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The tools to offer the model."""
        ...

    def is_parallel_safe(self, name: str) -> bool:
        """Whether calls of ``name`` may overlap other parallel-safe calls."""
        ...

    async def execute(self, tool_call: ToolCall) -> ToolResult:
        """Run one call; never raises for what the model sent or the tool did."""
        ...


class ToolRegistry:
    """A set of tools with unique names.

    Args:
        tools: Tools, or plain functions (wrapped with ``Tool(fn)``).
        deps: Passed to every tool's :class:`ToolContext` as ``deps``.

    Raises:
        ValueError: If two tools share a name.
    """

    def __init__(
        self, tools: Iterable[Tool | Callable[..., Any]] = (), *, deps: Any = None
    ) -> None:
        self._tools: dict[str, Tool] = {}
        self.deps = deps
        for item in tools:
            self.register(item)

    # -- membership --------------------------------------------------------------------

    def register(self, item: Tool | Callable[..., Any], *, replace: bool = False) -> Tool:
        """Add a tool.

        Args:
            item: A :class:`Tool`, or a function to wrap in one.
            replace: Replace a tool of the same name instead of raising.

        Returns:
            The registered tool.

        Raises:
            ValueError: If the name is taken and ``replace`` is false.
        """
        registered = item if isinstance(item, Tool) else Tool(item)
        if registered.name in self._tools and not replace:
            raise ValueError(f"a tool named {registered.name!r} is already registered")
        self._tools[registered.name] = registered
        return registered

    def unregister(self, name: str) -> Tool:
        """Remove and return the tool called ``name``.

        Raises:
            KeyError: If there is no such tool.
        """
        try:
            return self._tools.pop(name)
        except KeyError:
            raise KeyError(f"no tool named {name!r}") from None

    def get(self, name: str) -> Tool | None:
        """Return the tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(tuple(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> tuple[str, ...]:
        """Tool names in registration order."""
        return tuple(self._tools)

    # -- what the model sees -----------------------------------------------------------

    def definitions(self) -> tuple[ToolDefinition, ...]:
        """Definitions of the tools a model may call directly (``code_only`` excluded)."""
        return tuple(t.definition for t in self._tools.values() if not t.code_only)

    def schemas(self, format: SchemaFormat = "openai") -> list[dict[str, Any]]:
        """Return the direct tools in one API's shape.

        Args:
            format: ``"openai"`` (Chat Completions ``tools``), ``"responses"`` (Responses
                API ``tools``) or ``"anthropic"`` (Messages API ``tools``).

        Returns:
            One dict per tool, in registration order.

        Raises:
            ValueError: If ``format`` is unknown.
        """
        return [definition.to_format(format) for definition in self.definitions()]

    def projections(self, parent: ToolContext | None = None) -> dict[str, ToolProjection]:
        """Return the namespace ``run_code`` exposes: every tool, validated.

        ``code_only`` tools are included; tools that cannot be called from code (a
        ``RunCodeTool`` registered here) are not.

        Args:
            parent: The ``run_code`` call's context (progress reports of tools that take
                a context are forwarded to it).

        Returns:
            Tool name to projection (a ``ValidatedProjection``: checks arguments with
            the tool's pydantic model, then calls it).
        """
        return {
            name: registered.projection(parent)
            for name, registered in self._tools.items()
            if registered.callable_in_code
        }

    # -- execution ---------------------------------------------------------------------

    def is_parallel_safe(self, name: str) -> bool:
        """Whether calls of ``name`` may overlap (unknown names: yes, they fail at once)."""
        found = self._tools.get(name)
        return True if found is None else found.is_parallel_safe

    async def execute(
        self,
        tool_call: ToolCall,
        *,
        sink: ProgressSink | None = None,
        context: ToolContext | None = None,
    ) -> ToolResult:
        """Run one tool call. Never raises for what the model sent or the tool did.

        Args:
            tool_call: The call (arguments as JSON text).
            sink: Receives progress reports of the tool (see :class:`ToolContext`).
            context: A prepared context for the call (else one is built).

        Returns:
            The result; an unknown tool, a ``code_only`` tool called directly, malformed
            arguments, an exception or a timeout give ``ok=False`` with an ``error`` that
            names the tool and what is expected.
        """
        found = self._tools.get(tool_call.name)
        if found is None:
            available = ", ".join(n for n, t in self._tools.items() if not t.code_only)
            error = f"unknown tool {tool_call.name!r}; available tools: {available or '(none)'}"
            return ToolResult.failure(error).with_call(tool_call.id, tool_call.name)
        if found.code_only:
            return ToolResult.failure(
                f"tool {found.name!r} can only be called from Python code inside run_code"
            ).with_call(tool_call.id, found.name)
        return await found.execute(
            tool_call.arguments,
            tool_call_id=tool_call.id,
            deps=self.deps,
            sink=sink,
            context=context,
        )

    async def execute_batch(self, tool_calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run several calls of one model turn; results in call order.

        Parallel-safe calls run concurrently; a call that is not parallel-safe runs
        alone, after every earlier call and before every later one (so a batch with such
        a call keeps strict source order around it). Cancelling the batch cancels every
        call and waits for them.

        Args:
            tool_calls: The calls, in the order the model made them.

        Returns:
            One result per call, in call order.
        """
        scheduler = CallScheduler()
        try:
            for call in tool_calls:
                scheduler.start(
                    _bind(self.execute, call), parallel_safe=self.is_parallel_safe(call.name)
                )
            return [await task for task in scheduler.tasks]
        finally:
            await scheduler.cancel_all()


def _bind(execute: Callable[[ToolCall], Any], call: ToolCall) -> Callable[[], Any]:
    return lambda: execute(call)


def as_registry(
    tools: ToolRegistry | Iterable[Tool | Callable[..., Any]] | Mapping[str, Any],
) -> ToolRegistry:
    """Return ``tools`` as a registry (a registry is returned as is)."""
    if isinstance(tools, ToolRegistry):
        return tools
    if isinstance(tools, Mapping):
        return ToolRegistry(tools.values())
    return ToolRegistry(tools)

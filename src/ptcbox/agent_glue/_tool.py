"""Tools: :class:`Tool`, the :func:`tool` decorator and argument parsing.

A tool is a Python function (sync or async) with a pydantic parameter model built from
its signature (``create_model`` with ``extra="forbid"``) and a description taken from
its Google/NumPy/reST docstring (``docstring_parser``). ``Tool.execute`` never raises
for what the model sent or what the tool did: every failure becomes a
``ToolResult(ok=False, error=...)`` written so that a model can correct itself.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar, overload

import anyio
import anyio.to_thread
import docstring_parser
from pydantic import ConfigDict, ValidationError, create_model

from ptcbox.agent_glue._arguments import ArgumentsError, parse_arguments
from ptcbox.agent_glue._context import ProgressSink, ToolContext
from ptcbox.agent_glue._introspect import check_name, describe, inspect_function, projection_doc
from ptcbox.agent_glue._schemas import ToolDefinition, clean_schema
from ptcbox.agent_glue._tool_result import ToolResult
from ptcbox.errors import ToolError
from ptcbox.projections import ToolProjection
from ptcbox.projections._stubs import format_signature
from ptcbox.projections._validated import (
    ValidatedProjection,
    describe_validation_error,
)

__all__ = ["Tool", "tool"]

_F = TypeVar("_F", bound=Callable[..., Any])


class Tool:
    """A function offered to a model (directly, or inside ``run_code``).

    Args:
        fn: The function. Sync functions run in a worker thread, async ones on the
            event loop. A parameter annotated :class:`ToolContext` receives the call's
            context and is not part of the schema.
        name: The name the model calls it by; default: ``fn.__name__``.
        description: What the tool does; default: the docstring's description.
        timeout: Longest a direct call may take, in seconds; ``None`` for no limit. A
            sync tool that times out keeps running in its thread (Python cannot stop
            it) but its result is discarded.
        is_parallel_safe: The tool may run concurrently with other parallel-safe calls.
        code_only: Offer the tool only inside ``run_code``, never as a direct tool.
        requires_approval: Calls of this tool from ``run_code`` always ask the
            ``RunCodeTool``'s ``approve=`` hook; without a hook they are denied.

    Raises:
        ValueError: If the name is not a valid tool name, or the function takes
            ``*args``, ``**kwargs`` or positional-only parameters.
        TypeError: If a parameter's annotation has no JSON schema.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        is_parallel_safe: bool = False,
        code_only: bool = False,
        requires_approval: bool = False,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"a tool needs a callable, got {type(fn).__name__}")
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", type(fn).__name__))
        check_name(self.name)
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
        self.timeout = timeout
        self.is_parallel_safe = is_parallel_safe
        self.code_only = code_only
        self.requires_approval = requires_approval
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - async callable objects
        )
        parsed = docstring_parser.parse(inspect.getdoc(fn) or "")
        self._description = description if description is not None else describe(parsed)
        self.context_parameter, self.signature, fields = inspect_function(fn, self.name, parsed)
        try:
            self.model = create_model(
                f"{self.name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
            )
            schema = self.model.model_json_schema(by_alias=True)
        except Exception as exc:
            raise TypeError(f"tool {self.name!r}: cannot build a JSON schema: {exc}") from exc
        self.parameters: dict[str, Any] = clean_schema(schema)
        self.doc = projection_doc(self._description, parsed, self.signature)
        self._default_projection: ToolProjection | None = None

    callable_in_code: ClassVar[bool] = True
    """Whether ``ToolRegistry.projections`` exposes the tool inside ``run_code``."""

    @property
    def description(self) -> str:
        """What the tool does, as the model reads it."""
        return self._description

    @property
    def definition(self) -> ToolDefinition:
        """The provider-neutral definition: name, description, JSON schema."""
        return ToolDefinition(self.name, self.description, self.parameters)

    @property
    def signature_text(self) -> str:
        """The call signature, e.g. ``get_expenses(employee_id: str, quarter: str)``."""
        return format_signature(self.name, self.signature)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the tool like a function: arguments validated, context injected.

        This makes a :class:`Tool` a :class:`~ptcbox.projections.ToolProjection` too
        (``ptcbox.execute(code, tools=[my_tool])`` works). Positional arguments are bound
        by the tool's signature; a tool that takes a context gets one whose reports go
        nowhere; an async tool returns a coroutine. Use :attr:`fn` for the raw function.

        Raises:
            TypeError: If the arguments do not fit (the message names the signature).
        """
        if args:
            try:
                kwargs = dict(self.signature.bind(*args, **kwargs).arguments)
            except TypeError as exc:
                raise TypeError(f"{self.signature_text}: {exc}") from None
        if self._default_projection is None:
            self._default_projection = self.projection()
        return self._default_projection(**kwargs)

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, fn={self.fn!r})"

    def projection(self, parent: ToolContext | None = None) -> ToolProjection:
        """Return the projection that exposes this tool inside ``run_code``.

        Args:
            parent: The ``run_code`` call's context; the tool's own context (when it
                takes one) is a child of it, so its progress reports reach the agent.

        Returns:
            A ``ValidatedProjection`` (checks arguments with :attr:`model`, injects
            the context, unwraps a returned :class:`ToolResult`).
        """

        def make_context() -> ToolContext:
            if parent is not None:
                return parent.child(self.name)
            return ToolContext("", self.name)

        return ValidatedProjection(
            self.name,
            self.fn,
            model=self.model,
            signature=self.signature,
            doc=self.doc,
            context_parameter=self.context_parameter,
            context_factory=make_context if self.context_parameter else None,
            result_adapter=functools.partial(_unwrap, self.name),
        )

    async def execute(
        self,
        arguments: str | Mapping[str, Any] | None,
        *,
        tool_call_id: str = "",
        deps: Any = None,
        sink: ProgressSink | None = None,
        context: ToolContext | None = None,
    ) -> ToolResult:
        """Validate the arguments, run the tool and return its result. Never raises.

        Args:
            arguments: JSON text as the model sent it, or an already decoded mapping.
                ``None`` and ``""`` mean no arguments.
            tool_call_id: The model's call id, copied into the result.
            deps: Passed to the tool's context as ``deps``.
            sink: Receives the tool's progress reports (``context.report``).
            context: Use this context instead of building one.

        Returns:
            The result; failures (bad JSON, invalid arguments, an exception, a timeout)
            are ``ok=False`` with an ``error`` for the model.

        Raises:
            Cancellation propagates (after the tool's context is closed).
        """
        started = time.perf_counter()
        try:
            values = self.validate(arguments)
        except (ArgumentsError, TypeError) as exc:
            return ToolResult.failure(str(exc)).with_call(tool_call_id, self.name)
        if self.context_parameter is not None:
            if context is None:
                context = ToolContext(tool_call_id, self.name, deps=deps, sink=sink)
            values[self.context_parameter] = context
        try:
            timed_out, outcome = await self._invoke(values)
            if timed_out:
                outcome = ToolResult.failure(
                    f"tool {self.name!r} timed out after {self.timeout:g} s; try a smaller request"
                )
        except ToolError as exc:
            outcome = ToolResult.failure(f"tool {self.name!r} failed: {exc.message}")
        except Exception as exc:
            outcome = ToolResult.failure(
                f"tool {self.name!r} raised {type(exc).__name__}: {exc}".rstrip(": ")
            )
        finally:
            if context is not None:
                context.close()
        if not isinstance(outcome, ToolResult):
            outcome = ToolResult.success(outcome)
        return outcome.with_call(tool_call_id, self.name, time.perf_counter() - started)

    def validate(self, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
        """Parse and validate arguments; return the values the function receives.

        Raises:
            ArgumentsError: If ``arguments`` is not one JSON object.
            TypeError: If the object does not fit the parameters (message for the model).
        """
        data = parse_arguments(arguments, tool_name=self.name, expected=self.signature_text)
        try:
            instance = self.model.model_validate(data)
        except ValidationError as exc:
            given = arguments if isinstance(arguments, str) else data
            raise TypeError(
                describe_validation_error(self.name, self.signature, exc, given)
            ) from None
        return {
            info.alias or field_name: getattr(instance, field_name)
            for field_name, info in self.model.model_fields.items()
        }

    async def _invoke(self, values: dict[str, Any]) -> tuple[bool, Any]:
        result: Any = None
        with anyio.move_on_after(self.timeout) as scope:
            if self.is_async:
                result = await self.fn(**values)
            else:
                result = await anyio.to_thread.run_sync(
                    functools.partial(self.fn, **values), abandon_on_cancel=True
                )
        return scope.cancelled_caught, result


@overload
def tool(fn: _F, /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    is_parallel_safe: bool = False,
    code_only: bool = False,
    requires_approval: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    is_parallel_safe: bool = False,
    code_only: bool = False,
    requires_approval: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function into a :class:`Tool`; usable bare (``@tool``) or with options.

    Example:
        >>> @tool(is_parallel_safe=True)
        ... def get_budget(department: str) -> float:
        ...     '''Return the quarterly budget of a department, in dollars.'''
        ...     return 10_000.0
        >>> get_budget.name, get_budget.parameters["required"]
        ('get_budget', ['department'])

    Args:
        fn: The function (when used bare).
        name: See :class:`Tool`.
        description: See :class:`Tool`.
        timeout: See :class:`Tool` (seconds).
        is_parallel_safe: See :class:`Tool`.
        code_only: See :class:`Tool`.
        requires_approval: See :class:`Tool`.

    Returns:
        The tool, or a decorator that makes one.
    """

    def make(function: Callable[..., Any]) -> Tool:
        return Tool(
            function,
            name=name,
            description=description,
            timeout=timeout,
            is_parallel_safe=is_parallel_safe,
            code_only=code_only,
            requires_approval=requires_approval,
        )

    return make(fn) if fn is not None else make


def _unwrap(tool_name: str, value: Any) -> Any:
    if isinstance(value, ToolResult):
        if not value.ok:
            raise ToolError(tool_name, value.error or "the tool failed")
        return value.output
    return value

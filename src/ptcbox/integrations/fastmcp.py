"""ptcbox as the sandbox of FastMCP's ``CodeMode`` transform (extra ``fastmcp``).

FastMCP's ``CodeMode`` collapses a server's tools into discovery tools plus one
``execute`` tool, and runs the model's code through a ``SandboxProvider`` (by default
``MontySandboxProvider``, on pydantic-monty). :class:`PtcboxSandboxProvider` implements
that protocol (``async run(code, *, inputs, external_functions)``) on real CPython with a
ptcbox runtime, so switching is one line::

    from fastmcp.experimental.transforms.code_mode import CodeMode
    from ptcbox.integrations.fastmcp import PtcboxSandboxProvider

    mcp.add_transform(CodeMode(sandbox_provider=PtcboxSandboxProvider()))

The code keeps the shape ``CodeMode`` tells models to write: ``await call_tool(name,
params)`` calls, and a top-level ``return`` (or a final expression) produces the result.
``inputs`` become globals; ``external_functions`` become tools. A failure (an exception,
a timeout, a policy violation) raises FastMCP's ``ToolError`` with ptcbox's rendered
result, which FastMCP sends back as an ``is_error`` result the model can act on.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any, Literal

from fastmcp.exceptions import ToolError

from ptcbox._result import CodeResult
from ptcbox.projections import DirectProjection, ToolProjection
from ptcbox.runtimes import CodeRuntime, SubprocessRuntime, ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

__all__ = ["PtcboxSandboxProvider", "with_top_level_return"]

_MAIN = "ptcbox_main"


class PtcboxSandboxProvider:
    """A FastMCP ``SandboxProvider`` that runs code with ptcbox.

    Args:
        runtime: ``"subprocess"`` (default: process isolation, OS limits), ``"thread"``
            (in-process, fastest), or a runtime instance (never closed by this provider).
        policy: Sandbox policy of a runtime this provider creates.
        timeout: Wall-clock limit of one run, in seconds; ``None`` for the policy default.
        max_result_chars: Longest error text sent back (head and tail kept).

    Raises:
        ValueError: If ``policy`` is given with a runtime instance, or ``runtime`` is an
            unknown name.
    """

    def __init__(
        self,
        runtime: Literal["thread", "subprocess"] | CodeRuntime = "subprocess",
        *,
        policy: SandboxPolicy | None = None,
        timeout: float | None = None,
        max_result_chars: int = 8000,
    ) -> None:
        if isinstance(runtime, str):
            if runtime not in ("thread", "subprocess"):
                raise ValueError(f"runtime must be 'thread' or 'subprocess', got {runtime!r}")
            self._kind: str | None = runtime
            self._runtime: CodeRuntime | None = None
        else:
            if policy is not None:
                raise ValueError("pass the policy to the runtime you give, not to the provider")
            self._kind, self._runtime = None, runtime
        self._policy = policy
        self.timeout = timeout
        self._max_result_chars = max_result_chars

    @property
    def runtime(self) -> CodeRuntime:
        """The runtime (one this provider creates is made on first use)."""
        if self._runtime is None:
            make = ThreadRuntime if self._kind == "thread" else SubprocessRuntime
            self._runtime = make(self._policy)
        return self._runtime

    async def aclose(self) -> None:
        """Close the runtime if this provider created it."""
        runtime = self._runtime
        if self._kind is not None and runtime is not None:
            self._runtime = None
            await runtime.aclose()  # type: ignore[attr-defined]

    async def run(
        self,
        code: str,
        *,
        inputs: dict[str, Any] | None = None,
        external_functions: dict[str, Callable[..., Any]] | None = None,
    ) -> Any:
        """Run ``code`` and return its result (the ``SandboxProvider`` protocol).

        Args:
            code: Model-written Python; may ``await`` the external functions and
                ``return`` at top level.
            inputs: Names to define for the code (JSON-compatible values).
            external_functions: Name to (sync or async) function the code may call,
                e.g. ``{"call_tool": ...}``.

        Returns:
            The returned (or final-expression) value; when the code also printed, the
            printed text instead if there is no value, else ``{"value": ..., "stdout": ...}``.

        Raises:
            fastmcp.exceptions.ToolError: The code failed; the message is
                ``CodeResult.render()`` (traceback, output so far).
        """
        namespace: dict[str, ToolProjection] = {
            name: DirectProjection(name=name, fn=fn)
            for name, fn in (external_functions or {}).items()
        }
        result = await self.runtime.execute(
            with_top_level_return(code),
            namespace,
            timeout=self.timeout,
            extra_globals=inputs or None,
        )
        return self._outcome(result)

    def _outcome(self, result: CodeResult) -> Any:
        if not result.ok:
            raise ToolError(result.render(self._max_result_chars))
        if not result.stdout:
            return result.value
        if result.value is None:
            return result.stdout
        return {"value": result.value, "stdout": result.stdout}


def with_top_level_return(code: str) -> str:
    """Let ``return`` end a snippet, as ``CodeMode`` (and Monty) allow.

    Code with a ``return`` outside any function becomes the body of
    ``async def ptcbox_main()`` followed by ``await ptcbox_main()`` as its final
    expression; other code is returned unchanged (a syntax error is left for the
    runtime to report with its usual message).

    Args:
        code: Python source.

    Returns:
        Source that CPython compiles.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    if not any(isinstance(node, ast.Return) for node in _outside_functions(tree.body)):
        return code
    main = ast.AsyncFunctionDef(
        name=_MAIN,
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=tree.body,
        decorator_list=[],
        returns=None,
    )
    call = ast.Expr(ast.Await(ast.Call(ast.Name(_MAIN, ast.Load()), [], [])))
    module = ast.Module(body=[main, call], type_ignores=[])
    return ast.unparse(ast.fix_missing_locations(module))


def _outside_functions(body: list[ast.stmt]) -> Iterator[ast.AST]:
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))

"""Approvals for the tool calls a snippet makes: :class:`ApprovalRequest`, decisions, hook.

A ``RunCodeTool(approve=hook)`` consults ``hook`` before each tool call the code makes
(and ``Tool(requires_approval=True)`` tools are denied when there is no hook). The hook,
sync or async, answers with a decision: allow (``True``, ``None`` or :class:`Approve`),
allow with edited arguments (``Approve(arguments=...)``), or deny (``False`` or
:class:`Deny` with a reason). A denied call raises ``PermissionError`` with the reason
inside the snippet (a ``ToolError`` too, so ``except PermissionError:`` and
``except ToolError:`` both work); its ``ToolCallRecord`` and trace span show the failed
call. A hook that raises, answers nonsense or takes longer than ``approval_timeout``
denies, with a reason saying which. Sync hooks run in a worker thread, so one that
blocks (a console prompt) does not stall the event loop.

The time a call waits for its decision does not count against the snippet's timeout:
both runtimes pause the execution's clock while at least one decision is pending (see
:mod:`ptcbox.runtimes._shared._clock`); the wait is bounded by ``approval_timeout``
instead. Allowed with edited arguments, the call's ``ToolCallRecord`` shows the
arguments the tool got, and the snippet's own as ``requested_arguments``.

Design source: the OpenAI Agents SDK's ``needs_approval`` and pydantic-ai's deferred
tool approvals, applied per nested call.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import anyio
import anyio.to_thread

from ptcbox._jsonable import to_jsonable
from ptcbox.agent_glue._events import BeforeToolCall, BlockToolCall
from ptcbox.agent_glue._messages import ToolCall
from ptcbox.projections import ToolProjection, binder_for
from ptcbox.runtimes._shared._clock import CallScope, current_call

__all__ = [
    "ApprovalDecision",
    "ApprovalHook",
    "ApprovalRequest",
    "Approve",
    "ApprovingProjection",
    "Deny",
    "approval_from_hook",
    "decide",
]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A tool call the code is about to make, waiting for a decision.

    Attributes:
        tool_name: The tool's name.
        arguments: The keyword arguments it is called with (positional ones bound).
        run_code_call_id: The id of the ``run_code`` call whose code makes the call
            (``""`` outside a model turn).
        number: Position of this call among the execution's calls that asked, from 1.
    """

    tool_name: str
    arguments: Mapping[str, Any]
    run_code_call_id: str = ""
    number: int = 1


@dataclass(frozen=True, slots=True)
class Approve:
    """Allow the call, optionally with edited arguments.

    Attributes:
        arguments: Replacement keyword arguments (validated by the tool like the
            originals), or ``None`` to keep them.
    """

    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse the call; the snippet gets ``PermissionError`` with ``reason``.

    Attributes:
        reason: Why, written for the model that wrote the code.
    """

    reason: str = "denied by the approval hook"


ApprovalDecision: TypeAlias = Approve | Deny | bool | None
"""What an approval hook returns: ``True``/``None``/:class:`Approve` allow, ``False`` or
:class:`Deny` refuse."""

ApprovalHook: TypeAlias = Callable[
    [ApprovalRequest], "ApprovalDecision | Awaitable[ApprovalDecision]"
]
"""``approve(request)``, sync or async, returning an :data:`ApprovalDecision`."""


async def decide(
    hook: ApprovalHook | None, request: ApprovalRequest, timeout: float
) -> Approve | Deny:
    """Ask ``hook`` about ``request``; never raises for what the hook does.

    Args:
        hook: The hook, or ``None`` (the call is denied: it requires approval).
        request: The call.
        timeout: Longest wait for the decision, in seconds.

    Returns:
        :class:`Approve` or :class:`Deny` (a hook that raises, hangs or answers
        something else denies, with a reason naming what happened).
    """
    if hook is None:
        return Deny(
            f"tool {request.tool_name!r} requires approval and no approval hook is set "
            "(pass approve= to RunCodeTool)"
        )
    try:
        with anyio.fail_after(timeout):
            if inspect.iscoroutinefunction(hook):
                decision: Any = await hook(request)
            else:
                decision = await anyio.to_thread.run_sync(hook, request, abandon_on_cancel=True)
                if inspect.isawaitable(decision):
                    decision = await decision
    except TimeoutError:
        return Deny(f"no approval decision within {timeout:g} s, so the call was not made")
    except Exception as exc:
        return Deny(
            f"the approval hook failed ({type(exc).__name__}: {exc}), so the call was not made"
        )
    if decision is None or decision is True:
        return Approve()
    if decision is False:
        return Deny()
    if isinstance(decision, Approve | Deny):
        return decision
    return Deny(
        f"the approval hook returned {type(decision).__name__}, not a decision "
        "(True, False, None, Approve or Deny), so the call was not made"
    )


def approval_from_hook(before_tool_call: BeforeToolCall) -> ApprovalHook:
    """Let an agent's ``before_tool_call`` hook see (and block or edit) nested calls too.

    ``RunCodeTool(tools, approve=approval_from_hook(hook))`` gives ``hook`` each call the
    code makes as a :class:`ToolCall` with id ``"<run_code call id>.<n>"`` and the
    arguments as JSON; a :class:`BlockToolCall` denies it with its reason, a returned
    ``ToolCall`` allows it with that call's arguments, ``None`` allows it unchanged.

    Args:
        before_tool_call: The agent hook (sync or async).

    Returns:
        An async approval hook.
    """

    async def approve(request: ApprovalRequest) -> Approve | Deny:
        call = ToolCall(
            f"{request.run_code_call_id}.{request.number}",
            request.tool_name,
            json.dumps(to_jsonable(dict(request.arguments)), ensure_ascii=False),
        )
        decision: Any = before_tool_call(call)
        if inspect.isawaitable(decision):
            decision = await decision
        if isinstance(decision, BlockToolCall):
            return Deny(decision.reason)
        if isinstance(decision, ToolCall):
            arguments = json.loads(decision.arguments or "{}")
            if not isinstance(arguments, dict):
                return Deny("the before_tool_call hook rewrote the arguments to a non-object")
            return Approve(arguments=arguments)
        return Approve()

    return approve


class ApprovingProjection:
    """A projection that asks for approval before it calls the one it wraps.

    Always async (``is_async``), so the runtime calls it on the host's event loop,
    where the hook is awaited; a sync wrapped tool then runs in a worker thread, as the
    runtime would run it. The wrapped projection's signature is kept for binding. It
    asks for the call's scope (``call_scope``): while the decision is pending the
    execution's clock is paused, and edited arguments reach the call's record.

    Args:
        projection: The tool as the code would call it.
        hook: The approval hook (``None``: every call is denied).
        timeout: Longest wait for a decision, in seconds.
        run_code_call_id: Passed on in each :class:`ApprovalRequest`.
        counter: Shared by one execution's projections, numbers the requests.
    """

    __slots__ = ("_counter", "_hook", "_projection", "_sync", "_timeout", "call_id", "signature")
    is_async = True
    call_scope = True

    def __init__(
        self,
        projection: ToolProjection,
        hook: ApprovalHook | None,
        timeout: float,
        run_code_call_id: str = "",
        counter: Any = None,
    ) -> None:
        self._projection = projection
        self._hook = hook
        self._timeout = timeout
        self.call_id = run_code_call_id
        self._counter = counter if counter is not None else itertools.count(1)
        self.signature = binder_for(projection).signature
        flag = getattr(projection, "is_async", None)
        self._sync = not (flag is True or inspect.iscoroutinefunction(projection))

    @property
    def name(self) -> str:
        """The wrapped tool's name."""
        return self._projection.name

    @property
    def doc(self) -> str | None:
        """The wrapped tool's documentation."""
        return self._projection.doc

    def __call__(self, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        """Ask for approval, then call the wrapped tool (or raise ``PermissionError``).

        Returns a coroutine; the call's scope is taken now, in the context the runtime
        calls this in (the coroutine may run in another).
        """
        return self._call(current_call(), kwargs)

    async def _call(self, scope: CallScope | None, kwargs: dict[str, Any]) -> Any:
        request = ApprovalRequest(self.name, dict(kwargs), self.call_id, next(self._counter))
        if scope is None:  # a runtime without scopes: the wait counts
            decision = await decide(self._hook, request, self._timeout)
        else:
            with scope.deadline.pausing():
                decision = await decide(self._hook, request, self._timeout)
        if isinstance(decision, Deny):
            raise PermissionError(f"the call to {self.name} was denied: {decision.reason}")
        arguments = kwargs
        if decision.arguments is not None:
            arguments = dict(decision.arguments)
            if scope is not None and arguments != kwargs:
                scope.replace_arguments(arguments)
        if self._sync:
            result = await anyio.to_thread.run_sync(
                functools.partial(self._projection, **arguments), abandon_on_cancel=True
            )
        else:
            result = self._projection(**arguments)
        if inspect.isawaitable(result):
            result = await result
        return result

"""Modern asyncio (TaskGroup, timeout, timeout_at, get_running_loop ...) is allowed; its
objects still lead nowhere near the event loop, other tasks, coroutines or frames.

Each attack follows ``_proof``: a positive control in a child Python under the default
policy with only its guard switched off (the attribute guard, or the module views for
the loop view's and the module's missing functions), where the thing is handed out, and
the exact refusal under the default policy (error type, the guard's message, on the
targeted line of ``main``).
"""

from __future__ import annotations

from typing import Any

import pytest

from ._proof import Attack, assert_control, assert_refused, by_id
from .conftest import TOOLS

pytestmark = pytest.mark.anyio

_LOOP_REASON = " (it leads to the event loop, coroutines or frames)"


def _main(body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return f"import asyncio\nasync def main():\n{lines}asyncio.run(main())\n"


# id: (body of main, line of the snippet refused, error type, end of the error, what the
# control shows)
_CASES: dict[str, tuple[str, int, str, str, str]] = {
    "loop_view_private_loop": (
        "loop = asyncio.get_running_loop()\nprint(getattr(loop, '_lo' + 'op', loop))",
        4,
        "PolicyViolation",
        "access to attribute '_loop' of 'RunningLoop' object is not allowed" + _LOOP_REASON,
        "<_SnippetLoop running=True",
    ),
    "loop_view_executor": (
        # reaching the method is the route (calling it needs a thread, which a worker
        # dropped to an unprivileged user cannot start: a different wall)
        "loop = asyncio.get_running_loop()\nprint('executor', callable(loop.run_in_executor))",
        4,
        "AttributeError",
        "loop.run_in_executor is not available in the sandbox (it reaches threads, "
        "processes, sockets or other tasks); the loop offers time, is_running, is_closed, "
        "create_task",
        "executor True",
    ),
    "taskgroup_loop": (
        "async with asyncio.TaskGroup() as tg:\n    pass\nprint(getattr(tg, '_lo' + 'op'))",
        5,
        "PolicyViolation",
        "access to attribute '_loop' of 'TaskGroup' object is not allowed" + _LOOP_REASON,
        "<_SnippetLoop running=True",
    ),
    "taskgroup_parent_task": (
        "async with asyncio.TaskGroup() as tg:\n    pass\nprint(getattr(tg, '_parent_' + 'task'))",
        5,
        "PolicyViolation",
        "access to private attribute '_parent_task' of 'TaskGroup' object is not allowed; "
        "private attributes are only accessible on the snippet's own classes and objects",
        "<Task pending",
    ),
    "task_coro_frame": (
        "t = asyncio.create_task(asyncio.sleep(0.01))\n"
        "print(getattr(getattr(t, 'get_' + 'coro')(), 'cr_' + 'frame'))\nawait t",
        4,
        "PolicyViolation",
        "access to attribute 'get_coro' of 'Task' object is not allowed" + _LOOP_REASON,
        "<frame",
    ),
    "timeout_task": (
        "async with asyncio.timeout(5) as cm:\n    print(getattr(cm, '_ta' + 'sk'))",
        4,
        "PolicyViolation",
        "access to private attribute '_task' of 'Timeout' object is not allowed; private "
        "attributes are only accessible on the snippet's own classes and objects",
        "<Task pending",
    ),
    "shield_future_loop": (
        "f = asyncio.shield(asyncio.sleep(0))\nprint(getattr(f, 'get_' + 'loop')())\nawait f",
        4,
        "PolicyViolation",
        "access to attribute 'get_loop' of 'Future' object is not allowed" + _LOOP_REASON,
        "<_SnippetLoop running=True",
    ),
    "all_tasks": (
        "print('tasks', len(asyncio.all_tasks()))",
        3,
        "AttributeError",
        "asyncio.all_tasks is not available in the sandbox: not exposed in the sandbox: it "
        "reaches the event loop, threads, subprocesses or sockets",
        "tasks 1",
    ),
}


_GUARD = {"loop_view_executor": "module_views", "all_tasks": "module_views"}
ATTACKS = by_id(
    Attack(
        id=name,
        code=_main(body),
        line=line,
        error_type=error_type,
        message=message,
        guard=_GUARD.get(name, "attribute"),
        marker=leaked,
    )
    for name, (body, line, error_type, message, leaked) in _CASES.items()
)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
async def test_asyncio_attack_proves_its_guard(runtime: Any, attack: str) -> None:
    proof = ATTACKS[attack]
    assert_control(proof, ATTACKS.values())  # the real asyncio hands it out
    result = await runtime.execute(proof.code, TOOLS, timeout=30)
    assert_refused(proof, result)
    assert result.error is not None
    assert f'File "<snippet>", line {proof.line}, in main' in result.error, result.error
    assert result.error.rstrip().endswith(f"{proof.error_type}: {proof.message}"), result.error
    assert result.stdout == ""

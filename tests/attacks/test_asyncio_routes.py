"""Modern asyncio (TaskGroup, timeout, timeout_at, get_running_loop ...) is allowed; its
objects still lead nowhere near the event loop, other tasks, coroutines or frames.

Each attack: a positive control under ``SandboxPolicy.trusted()`` (the real asyncio
hands the thing out), then the exact refusal under the default policy (error type, the
guard's message, on the targeted line of ``main``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ptcbox.sandbox import SandboxPolicy

from .conftest import TOOLS

pytestmark = pytest.mark.anyio

_LOOP_REASON = " (it leads to the event loop, coroutines or frames)"


def _main(body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return f"import asyncio\nasync def main():\n{lines}asyncio.run(main())\n"


# id: (body of main, line of the snippet refused, error type, end of the error, control)
ATTACKS: dict[str, tuple[str, int, str, str, str]] = {
    "loop_view_private_loop": (
        "loop = asyncio.get_running_loop()\nprint(getattr(loop, '_lo' + 'op', loop))",
        4,
        "PolicyViolation",
        "access to attribute '_loop' of 'RunningLoop' object is not allowed" + _LOOP_REASON,
        "EventLoop",
    ),
    "loop_view_executor": (
        # reaching the method is the route (calling it needs a thread, which a worker
        # dropped to an unprivileged user cannot start: a different wall)
        "loop = asyncio.get_running_loop()\nprint(3 if callable(loop.run_in_executor) else 0)",
        4,
        "AttributeError",
        "loop.run_in_executor is not available in the sandbox (it reaches threads, "
        "processes, sockets or other tasks); the loop offers time, is_running, is_closed, "
        "create_task",
        "3",
    ),
    "taskgroup_loop": (
        "async with asyncio.TaskGroup() as tg:\n    pass\nprint(getattr(tg, '_lo' + 'op'))",
        5,
        "PolicyViolation",
        "access to attribute '_loop' of 'TaskGroup' object is not allowed" + _LOOP_REASON,
        "EventLoop",
    ),
    "taskgroup_parent_task": (
        "async with asyncio.TaskGroup() as tg:\n    pass\nprint(getattr(tg, '_parent_' + 'task'))",
        5,
        "PolicyViolation",
        "access to private attribute '_parent_task' of 'TaskGroup' object is not allowed; "
        "private attributes are only accessible on the snippet's own classes and objects",
        "Task",
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
        "Task",
    ),
    "shield_future_loop": (
        "f = asyncio.shield(asyncio.sleep(0))\nprint(getattr(f, 'get_' + 'loop')())\nawait f",
        4,
        "PolicyViolation",
        "access to attribute 'get_loop' of 'Future' object is not allowed" + _LOOP_REASON,
        "EventLoop",
    ),
    "all_tasks": (
        "print(len(asyncio.all_tasks()))",
        3,
        "AttributeError",
        "asyncio.all_tasks is not available in the sandbox: not exposed in the sandbox: it "
        "reaches the event loop, threads, subprocesses or sockets",
        "1",
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
async def test_asyncio_attack_proves_its_guard(
    make_runtime: Callable[..., Any], attack: str
) -> None:
    body, line, error_type, message, leaked = ATTACKS[attack]
    code = _main(body)
    trusted = await make_runtime(SandboxPolicy.trusted()).execute(code, TOOLS, timeout=30)
    assert leaked in trusted.stdout, trusted  # the real asyncio hands it out
    result = await make_runtime().execute(code, TOOLS, timeout=30)
    assert result.error_type == error_type, result
    assert result.error is not None
    assert f'File "<snippet>", line {line}, in main' in result.error, result.error
    assert result.error.rstrip().endswith(f"{error_type}: {message}"), result.error
    assert result.stdout == ""

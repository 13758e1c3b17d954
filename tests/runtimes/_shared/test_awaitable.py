"""Tool calls inside running asyncio code (``runtimes/_shared/_awaitable.py``), per runtime.

A tool call in async code returns an :class:`AwaitableToolCall`: awaiting it gives the
value; any other use raises a ``TypeError`` that says to write ``await tool(...)``. The
call starts at once, so a call never awaited still runs, is in the trace and is noted
on stderr; no ``RuntimeWarning`` or path of ptcbox reaches the result.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ptcbox import CodeResult, DirectProjection

pytestmark = pytest.mark.anyio

HOST_PATHS = ("/work", "site-packages", "ptcbox/", '.py"', ".py:")
HINT = "write `await get_user(...)` (or gather several with `await asyncio.gather(...)`)"
TRAP = "get_user(...) was called inside async code, where tool calls return awaitables: "

calls: list[str] = []


def get_user(id: str) -> dict[str, str]:
    """Look a user up."""
    calls.append(id)
    return {"id": id, "name": f"name-{id}"}


def list_users() -> list[dict[str, str]]:
    """All users."""
    return [get_user("u1"), get_user("u2")]


async def notify(text: str) -> str:
    """An async tool with a side effect."""
    await asyncio.sleep(0.05)
    calls.append(text)
    return "sent"


def broken() -> None:
    """Always fails."""
    raise RuntimeError("backend down")


NAMESPACE = {
    fn.__name__: DirectProjection(fn.__name__, fn) for fn in (get_user, list_users, notify, broken)
}


async def run(runtime: Any, code: str) -> CodeResult:
    calls.clear()
    result: CodeResult = await runtime.execute(code, NAMESPACE, timeout=20)
    json.dumps(result.to_dict())
    for text in (result.stdout, result.stderr, result.error or ""):
        for marker in HOST_PATHS:
            assert marker not in text, f"host path {marker!r} leaked into: {text}"
        assert "RuntimeWarning" not in text and "never awaited" not in text, text
    return result


@pytest.mark.parametrize(
    ("misuse", "action"),
    [
        ('u["name"]', "subscripting it"),
        ("for x in u:\n    pass", "iterating over it"),
        ("u.get('name')", "reading its attribute 'get'"),
        ("len(u)", "taking its len()"),
        ("if u:\n    pass", "testing its truth value"),
        ("print(u)", "converting it to text"),
        ('f"{u:>5}"', "formatting it"),
        ("u == {}", "comparing it"),
        ("u < 1", "computing with it"),
        ("u + 1", "computing with it"),
        ("'name' in u", "testing membership in it"),
        ("u['name'] = 1", "assigning items of it"),
        ("get_user(id=u)", "passing it to get_user(...)"),
    ],
)
async def test_misusing_an_unawaited_call_says_to_await_it(
    runtime: Any, misuse: str, action: str
) -> None:
    code = f"import asyncio\nu = get_user(id='u1')\nawait asyncio.sleep(0)\n{misuse}"
    result = await run(runtime, code)
    assert result.error_type == "TypeError", result.error
    assert result.error is not None
    assert f"{TRAP}{HINT} before {action}" in result.error
    assert "coroutine" not in result.error
    # The call started at once and finished: the trace says so; no note for a misuse.
    assert [(c.name, c.ok) for c in result.tool_calls] == [("get_user", True)]
    assert "note:" not in result.stderr


async def test_misuse_inside_a_coroutine_run_by_asyncio_run(runtime: Any) -> None:
    """The reported trap: iterating a tool call's result in a coroutine."""
    code = (
        "import asyncio\n"
        "async def main():\n"
        "    for u in list_users():\n"
        "        print(u['name'])\n"
        "asyncio.run(main())\n"
    )
    result = await run(runtime, code)
    assert result.error_type == "TypeError"
    assert result.error is not None and "write `await list_users(...)`" in result.error
    assert "line 3, in main" in result.error
    assert [(c.name, c.ok) for c in result.tool_calls] == [("list_users", True)]


async def test_awaited_calls_gather_and_create_task_return_values(runtime: Any) -> None:
    code = (
        "import asyncio\n"
        "one = await get_user(id='a')\n"
        "two, three = await asyncio.gather(get_user(id='b'), get_user(id='c'))\n"
        "task = asyncio.create_task(get_user(id='d'))\n"
        "four = await asyncio.wait_for(get_user(id='e'), 10)\n"
        "[one['name'], two['name'], three['name'], (await task)['name'], four['name']]"
    )
    result = await run(runtime, code)
    assert result.ok, result.error
    assert result.value == ["name-a", "name-b", "name-c", "name-d", "name-e"]
    assert [c.arguments["id"] for c in result.tool_calls] == list("abcde")
    assert result.stderr == ""


async def test_a_call_never_awaited_still_runs_and_is_noted(runtime: Any) -> None:
    """Eager start: the side effect happens before the execution ends, and the model is
    told on stderr that the call lacked ``await``."""
    code = "import asyncio\nawait asyncio.sleep(0)\nnotify(text='hello')\nprint('done')"
    result = await run(runtime, code)
    assert result.ok, result.error
    assert result.stdout == "done\n"
    assert calls == ["hello"]
    assert [(c.name, c.ok) for c in result.tool_calls] == [("notify", True)]
    assert result.tool_calls[0].duration_s >= 0.04
    assert "note: notify(...) was called without `await` in async code" in result.stderr
    assert "write `await notify(...)`" in result.stderr
    await asyncio.sleep(0)


async def test_a_failing_call_never_awaited_is_noted_with_its_error(runtime: Any) -> None:
    result = await run(runtime, "import asyncio\nbroken()\nawait asyncio.sleep(0.01)")
    assert result.ok, result.error
    assert [(c.name, c.ok) for c in result.tool_calls] == [("broken", False)]
    assert "broken(...) was called without `await`" in result.stderr
    assert "backend down" in result.stderr


async def test_an_unawaited_call_as_the_trailing_value_is_an_error(runtime: Any) -> None:
    result = await run(runtime, "import asyncio\nawait asyncio.sleep(0)\nget_user(id='z')")
    assert result.error_type == "TypeError"
    assert result.error is not None and HINT in result.error
    assert result.value is None
    assert [(c.name, c.ok) for c in result.tool_calls] == [("get_user", True)]


async def test_sync_code_still_gets_values(runtime: Any) -> None:
    result = await run(runtime, "u = get_user(id='s')\nu['name']")
    assert result.ok, result.error
    assert result.value == "name-s"

"""The host's pre-flight check of a new snippet runs while the worker compiles it.

The check (``runtimes/_shared/_preflight.py``) parses the snippet, as the worker does
to compile it, so for a snippet the host has not seen the two run at once: the ``run``
frame is sent first and the check runs before anything the worker sends is read. A
refusal must still come before any tool runs, however early the worker calls one, and
the worker that started the snippet is never used again.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.runtimes.subprocess import _runtime
from runtimes._leaks import no_leaks

pytestmark = pytest.mark.anyio

_BAD = 'send_email(to="ops@example.com", subject="hi")\nprint("after")\nget_weather(town="Oslo")\n'


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _tools(sent: list[str]) -> dict[str, DirectProjection]:
    def send_email(to: str, subject: str) -> str:
        """A side effect the check must prevent."""
        sent.append(to)
        return "sent"

    def get_weather(city: str) -> dict[str, Any]:
        """Weather in a city."""
        return {"city": city}

    return {f.__name__: DirectProjection(f.__name__, f) for f in (send_email, get_weather)}


@pytest.mark.parametrize("uses", [1, 50], ids=["fresh", "reuse"])
async def test_a_slow_check_still_refuses_before_the_first_call_is_served(
    monkeypatch: pytest.MonkeyPatch, uses: int
) -> None:
    checked: list[float] = []
    real = _runtime.preflight

    def slow_check(*args: Any) -> Any:
        time.sleep(0.3)  # the worker has compiled and sent its first call meanwhile
        checked.append(time.perf_counter())
        return real(*args)

    monkeypatch.setattr(_runtime, "preflight", slow_check)
    sent: list[str] = []
    async with no_leaks(), SubprocessRuntime(min_idle=1, max_executions_per_worker=uses) as rt:
        await rt.start()
        result = await rt.execute(_BAD + f"# {time.perf_counter_ns()}\n", _tools(sent))
        assert checked, "the check did not run"
        assert sent == [] and result.tool_calls == () and result.stdout == ""
        assert result.error_type == "TypeError"
        assert "get_weather() got an unexpected keyword argument 'town'" in (result.error or "")
        # the worker that began the snippet is gone; the next execution gets another
        fine = await rt.execute("send_email(to='a@b', subject='s')\nprint('ok')\n", _tools(sent))
        assert fine.ok, fine.error
        assert fine.stdout == "ok\n" and sent == ["a@b"]


async def test_the_check_of_a_new_snippet_runs_once_its_frame_is_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The overlap itself: the check runs inside ``HostExecution.run`` (which sends the
    frame first), once; a repeated snippet is checked before, from its cached analysis."""
    from ptcbox.runtimes.subprocess import _execution

    order: list[str] = []
    real_check = _runtime.preflight
    real_run = _execution.HostExecution.run

    def check(*args: Any) -> Any:
        order.append("check")
        return real_check(*args)

    async def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        order.append("run")
        return await real_run(self, *args, **kwargs)

    monkeypatch.setattr(_runtime, "preflight", check)
    monkeypatch.setattr(_execution.HostExecution, "run", run)
    code = f"print(get_weather(city='x'))  # {time.perf_counter_ns()}\n"
    async with SubprocessRuntime(min_idle=1, max_executions_per_worker=5) as rt:
        for _ in range(3):  # new, seen (compiled off the loop), then a cached frame
            result = await rt.execute(code, _tools([]))
            assert result.ok, result.error
            assert result.stdout == "{'city': 'x'}\n"
    assert order[:4] == ["run", "check", "run", "check"]
    assert order[4:] in (["check", "run"], ["run", "check"])

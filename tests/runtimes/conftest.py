"""Fixtures for the runtime tests: every contract test runs once per runtime.

To add a runtime, add one entry to ``RUNTIMES`` (id -> factory taking a policy).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

RuntimeFactory = Callable[[SandboxPolicy | None], Any]

RUNTIMES: dict[str, RuntimeFactory] = {
    "thread": ThreadRuntime,
    "subprocess": SubprocessRuntime,
    # reuse mode: a worker serves up to 20 executions (see tests/attacks/test_reuse_state.py)
    "subprocess-reuse": lambda policy: SubprocessRuntime(policy, max_executions_per_worker=20),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=sorted(RUNTIMES))
def runtime_name(request: pytest.FixtureRequest) -> str:
    """The id of the runtime under test ("thread", ...)."""
    return str(request.param)


@pytest.fixture
async def make_runtime(runtime_name: str) -> AsyncIterator[Callable[..., Any]]:
    """Build runtimes of the kind under test with a given policy; closed afterwards."""
    made: list[Any] = []

    def make(policy: SandboxPolicy | None = None) -> Any:
        runtime = RUNTIMES[runtime_name](policy)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        await runtime.aclose()


@pytest.fixture
async def runtime(make_runtime: Callable[..., Any]) -> Any:
    """A runtime of the kind under test with the default policy."""
    runtime = make_runtime()
    start = getattr(runtime, "start", None)
    if start is not None:  # SubprocessRuntime: start its worker pool outside timed code
        await start()
    return runtime


def _wait_for_threads(baseline: int, deadline_s: float = 5.0) -> int:
    end = time.monotonic() + deadline_s
    count = threading.active_count()
    while count > baseline and time.monotonic() < end:
        time.sleep(0.01)
        count = threading.active_count()
    return count


@pytest.fixture
def wait_for_threads() -> Callable[..., int]:
    """``wait_for_threads(baseline, deadline_s=5.0)``: wait until at most ``baseline``
    threads run (or the deadline passes); returns the thread count seen last."""
    return _wait_for_threads

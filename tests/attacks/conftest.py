"""Fixtures for the attack tests (copied from tests/runtimes/conftest.py): every attack
parametrised with ``runtime`` runs once per runtime."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from ptcbox import resolve_tools
from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

RUNTIMES: dict[str, Callable[[SandboxPolicy | None], Any]] = {
    "thread": ThreadRuntime,
    "subprocess": SubprocessRuntime,
}


def search(q: str) -> str:
    """Search for q."""
    return "r:" + q


TOOLS = resolve_tools([search])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=sorted(RUNTIMES))
def runtime_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_runtime(runtime_name: str) -> AsyncIterator[Callable[..., Any]]:
    made: list[Any] = []

    def make(policy: SandboxPolicy | None = None) -> Any:
        rt = RUNTIMES[runtime_name](policy)
        made.append(rt)
        return rt

    yield make
    for rt in made:
        await rt.aclose()


@pytest.fixture
async def runtime(make_runtime: Callable[..., Any]) -> Any:
    rt = make_runtime()
    start = getattr(rt, "start", None)
    if start is not None:
        await start()
    return rt


@pytest.fixture
def tools() -> Any:
    return TOOLS

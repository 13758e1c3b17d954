"""Shared fixtures for the agent-glue tests: asyncio backend, the demo database, a server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from ptcbox.runtimes import CodeRuntime, SubprocessRuntime, ThreadRuntime


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from ptcbox.demo import create_database

    path = create_database(tmp_path_factory.mktemp("demo") / "expenses.db")
    yield path


@pytest.fixture(params=["thread", "subprocess"])
async def code_runtime(request: pytest.FixtureRequest) -> AsyncIterator[CodeRuntime]:
    """Each real runtime in turn."""
    runtime = ThreadRuntime() if request.param == "thread" else SubprocessRuntime()
    try:
        yield runtime
    finally:
        await runtime.aclose()

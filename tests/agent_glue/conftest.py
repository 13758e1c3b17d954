"""Shared fixtures for the agent-glue tests: asyncio backend, the demo database, a server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from ptcbox.demo import create_database

    path = create_database(tmp_path_factory.mktemp("demo") / "expenses.db")
    yield path

"""Fixtures for the framework adapters: the demo database, its tools, a run_code tool."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ptcbox.agent_glue import ChatRequest, RunCodeTool, ToolRegistry
from ptcbox.demo import ExpenseTools, create_database
from ptcbox.runtimes import ThreadRuntime


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return create_database(tmp_path_factory.mktemp("demo") / "expenses.db")


@pytest.fixture
async def run_code(demo_db: Path) -> AsyncIterator[RunCodeTool]:
    runtime = ThreadRuntime()
    try:
        yield RunCodeTool(ToolRegistry(ExpenseTools(demo_db).as_list()), runtime=runtime)
    finally:
        await runtime.aclose()


def answer_from(result_text: str) -> str:
    """What the scripted model answers after reading run_code's result."""
    found = re.search(r"^\[value\] (.*)$", result_text, flags=re.MULTILINE)
    assert found is not None, result_text
    rows = json.loads(found.group(1))
    return "\n".join(f"{row['name']}: ${row['over_by']:,.2f} over" for row in rows)


def answer(request: ChatRequest) -> str:
    """A script step: answer from the last tool result in the request."""
    return answer_from(next(m.content for m in reversed(request.messages) if m.role == "tool"))

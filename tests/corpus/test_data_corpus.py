"""The data category: numpy/pandas snippets under ``SandboxPolicy.data()`` in
SubprocessRuntime give exactly what plain CPython gave (``data/expected.json``, frozen by
``freeze.py --data`` under two hash seeds). ThreadRuntime refuses the preset (see
``tests/runtimes/subprocess/test_data_preset.py``), so it is not run here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("numpy")
pytest.importorskip("pandas")

from _ptcbox_run import judge, run_snippet
from _snippets import (
    DATA_DIR,
    DATA_EXPECTED_PATH,
    expected_python,
    load_expected,
    load_snippets,
    python_version,
)

from ptcbox import SandboxPolicy
from ptcbox.runtimes import SubprocessRuntime

pytestmark = pytest.mark.anyio

SNIPPETS = load_snippets(DATA_DIR)
EXPECTED = load_expected(DATA_EXPECTED_PATH)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def data_runtime() -> AsyncIterator[Any]:
    runtime = SubprocessRuntime(SandboxPolicy.data())
    await runtime.start()
    yield runtime
    await runtime.aclose()


def test_every_data_snippet_has_a_fresh_expectation() -> None:
    stale = [s.id for s in SNIPPETS if EXPECTED.get(s.id, {}).get("sha") != s.sha]
    assert not stale, f"run `python tests/corpus/freeze.py --data`; stale or missing: {stale}"
    assert set(EXPECTED) == {s.id for s in SNIPPETS}
    assert expected_python(DATA_EXPECTED_PATH) == python_version()
    assert len(SNIPPETS) >= 20


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.id)
async def test_data_snippet_runs_as_cpython_runs_it(snippet: Any, data_runtime: Any) -> None:
    result = await run_snippet(data_runtime, snippet)
    problem = judge(result, EXPECTED[snippet.id])
    assert problem is None, f"{snippet.id} ({snippet.notes}): {problem}"

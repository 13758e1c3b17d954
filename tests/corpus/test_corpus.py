"""Every corpus snippet runs on both runtimes exactly as plain CPython ran it.

Expected stdout, return code and uncaught exception type come from ``expected.json``
(frozen by ``freeze.py`` from plain ``exec`` under two hash seeds). Snippets that fail
today are strict xfails listed in ``known_failures.json`` with the failure class of issue
11 and the root cause, so a fix that makes one pass must remove its entry.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _plain import run_isolated
from _ptcbox_run import RUNTIME_NAMES, judge, run_snippet
from _snippets import (
    Snippet,
    expected_python,
    load_expected,
    load_known_failures,
    load_snippets,
    python_version,
)

from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime

pytestmark = pytest.mark.anyio

SNIPPETS = load_snippets()
EXPECTED = load_expected()
KNOWN_FAILURES = load_known_failures()
_REASON = re.compile(r"^class \d+: \S")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def runtimes() -> AsyncIterator[dict[str, Any]]:
    """Both runtimes with the default policy, shared by the whole module."""
    thread, subprocess = ThreadRuntime(), SubprocessRuntime()
    await subprocess.start()
    yield {"thread": thread, "subprocess": subprocess}
    await thread.aclose()
    await subprocess.aclose()


def _cases() -> list[Any]:
    cases = []
    for name in RUNTIME_NAMES:
        known = KNOWN_FAILURES.get(name, {})
        for snippet in SNIPPETS:
            marks = []
            if snippet.id in known:
                marks.append(pytest.mark.xfail(strict=True, reason=known[snippet.id]))
            cases.append(pytest.param(name, snippet, id=f"{name}-{snippet.id}", marks=marks))
    return cases


def test_every_snippet_has_a_fresh_expectation() -> None:
    stale = [s.id for s in SNIPPETS if EXPECTED.get(s.id, {}).get("sha") != s.sha]
    assert not stale, f"run `python tests/corpus/freeze.py`; stale or missing: {stale}"
    assert set(EXPECTED) == {s.id for s in SNIPPETS}, "expected.json lists removed snippets"


def test_expectations_come_from_this_python() -> None:
    assert expected_python() == python_version(), (
        f"expected.json was frozen with Python {expected_python()}; this is "
        f"{python_version()}: run `python tests/corpus/freeze.py`"
    )


def _first_of_each_category() -> list[Snippet]:
    firsts: dict[str, Snippet] = {}
    for snippet in SNIPPETS:
        firsts.setdefault(snippet.category, snippet)
    return list(firsts.values())


@pytest.mark.parametrize("snippet", _first_of_each_category(), ids=lambda s: s.id)
def test_plain_cpython_still_gives_the_expected_outcome(snippet: Snippet) -> None:
    """The reference itself: a sample re-run with plain exec matches ``expected.json``."""
    got = run_isolated(snippet.code, hash_seed=1)
    want = EXPECTED[snippet.id]
    assert (got["stdout"], got["return_code"], got["error_type"]) == (
        want["stdout"],
        want["return_code"],
        want["error_type"],
    )


def test_known_failures_name_real_snippets_and_a_class() -> None:
    ids = {s.id for s in SNIPPETS}
    assert set(KNOWN_FAILURES) <= set(RUNTIME_NAMES)
    for name, entries in KNOWN_FAILURES.items():
        for snippet_id, reason in entries.items():
            assert snippet_id in ids, f"{name}: {snippet_id} is not a snippet"
            assert _REASON.match(reason), f"{name}: {snippet_id}: reason must be 'class N: ...'"


def test_the_corpus_is_broad() -> None:
    categories = {s.category for s in SNIPPETS}
    assert len(SNIPPETS) >= 170 and len(categories) >= 10


@pytest.mark.parametrize(("runtime_name", "snippet"), _cases())
async def test_snippet_runs_as_cpython_runs_it(
    runtime_name: str, snippet: Snippet, runtimes: dict[str, Any]
) -> None:
    result = await run_snippet(runtimes[runtime_name], snippet)
    problem = judge(result, EXPECTED[snippet.id])
    assert problem is None, f"{snippet.id} ({snippet.notes}): {problem}"

"""benchmarks/corpus.py: the pass-rate table, its JSON and the known-failures check.

One small category (``script``) runs on every column, so the plain-exec reference, both
runtimes and the monty column (skipped with a reason when pydantic-monty is missing) are
exercised end to end in a few seconds.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_corpus_under_test", BENCHMARKS / "corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script_run(corpus: ModuleType) -> tuple[list[Any], dict[str, Any]]:
    snippets = [s for s in corpus.load_snippets() if s.category == "script"]
    return snippets, asyncio.run(corpus.run_all(snippets))


def test_table_has_a_row_per_category_and_totals(
    corpus: ModuleType, script_run: tuple[list[Any], dict[str, Any]]
) -> None:
    snippets, columns = script_run
    table = corpus.render_table(snippets, columns).splitlines()
    assert table[0].startswith("| category | snippets | plain exec | ptcbox ThreadRuntime")
    n = len(snippets)
    script_row = next(line for line in table if line.startswith("| script |"))
    assert script_row.split(" | ")[2] == f"{n}/{n} (100%)"  # the reference passes everything
    assert table[-1].startswith(f"| **total** | {n} | **{n}/{n} (100%)**")


def test_json_counts_and_failures(
    corpus: ModuleType, script_run: tuple[list[Any], dict[str, Any]]
) -> None:
    snippets, columns = script_run
    data = corpus.to_json(snippets, columns)
    assert data["plain exec"] == {
        "passed": len(snippets),
        "total": len(snippets),
        "categories": {"script": {"passed": len(snippets), "total": len(snippets)}},
        "failures": {},
    }
    for name in ("ptcbox ThreadRuntime", "ptcbox SubprocessRuntime"):
        column = data[name]
        assert column["passed"] + len(column["failures"]) == len(snippets)
    monty = data["pydantic-monty"]
    assert "skipped" in monty or monty["total"] == len(snippets)


def test_known_failures_match_what_the_runtimes_do(
    corpus: ModuleType, script_run: tuple[list[Any], dict[str, Any]]
) -> None:
    _, columns = script_run
    assert corpus.known_failure_drift(columns) == []


def test_drift_names_a_stale_entry(corpus: ModuleType) -> None:
    known = corpus.load_known_failures()
    snippet_id = next(iter(known["thread"]))
    columns = {corpus.COLUMNS[1]: {snippet_id: None, "not-listed": "stdout differs"}}
    assert set(corpus.known_failure_drift(columns)) == {
        "thread: not-listed fails but is not listed: stdout differs",
        f"thread: {snippet_id} passes now; remove it from known_failures",
    }

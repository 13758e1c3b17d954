"""benchmarks/peers.py reports every peer: timed, skipped with a reason, or failed.

The full peer benchmark is not run here (it takes minutes); these tests drive the same
table and JSON code with plain exec, a peer whose package is missing and a peer that
fails.
"""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rich.console import Console

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"bench_{name}_under_test", BENCHMARKS / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def peers() -> ModuleType:
    return _load("peers")


def _table(peers: ModuleType, results: list[Any], runners: list[Any]) -> str:
    sink = io.StringIO()
    peers.render_table(results, runners, Console(file=sink, width=250, highlight=False))
    return sink.getvalue()


def test_a_missing_peer_is_reported_as_skipped_with_its_reason(
    peers: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "smolagents", None)  # import now raises ImportError
    monkeypatch.setitem(sys.modules, "smolagents.local_python_executor", None)
    runners = [peers._PlainExec(), peers.SmolagentsRunner()]
    results = peers.run_peers(runners, scale=0.01)
    assert results[0].times and not results[0].skipped
    assert results[1].skipped is not None and "pip install smolagents" in results[1].skipped
    text = _table(peers, results, runners)
    assert "smolagents LocalPythonExecutor: skipped: smolagents is not installed" in text
    data = peers.to_json(results)
    row = next(r for r in data["runners"] if r["name"] == "smolagents LocalPythonExecutor")
    assert row["skipped"] and row["median_s"] == {}


def test_a_failing_peer_is_reported_as_an_error_not_dropped(peers: ModuleType) -> None:
    class Broken(peers.Runner):  # type: ignore[misc, name-defined]
        isolation = "none"

        def __init__(self) -> None:
            super().__init__("broken peer")

        def time_case(self, case: Any, warmup: int, repeat: int) -> list[float]:
            raise RuntimeError("peer exploded")

    runners = [peers._PlainExec(), Broken()]
    results = peers.run_peers(runners, scale=0.01)
    assert results[1].error == "RuntimeError: peer exploded"
    text = _table(peers, results, runners)
    assert "broken peer: error: RuntimeError: peer exploded" in text
    assert [r["name"] for r in peers.to_json(results)["runners"]] == ["plain exec", "broken peer"]


def test_ratios_are_taken_against_ptcbox_subprocess_runtime(peers: ModuleType) -> None:
    from latency import RunnerResult

    reference = RunnerResult(peers.REFERENCE, times={"trivial": [2.0, 2.0, 2.0]})
    other = RunnerResult("other", times={"trivial": [1.0, 1.0, 1.0]})
    assert peers.ratios([other, reference]) == {
        "other": {"trivial": 0.5},
        peers.REFERENCE: {"trivial": 1.0},
    }
    # Without the reference, no ratio is invented: the table says n/a.
    assert peers.ratios([other]) == {}
    text = _table(peers, [other], [peers._PlainExec()])
    assert "n/a" in text


def test_every_peer_of_the_issue_has_a_row(peers: ModuleType) -> None:
    names = [make().name for make in peers.PEERS]
    assert names == [
        "plain exec",
        "ptcbox ThreadRuntime",
        "ptcbox SubprocessRuntime",
        "smolagents LocalPythonExecutor",
        "pydantic-monty worker pool",
        "toolregistry PTC (codecell)",
    ]


def _answering(peers: ModuleType, answer: str) -> Any:
    class Answering(peers.ExecRunner):  # type: ignore[misc, name-defined]
        isolation = "none"

        def __init__(self) -> None:
            super().__init__()
            self.name = f"answers {answer}"

        def run(self, case: Any) -> str:
            return answer

    return Answering()


def test_a_peer_is_timed_only_after_it_answers_the_tool_snippet(peers: ModuleType) -> None:
    """The peers' correctness check lives in the benchmark (the peers are a [bench] extra
    CI does not install): a wrong answer is an error row, never a timing."""
    runners = [peers._PlainExec(), _answering(peers, "45\n"), _answering(peers, "44")]
    results = peers.run_peers(runners, scale=0.01)
    assert results[1].error is None and results[1].times
    assert (
        results[2].error == ("wrong answer to the tool snippet: '44' (expected '45')")
        and not results[2].times
    )
    assert "answers 44: error: wrong answer" in _table(peers, results, runners)


def test_the_check_snippet_is_right_under_plain_python(peers: ModuleType) -> None:
    out = io.StringIO()
    code = peers.CHECK.code
    exec(
        compile(code, "<check>", "exec"),
        {"ping": peers.ping, "print": lambda *a: out.write(" ".join(map(str, a)))},
    )
    assert out.getvalue() == "45"


def test_markdown_table_keeps_skipped_and_failed_rows(
    peers: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pydantic_monty", None)
    runners = [peers._PlainExec(), peers.MontyRunner()]
    results = peers.run_peers(runners, scale=0.01)
    text = peers.render_markdown(results, runners)
    assert "| plain exec |" in text
    assert "| pydantic-monty worker pool | Rust interpreter in worker processes | skipped: " in text

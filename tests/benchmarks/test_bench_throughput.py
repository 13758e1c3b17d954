"""benchmarks/throughput.py runs end to end in its quick mode (no speed is asserted).

The full benchmark takes minutes; the quick mode drives the same code with every
engine for a few milliseconds, so the script cannot rot unnoticed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def throughput() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_throughput_under_test", BENCHMARKS / "throughput.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_quick_run_writes_every_row_and_says_whether_sources_repeat(
    throughput: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "throughput.md"
    assert throughput.main(["--quick", "--markdown", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text == capsys.readouterr().out.rstrip("\n") + "\n"
    for entry in throughput.ENGINES:
        assert f"| {entry.name} |" in text
    assert "fork+exit+reap reference: **" in text
    assert "sources repeat" in text
    assert "(new source each time)" in text and "(repeated)" in text
    assert "error" not in text.lower()


def test_the_realistic_snippet_is_13_lines_with_9_tool_calls_and_new_each_time(
    throughput: ModuleType,
) -> None:
    case = throughput.LATENCY_CASES[0]
    first, second = case.source(1), case.source(2)
    assert first != second and not case.repeats
    assert len(first.splitlines()) == 13
    calls: list[str] = []

    def counted(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return fn(*args, **kwargs)

        return call

    tools = {name: counted(name, fn) for name, fn in throughput.TOOLS.items()}
    body, _, last = first.rstrip("\n").rpartition("\n")
    namespace = dict(tools)
    exec(compile(body, "<snippet>", "exec"), namespace)  # the snippet is plain Python
    assert len(calls) == 9
    assert eval(last, namespace)["run"] == 1


def test_adding_a_runtime_is_one_entry(throughput: ModuleType) -> None:
    entry = throughput.Entry("plain exec again", "none", throughput.PlainExecEngine)
    rows, forks = throughput.run_throughput([entry], throughput.Settings.quick())
    assert len(forks) == 1 and forks[0] > 0
    assert rows[0].error is None and set(rows[0].rates) == {
        "trivial@1", "trivial@8", "tools10@1", "tools10@8"
    }  # fmt: skip
    text = throughput.render_markdown(rows, forks)
    assert "| plain exec again | none |" in text
    data = json.loads(json.dumps(throughput.to_json(rows, forks)))
    assert data["rows"][0]["name"] == "plain exec again"


def test_new_source_rows_never_repeat_a_source_across_engines_and_rounds(
    throughput: ModuleType,
) -> None:
    """The host's compile caches are per process: a source another engine sent before is
    a second sight (SubprocessRuntime then compiles it in a background thread beside the
    run), so "new source each time" must hold for the whole run, not per engine. It
    did not: every engine got the same sources, and the rows after the first
    subprocess row were 0.2-0.7 ms slower for it."""
    sent: list[str] = []

    class Recorder(throughput.Engine):  # type: ignore[misc,name-defined]
        async def run(self, code: str) -> None:
            sent.append(code)

    entries = [throughput.Entry(f"recorder {n}", "none", Recorder, throughput=False) for n in "ab"]
    settings = throughput.Settings.quick()
    settings = throughput.Settings(
        seconds=settings.seconds,
        warmup_s=settings.warmup_s,
        rounds=2,
        latency_n=settings.latency_n,
        pace_s=settings.pace_s,
    )
    throughput.run_throughput(entries, settings)
    new_cases = [case for case in throughput.LATENCY_CASES if not case.repeats]
    per_case = len(entries) * settings.rounds * settings.latency_n
    assert (
        len(sent)
        == len(throughput.LATENCY_CASES) * len(entries) * settings.rounds * settings.latency_n
    )
    new_sources = [code for code in sent if code != throughput.TRIVIAL]
    assert len(new_sources) == len(new_cases) * per_case
    assert len(set(new_sources)) == len(new_sources)

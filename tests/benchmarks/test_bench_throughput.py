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

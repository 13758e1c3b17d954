"""benchmarks/mcp_catalog.py and mcp_overhead.py run against real MCP servers.

The token figures are deterministic (scripted trajectories, real tool results), so their
order is checked; the timing benchmark is only smoke-run (speed is measured in
benchmarks/, not asserted in tests).
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("mcp", reason="needs the mcp extra")

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


def test_catalog_tokens_classic_vs_run_code_vs_discovery() -> None:
    bench = _load("mcp_catalog")
    results = asyncio.run(bench.measure())
    runs = {r["mode"]: r for r in results["runs"]}
    assert results["tools"] >= 40
    assert all(r["correct"] for r in runs.values()), runs
    assert runs["classic"]["tool_calls"] == 22 and runs["run_code"]["tool_calls"] == 1
    classic, code, discovery = (
        runs[m]["input_tokens"] for m in ("classic", "run_code", "discovery")
    )
    assert classic > 2 * code and code > discovery
    assert runs["discovery"]["first_request_tokens"] * 2 < runs["run_code"]["first_request_tokens"]
    table = bench.render(results)
    assert "| classic | 4 | 22 |" in table and "18 SKUs" in table


def test_overhead_benchmark_runs() -> None:
    bench = _load("mcp_overhead")
    results = asyncio.run(bench.measure(calls=3, rounds=1))
    labels = set(results["median_us_per_call"])
    assert labels == {
        "host: mcp.Client.call_tool",
        "host: MCPToolProjection",
        "snippet: ThreadRuntime",
        "snippet: SubprocessRuntime",
    }
    assert "| snippet: SubprocessRuntime |" in bench.render(results)

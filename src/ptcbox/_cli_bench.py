"""``ptcbox bench``: the benchmarks it runs and how it finds and runs them."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

from ptcbox._cli_support import UsageError, import_file

__all__ = ["BENCHMARKS", "BenchMain", "benchmark_file", "run_benchmark"]

BenchMain = Callable[[list[str]], int]
"""A benchmark's entry point: takes its own command-line arguments, returns an exit code."""


def benchmark_file(name: str) -> Callable[[], BenchMain]:
    """Return a loader for ``benchmarks/<name>.py``'s ``main(argv) -> int``.

    ``benchmarks/`` ships with the source tree, not the wheel: it is looked up in
    ``$PTCBOX_BENCHMARKS_DIR``, next to the ``src/`` this package was installed from
    (editable install), then in the current directory.
    """

    def load() -> BenchMain:
        path = _benchmarks_dir() / f"{name}.py"
        if not path.is_file():
            raise UsageError(f"no benchmark script at {path}")
        module = import_file(path, f"ptcbox_benchmarks_{name}")
        entry = getattr(module, "main", None)
        if not callable(entry):
            raise UsageError(f"{path} has no main(argv) function")
        return entry  # type: ignore[no-any-return]

    return load


BENCHMARKS: dict[str, tuple[str, Callable[[], BenchMain]]] = {
    "latency": (
        "latency of trivial, tool-calling and CPU-bound snippets per runtime vs plain exec",
        benchmark_file("latency"),
    ),
    "tokens": (
        "token cost of classic tool calling vs run_code vs hybrid over the scenario suite",
        lambda: importlib.import_module("ptcbox.bench").main,  # ships in the package
    ),
    "peers": (
        "speed of ptcbox's runtimes vs smolagents, pydantic-monty and toolregistry PTC",
        benchmark_file("peers"),
    ),
    "throughput": (
        "sustained executions/s and new-source latency of every runtime vs monty and fork",
        benchmark_file("throughput"),
    ),
    "subprocess-latency": (
        "SubprocessRuntime: warm vs empty pool, throughput, worker and host memory",
        benchmark_file("subprocess_latency"),
    ),
    "sandbox-overhead": (
        "cost of the sandbox guards per kind of code, vs plain exec",
        benchmark_file("sandbox_overhead"),
    ),
    "corpus": (
        "share of model-style snippets each runtime runs exactly as CPython does",
        benchmark_file("corpus"),
    ),
    "mcp-catalog": (
        "tokens over a 48-tool MCP server: classic vs run_code vs discovery (mcp extra)",
        benchmark_file("mcp_catalog"),
    ),
    "mcp-overhead": (
        "per-call cost of an MCP tool call from a snippet vs from the host (mcp extra)",
        benchmark_file("mcp_overhead"),
    ),
}
"""``ptcbox bench`` subcommands: name -> (help text, loader of the entry point)."""


# --- ptcbox bench ----------------------------------------------------------------------


def _benchmarks_dir() -> Path:
    candidates = []
    if env := os.environ.get("PTCBOX_BENCHMARKS_DIR"):
        candidates.append(Path(env))
    candidates.append(Path(__file__).resolve().parents[2] / "benchmarks")
    candidates.append(Path.cwd() / "benchmarks")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise UsageError(
        "benchmarks/ was not found: the benchmarks ship with the source tree; run this "
        "from a clone installed with pip install -e . (or set PTCBOX_BENCHMARKS_DIR)"
    )


def run_benchmark(name: str, argv: list[str]) -> int:
    """Run ``ptcbox bench NAME``: its parser's default program name (``sys.argv[0]``,
    which argparse uses) is ``ptcbox bench NAME`` while it runs, as its usage line says."""
    entry = BENCHMARKS[name][1]()
    saved = sys.argv[:1]
    sys.argv[:1] = [f"ptcbox bench {name}"]
    try:
        return entry(argv)
    finally:
        sys.argv[:1] = saved

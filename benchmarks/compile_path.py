"""The source -> code path of one ThreadRuntime execution, old vs new, stage by stage.

Issue 16 item 0: an agent sends NEW source every time, so the host's pre-flight check
(parse + walk, on the event loop thread) and the restricted compile (in the snippet
thread) run in full for each execution. This times, interleaved in one process on the
same new sources (``throughput.REALISTIC``: 13 lines, 9 tool calls, a new literal each
time), the two pipelines stage by stage:

* **old**: parse; the check's walk with ``ast.NodeVisitor``'s traversal; a second parse
  for the compile; transform; the whole resume-check pass; ``compile(tree)``;
* **new**: one parse; the check's fast walk; transform on the same tree, given the
  source text as ``compile_snippet`` gives it (generator expression steps checked in the
  transform; the numeric analysis's binding index built only when a question needs it);
  the resume pass only when the module has other resumption points; ``compile(tree)``;

plus each end to end through the real entry points (new: ``preflight_parsed`` +
``compile_snippet(tree=...)``; old: ``preflight`` + ``compile_snippet`` with nothing
shared). The transform's own code (and the binding index it builds) is the current one
in both columns: to compare it with an older commit, run this script at both commits.

Caches are bypassed (new source, ``cache=False``). Medians in ms; the machine's load
moves all columns alike, so quote the ratios.

Run::

    python benchmarks/compile_path.py            # 400 rounds
    python benchmarks/compile_path.py --rounds 2000 --snippet trivial
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import REALISTIC, get_customer, get_rate, list_orders

from ptcbox import DirectProjection, ThreadRuntime
from ptcbox.runtimes._shared import _preflight
from ptcbox.runtimes._shared._preflight_walk import Visitor
from ptcbox.sandbox import SandboxPolicy, compile_snippet
from ptcbox.sandbox._resume import add_resume_checks
from ptcbox.sandbox._transform import PtcTransformer

_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_COMPILE_FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
POLICY = SandboxPolicy()
SNIPPETS: dict[str, Callable[[int], str]] = {
    "realistic": lambda k: REALISTIC.format(n=k, n1=k + 1, n2=k + 2),
    "trivial": lambda k: f"print({k})\n",
}


class _StockWalk(Visitor):
    """The check's rules with ``ast.NodeVisitor``'s traversal (the old walk)."""

    visit = ast.NodeVisitor.visit
    generic_visit = ast.NodeVisitor.generic_visit


def _parse(code: str) -> Any:
    return compile(code, "<snippet>", "exec", _FLAGS, dont_inherit=True)


STAGES = ("parse (check)", "check walk", "parse (compile)", "transform", "resume pass", "compile")
"""The path's stages, in order; each run records one duration (seconds) per stage."""


def _record(times: dict[str, list[float]], durations: tuple[float, ...], total: float) -> None:
    for stage, took in zip(STAGES, durations, strict=True):
        times[stage].append(took)
    times["total"].append(total)


def _old(code: str, times: dict[str, list[float]]) -> None:
    clock = time.perf_counter
    t0 = clock()
    tree = _parse(code)
    t1 = clock()
    _StockWalk().visit(tree)
    t2 = clock()
    tree = ast.parse(code, filename="<snippet>", mode="exec", type_comments=False)
    t3 = clock()
    tree = PtcTransformer([], [], {}).visit(tree)
    t4 = clock()
    add_resume_checks(tree)
    t5 = clock()
    compile(tree, "<snippet>", "exec", flags=_COMPILE_FLAGS, dont_inherit=True)
    t6 = clock()
    _record(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5), t6 - t0)


def _new(code: str, times: dict[str, list[float]]) -> None:
    clock = time.perf_counter
    t0 = clock()
    tree = _parse(code)
    t1 = clock()
    Visitor().visit(tree)
    t2 = clock()
    transformer = PtcTransformer([], [], {}, resume_checks=True, source=code)
    tree = transformer.visit(tree)
    t4 = clock()
    if transformer.resume_pass_needed:
        add_resume_checks(tree)
    t5 = clock()
    compile(tree, "<snippet>", "exec", flags=_COMPILE_FLAGS, dont_inherit=True)
    t6 = clock()
    _record(times, (t1 - t0, t2 - t1, 0.0, t4 - t2, t5 - t4, t6 - t5), t6 - t0)


def _entry_points(specs: Any) -> tuple[Callable[[str], None], Callable[[str], None]]:
    def old(code: str) -> None:
        _preflight._ANALYSES.clear()
        _preflight.preflight(code, specs, set())
        compile_snippet(code, POLICY, filename="<snippet>", cache=False)

    def new(code: str) -> None:
        _preflight._ANALYSES.clear()
        _, tree = _preflight.preflight_parsed(code, specs, set())
        compile_snippet(code, POLICY, filename="<snippet>", cache=False, tree=tree)

    return old, new


def main(argv: list[str] | None = None) -> None:
    """Print the per-stage table (medians, ms) and the end-to-end ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--snippet", choices=sorted(SNIPPETS), default="realistic")
    args = parser.parse_args(argv)
    make = SNIPPETS[args.snippet]
    names = (*STAGES, "total")
    old_t: dict[str, list[float]] = {n: [] for n in names}
    new_t: dict[str, list[float]] = {n: [] for n in names}
    tools = {f.__name__: DirectProjection(f.__name__, f) for f in (get_customer, list_orders)}
    tools["get_rate"] = DirectProjection("get_rate", get_rate)
    specs = ThreadRuntime()._table.resolve(tools)
    old_e2e, new_e2e = _entry_points(specs)
    e2e: dict[str, list[float]] = {"old": [], "new": []}
    base = time.time_ns() % 10**9 * 1000  # new literals in every run of the script
    for k in range(args.rounds):
        code = make(base + 4 * k)
        runs = [(_old, old_t), (_new, new_t)]
        if k % 2:
            runs.reverse()
        for run, into in runs:
            run(code, into)
        pair = [("old", old_e2e, make(base + 4 * k + 1)), ("new", new_e2e, make(base + 4 * k + 2))]
        if k % 2:
            pair.reverse()
        for name, call, source in pair:
            started = time.perf_counter()
            call(source)
            e2e[name].append(time.perf_counter() - started)

    def med(values: list[float]) -> float:
        return statistics.median(values) * 1e3

    print(f"{args.snippet} snippet, new source each time, {args.rounds} interleaved rounds")
    print("| stage | old ms | new ms |")
    print("|---|---:|---:|")
    for name in names:
        print(f"| {name} | {med(old_t[name]):.3f} | {med(new_t[name]):.3f} |")
    # a loaded machine preempts whole runs more often than single stages
    old_sum = sum(med(old_t[name]) for name in names[:-1])
    new_sum = sum(med(new_t[name]) for name in names[:-1])
    print(f"| sum of the stage medians | {old_sum:.3f} | {new_sum:.3f} |")
    old_m, new_m = med(e2e["old"]), med(e2e["new"])
    print(
        f"| end to end (preflight + compile_snippet) | {old_m:.3f} | {new_m:.3f} |\n"
        f"new/old: end to end {new_m / old_m:.2f}, sum of stage medians {new_sum / old_sum:.2f}"
    )


if __name__ == "__main__":
    main()

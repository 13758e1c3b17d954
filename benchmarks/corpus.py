"""How much model-written code runs exactly as CPython runs it: the corpus pass rates.

Runs every snippet of ``tests/corpus/`` (model-style code calling the fixture tools of
``tests/corpus/_tools.py``) and compares stdout, return code and uncaught exception type
with CPython's frozen outcome (``tests/corpus/expected.json``), on:

* plain ``exec`` (the reference, a fresh interpreter per snippet; 100% by construction,
  so anything less means ``expected.json`` is stale),
* ptcbox ``ThreadRuntime`` and ``SubprocessRuntime`` with the default policy,
* pydantic-monty (``AsyncMonty`` worker pool, the tools as external functions) if it is
  installed (``pip install -e '.[bench]'``), else the column says why it is skipped.

Prints a markdown table of passed/total per category and runtime, plus totals.

Run::

    python benchmarks/corpus.py              # the table
    python benchmarks/corpus.py --failures   # and every failing snippet with what differs
    python benchmarks/corpus.py --json       # machine-readable
    python benchmarks/corpus.py --markdown benchmarks/results/corpus.md
    python benchmarks/corpus.py --no-plain   # skip the (slow) plain-exec reference
    python benchmarks/corpus.py --check-known  # list known_failures.json entries to update
    ptcbox bench corpus                      # the same, through the CLI
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

_CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"
if str(_CORPUS) not in sys.path:
    sys.path.insert(0, str(_CORPUS))

from _atools import ASYNC_TOOLS  # noqa: E402 - tests/corpus is not a package
from _plain import run_isolated  # noqa: E402
from _ptcbox_run import judge, run_snippet  # noqa: E402
from _snippets import Snippet, load_expected, load_known_failures, load_snippets  # noqa: E402
from _tools import SYNC_TOOLS  # noqa: E402

from ptcbox import CodeResult  # noqa: E402
from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime  # noqa: E402

__all__ = ["COLUMNS", "main", "render_table", "run_all"]

COLUMNS = ("plain exec", "ptcbox ThreadRuntime", "ptcbox SubprocessRuntime", "pydantic-monty")
"""The table's columns, in order."""

Verdicts = dict[str, str | None]
"""Snippet id -> ``None`` (passed) or what differed."""


def _result(stdout: str, return_code: int, error_type: str | None, error: str) -> CodeResult:
    return CodeResult(
        stdout=stdout,
        stderr="",
        return_code=return_code,
        error=error or None,
        error_type=error_type,
    )


def _plain(snippets: list[Snippet], expected: dict[str, Any]) -> Verdicts:
    def one(snippet: Snippet) -> str | None:
        got = run_isolated(snippet.code, hash_seed=0)
        tail = got["stderr"].strip().splitlines()[-1:] or [""]
        outcome = _result(got["stdout"], got["return_code"], got["error_type"], tail[0])
        return judge(outcome, expected[snippet.id])

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip([s.id for s in snippets], pool.map(one, snippets), strict=True))


async def _ptcbox(kind: str, snippets: list[Snippet], expected: dict[str, Any]) -> Verdicts:
    runtime: Any = ThreadRuntime() if kind == "thread" else SubprocessRuntime()
    verdicts: Verdicts = {}
    try:
        if kind == "subprocess":
            await runtime.start()
        for snippet in snippets:
            verdicts[snippet.id] = judge(await run_snippet(runtime, snippet), expected[snippet.id])
    finally:
        await runtime.aclose()
    return verdicts


async def _monty(snippets: list[Snippet], expected: dict[str, Any]) -> Verdicts | str:
    try:
        import pydantic_monty as monty
    except ImportError:
        return "skipped: not installed"
    verdicts: Verdicts = {}
    async with monty.AsyncMonty(min_processes=1) as pool:
        for snippet in snippets:
            tools: dict[str, Callable[..., Any]] = ASYNC_TOOLS if snippet.awaits else SYNC_TOOLS
            collector = monty.CollectString()
            return_code, error_type, error = 0, None, ""
            try:
                async with pool.checkout() as session:
                    await asyncio.wait_for(
                        session.feed_run(
                            snippet.code, external_lookup=tools, print_callback=collector
                        ),
                        timeout=20,
                    )
            except monty.MontyRuntimeError as exc:
                inner = exc.exception()
                return_code, error_type, error = 1, type(inner).__name__, f"{inner}"
                if isinstance(inner, SystemExit) and inner.code in (None, 0):
                    return_code, error_type = 0, None
            except Exception as exc:
                return_code, error_type, error = 1, type(exc).__name__, str(exc)
            outcome = _result(str(collector.output), return_code, error_type, error)
            verdicts[snippet.id] = judge(outcome, expected[snippet.id])
    return verdicts


def _monty_in_child(snippets: list[Snippet]) -> Verdicts | str:
    """Run the monty column in a child process and read its verdicts back.

    pydantic-monty's native runtime occasionally aborts the interpreter at exit (SIGABRT
    after the work is done); in a child, that cannot take the other columns down, and
    verdicts printed before the abort still count.
    """
    try:
        import pydantic_monty  # noqa: F401 - only probing
    except ImportError:
        return "skipped: not installed"
    ids = [s.id for s in snippets]
    done = subprocess.run(
        [sys.executable, __file__, "--monty-child"],
        input=json.dumps(ids),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    try:
        verdicts: Verdicts = json.loads(done.stdout)
    except json.JSONDecodeError:
        return f"error: the monty child exited with {done.returncode}: {done.stderr[-200:]}"
    return verdicts


async def run_all(snippets: list[Snippet], *, plain: bool = True) -> dict[str, Verdicts | str]:
    """Run the corpus on every column; a column that cannot run holds its reason."""
    expected = load_expected()
    missing = [s.id for s in snippets if s.id not in expected]
    if missing:
        raise SystemExit(f"run tests/corpus/freeze.py first; no expectation for {missing}")
    columns: dict[str, Verdicts | str] = {}
    columns[COLUMNS[0]] = _plain(snippets, expected) if plain else "skipped: --no-plain"
    columns[COLUMNS[1]] = await _ptcbox("thread", snippets, expected)
    columns[COLUMNS[2]] = await _ptcbox("subprocess", snippets, expected)
    columns[COLUMNS[3]] = _monty_in_child(snippets)
    return columns


def _cell(verdicts: Verdicts | str, ids: list[str]) -> str:
    if isinstance(verdicts, str):
        return verdicts
    passed = sum(1 for i in ids if verdicts[i] is None)
    share = 100 * passed / len(ids)
    digits = 1 if round(share) in (0, 100) and 0 < passed < len(ids) else 0  # not 330/331 (100%)
    return f"{passed}/{len(ids)} ({share:.{digits}f}%)"


def render_table(snippets: list[Snippet], columns: dict[str, Verdicts | str]) -> str:
    """The markdown table: one row per category, then the totals."""
    by_category: dict[str, list[str]] = {}
    for snippet in snippets:
        by_category.setdefault(snippet.category, []).append(snippet.id)
    lines = [
        "| category | snippets | " + " | ".join(columns) + " |",
        "|---|---:|" + "---:|" * len(columns),
    ]
    for category, ids in sorted(by_category.items()):
        cells = [_cell(v, ids) for v in columns.values()]
        lines.append(f"| {category} | {len(ids)} | " + " | ".join(cells) + " |")
    every = [s.id for s in snippets]
    cells = [f"**{_cell(v, every)}**" for v in columns.values()]
    lines.append(f"| **total** | {len(every)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def to_json(snippets: list[Snippet], columns: dict[str, Verdicts | str]) -> dict[str, Any]:
    """Per column: pass counts per category and in total, and each failure's difference."""
    data: dict[str, Any] = {}
    for name, verdicts in columns.items():
        if isinstance(verdicts, str):
            data[name] = {"skipped": verdicts}
            continue
        total, passed = Counter[str](), Counter[str]()
        for snippet in snippets:
            total[snippet.category] += 1
            passed[snippet.category] += verdicts[snippet.id] is None
        data[name] = {
            "passed": sum(passed.values()),
            "total": len(snippets),
            "categories": {c: {"passed": passed[c], "total": total[c]} for c in sorted(total)},
            "failures": {i: v for i, v in verdicts.items() if v is not None},
        }
    return data


_KNOWN_COLUMNS = {"thread": COLUMNS[1], "subprocess": COLUMNS[2]}


def known_failure_drift(columns: dict[str, Verdicts | str]) -> list[str]:
    """Where ``known_failures.json`` no longer matches the runtimes (empty when in sync).

    Each line names a snippet that now passes but is still listed (remove its entry) or
    one that fails but is not listed (a regression, or a new snippet to analyse).
    """
    known = load_known_failures()
    drift = []
    for runtime, column in _KNOWN_COLUMNS.items():
        verdicts = columns.get(column)
        if not isinstance(verdicts, dict):
            continue
        listed = known.get(runtime, {})
        for snippet_id, problem in sorted(verdicts.items()):
            if problem is None and snippet_id in listed:
                drift.append(f"{runtime}: {snippet_id} passes now; remove it from known_failures")
            elif problem is not None and snippet_id not in listed:
                drift.append(f"{runtime}: {snippet_id} fails but is not listed: {problem}")
    return drift


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--failures", action="store_true", help="list every failing snippet")
    parser.add_argument("--markdown", metavar="PATH", help="also write the table to PATH")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain-exec reference")
    parser.add_argument("--category", action="append", help="only these categories")
    parser.add_argument(
        "--check-known",
        action="store_true",
        help="also compare with tests/corpus/known_failures.json (exit 1 on drift)",
    )
    parser.add_argument("--monty-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    snippets = load_snippets()
    if args.monty_child:  # ids on stdin, verdicts as JSON on stdout
        wanted = set(json.loads(sys.stdin.read()))
        chosen = [s for s in snippets if s.id in wanted]
        result = asyncio.run(_monty(chosen, load_expected()))
        sys.stdout.write(json.dumps(result))
        sys.stdout.flush()
        return 0
    if args.category:
        snippets = [s for s in snippets if s.category in args.category]
    columns = asyncio.run(run_all(snippets, plain=not args.no_plain))
    if args.json:
        print(json.dumps(to_json(snippets, columns), indent=1))
        return 0
    table = render_table(snippets, columns)
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")
    drift = known_failure_drift(columns) if args.check_known else []
    for line in drift:
        print(line)
    if args.failures:
        for name, verdicts in columns.items():
            if isinstance(verdicts, str):
                continue
            for snippet_id, problem in verdicts.items():
                if problem is not None:
                    print(f"\n[{name}] {snippet_id}: {problem}")
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())

"""Freeze the corpus's expected outcomes from plain CPython: ``python tests/corpus/freeze.py``.

Every snippet runs with plain ``exec`` (see ``_plain.py``) in a fresh interpreter, once
under ``PYTHONHASHSEED=0`` and once under ``PYTHONHASHSEED=1``. If the two runs disagree
(stdout, return code or exception type), the snippet depends on set order, an object
address or similar, and the freezer fails naming it: fix the snippet. Otherwise the
outcome (with the code's hash) is written to ``expected.json``.

Options: ``--check`` compares with the committed file instead of writing it (exit 1 on
any difference); ``--only ID ...`` runs just those snippets (and keeps the others'
entries); ``--show`` prints each outcome.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _plain import run_isolated
from _snippets import (
    DATA_DIR,
    DATA_EXPECTED_PATH,
    EXPECTED_PATH,
    Snippet,
    expected_python,
    load_expected,
    load_snippets,
    python_version,
)

SEEDS = (0, 1)
_FIELDS = ("stdout", "return_code", "error_type")


def _outcome(snippet: Snippet, seed: int) -> dict[str, Any]:
    result = run_isolated(snippet.code, seed)
    return {key: result[key] for key in _FIELDS} | {"stderr": result["stderr"]}


def freeze(snippets: list[Snippet], workers: int = 2) -> tuple[dict[str, Any], list[str]]:
    """Run every snippet under both seeds.

    Returns:
        (entries by id, messages naming the snippets whose seeds disagree).
    """
    jobs = [(snippet, seed) for snippet in snippets for seed in SEEDS]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda job: _outcome(*job), jobs))
    entries: dict[str, Any] = {}
    problems: list[str] = []
    for index, snippet in enumerate(snippets):
        first, second = results[2 * index], results[2 * index + 1]
        differs = [key for key in _FIELDS if first[key] != second[key]]
        if differs:
            problems.append(
                f"{snippet.id}: PYTHONHASHSEED=0 and =1 disagree on {', '.join(differs)}:\n"
                f"  seed 0: {first['stdout']!r}\n  seed 1: {second['stdout']!r}"
            )
            continue
        entries[snippet.id] = {"sha": snippet.sha} | {key: first[key] for key in _FIELDS}
        entries[snippet.id]["stderr_tail"] = first["stderr"].strip().splitlines()[-1:]
    return entries, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--only", nargs="+", metavar="ID", help="freeze just these snippets")
    parser.add_argument("--show", action="store_true", help="print each outcome")
    parser.add_argument(
        "--data", action="store_true", help="the numpy/pandas category (data/expected.json)"
    )
    args = parser.parse_args(argv)
    target = DATA_EXPECTED_PATH if args.data else EXPECTED_PATH

    snippets = load_snippets(DATA_DIR) if args.data else load_snippets()
    if args.only:
        unknown = set(args.only) - {s.id for s in snippets}
        if unknown:
            parser.error(f"unknown snippet ids: {', '.join(sorted(unknown))}")
        snippets = [s for s in snippets if s.id in args.only]
    entries, problems = freeze(snippets)
    if args.show:
        for snippet in snippets:
            entry = entries.get(snippet.id)
            print(f"--- {snippet.id}: {json.dumps(entry, indent=1)}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} snippet(s) depend on the hash seed; fix them", file=sys.stderr)
        return 1

    frozen_with = expected_python(target)
    if args.only and frozen_with not in (None, python_version()):
        print(f"{target.name} is from Python {frozen_with}; re-freeze all", file=sys.stderr)
        return 1
    known = load_expected(target)
    merged = dict(known) if args.only else {}
    merged.update(entries)
    merged = dict(sorted(merged.items()))
    if args.check:
        if frozen_with != python_version():
            print(f"{target.name} is from Python {frozen_with}", file=sys.stderr)
            return 1
        stale = sorted(k for k in set(known) | set(merged) if known.get(k) != merged.get(k))
        if stale:
            print(f"expected.json is stale for: {', '.join(stale)}", file=sys.stderr)
            return 1
        print(f"expected.json matches CPython for {len(entries)} snippets under both seeds")
        return 0
    document = {"python": python_version(), "snippets": merged}
    target.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    failing = sum(1 for e in entries.values() if e["return_code"])
    print(
        f"froze {len(entries)} snippets ({failing} end with return code 1) "
        f"under PYTHONHASHSEED={' and '.join(map(str, SEEDS))} -> {target}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

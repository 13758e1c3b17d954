"""Exactness harness for the restricted compile: two versions of ptcbox, same outputs?

A faster transform must compile every source to the same tree and refuse every source
with the same message. This compiles a large set of sources with two ``src`` trees (by
default main's checkout and this one), each in a subprocess, under both values of
``os_enforced_limits``, and compares per source:

* the final tree handed to ``compile()`` (``ast.dump(..., include_attributes=True)``,
  captured inside ``compile_snippet``'s real path, so every pass after the transform
  is included), or the refusal (exception type and message);
* the pre-flight check's analysis of the source (direct call sites, bound and read
  names, caught exceptions), when it parses.

Sources: every ``.py`` file of ``src``, ``tests`` and ``benchmarks`` (whole, and each
top-level statement on its own: whole modules are mostly refused, their functions mostly
compile), the corpus snippets (``tests/corpus/snippets``), every string literal in the
tests that parses as a module, and the cases of ``/work/shared/cases``.

Run::

    python benchmarks/transform_exactness.py                        # main vs this tree
    python benchmarks/transform_exactness.py --old /path/src --new /path/src
    python benchmarks/transform_exactness.py --show 123 --old ... --new ...  # one diff
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES = Path("/work/shared/cases/bug_cases.jsonl")


def _literals(tree: ast.AST) -> list[str]:
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 3
    ]


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _corpus_snippets(directory: Path) -> list[str]:
    out: list[str] = []
    for path in sorted(directory.glob("*.txt")):
        chunk: list[str] = []
        for line in path.read_text().splitlines():
            if line.startswith("### "):
                if chunk:
                    out.append("\n".join(chunk) + "\n")
                chunk = []
            else:
                chunk.append(line)
        if chunk:
            out.append("\n".join(chunk) + "\n")
    return out


def collect_sources(root: Path) -> list[str]:
    """Every source the harness compiles, deduplicated, in a stable order."""
    sources: list[str] = []
    files = sorted(
        p for part in ("src", "tests", "benchmarks") for p in (root / part).rglob("*.py")
    )
    for path in files:
        text = path.read_text()
        sources.append(text)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.splitlines(keepends=True)
        for stmt in tree.body:
            end = stmt.end_lineno or stmt.lineno
            first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
            sources.append("".join(lines[first - 1 : end]))
        if path.is_relative_to(root / "tests"):
            sources.extend(s for s in _literals(tree) if _parses(s))
    sources.extend(_corpus_snippets(root / "tests" / "corpus" / "snippets"))
    if CASES.exists():
        for line in CASES.read_text().splitlines():
            if line.strip():
                sources.append(json.loads(line)["code"])
    seen: set[str] = set()
    unique = []
    for source in sources:
        if source not in seen:
            seen.add(source)
            unique.append(source)
    return unique


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _outputs(source: str, os_enforced_limits: bool, full: bool) -> dict[str, Any]:
    """One source's final tree or refusal (run inside the version under test)."""
    import builtins

    from ptcbox.sandbox import SandboxPolicy, compile_snippet
    from ptcbox.sandbox import _compile as compile_module

    captured: list[str] = []

    def capture(tree: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(tree, ast.AST):
            captured.append(ast.dump(tree, include_attributes=True))
        return builtins.compile(tree, *args, **kwargs)

    compile_module.compile = capture  # type: ignore[attr-defined]
    try:
        compile_snippet(source, SandboxPolicy(), os_enforced_limits=os_enforced_limits, cache=False)
        result = "tree " + " | ".join(captured)
    except Exception as exc:  # the refusal is the result
        result = f"{type(exc).__name__}: {exc}"
    finally:
        del compile_module.compile  # type: ignore[attr-defined]
    return {"out": result if full else _digest(result), "tree": result.startswith("tree ")}


def _preflight(source: str, full: bool) -> str:
    from ptcbox.runtimes._shared import _preflight

    tree = _preflight._parse(source)
    if tree is None:
        return "unparsed"
    analysis = _preflight._analyse(source, tree)
    text = repr(analysis)
    return text if full else _digest(text)


def run_version(sources_file: str, out_file: str, only: int | None) -> None:
    """Inside a subprocess whose ``PYTHONPATH`` is the version under test."""
    sys.setrecursionlimit(3000)
    warnings.simplefilter("ignore")  # SyntaxWarnings of the test literals
    sources = json.loads(Path(sources_file).read_text())
    full = only is not None
    results = {}
    for index, source in enumerate(sources):
        if only is not None and index != only:
            continue
        strict = _outputs(source, False, full)
        entry = {
            "strict": strict["out"],
            "os_limits": _outputs(source, True, full)["out"],
            "preflight": _preflight(source, full),
            "compiled": strict["tree"],
        }
        results[index] = entry
    Path(out_file).write_text(json.dumps(results))


def _run(src: Path, sources_file: str, only: int | None) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = handle.name
    # sets print in hash order: the same seed in both versions
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}
    command = [sys.executable, __file__, "--worker", sources_file, out]
    if only is not None:
        command += ["--show", str(only)]
    subprocess.run(command, check=True, env=env)
    try:
        result: dict[str, Any] = json.loads(Path(out).read_text())
    finally:
        os.unlink(out)
    return result


def main(argv: list[str] | None = None) -> int:
    """Compare the two versions; exit status 1 when any source differs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, default=Path("/work/main/src"))
    parser.add_argument("--new", type=Path, default=ROOT / "src")
    parser.add_argument("--show", type=int, default=None, help="print one source's outputs")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        run_version(*args.worker, args.show)
        return 0
    sources = collect_sources(ROOT)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(sources, handle)
        sources_file = handle.name
    try:
        old = _run(args.old, sources_file, args.show)
        new = _run(args.new, sources_file, args.show)
    finally:
        os.unlink(sources_file)
    if args.show is not None:
        print(sources[args.show])
        for key in ("strict", "os_limits", "preflight"):
            same = old[str(args.show)][key] == new[str(args.show)][key]
            print(f"--- {key}: {'same' if same else 'DIFFERENT'}")
            if not same:
                print("old:", old[str(args.show)][key])
                print("new:", new[str(args.show)][key])
        return 0
    differing = [index for index in old if old[index] != new[index]]
    compiled = sum(1 for entry in old.values() if entry["compiled"])
    print(
        f"{len(sources)} sources x 2 modes: {len(differing)} differ "
        f"({compiled} compile under the strict mode, the rest are refused or do not parse)"
    )
    for index in differing[:20]:
        keys = [k for k in old[index] if old[index][k] != new[index][k]]
        print(f"  source {index}: {', '.join(keys)} differ (--show {index})")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())

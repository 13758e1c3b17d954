"""The layout's promises, read from the source with ``ast`` (nothing is imported).

1. The sandboxed child's code (``ptcbox.runtimes.subprocess.worker``) reaches, through
   every import it makes and every import of what it imports, only the standard library,
   the worker package itself, the wire module, ``ptcbox.sandbox`` and the short allowlist
   below: nothing of the host runtimes, the agent glue, pydantic or anyio.
2. No import cycle among ``src/`` modules.
3. No module in ``src/`` is over 450 lines.

"Every import" means every ``import``/``from ... import`` statement anywhere in a
module, function-level (lazy) imports included: a lazy import that dodges a cycle is
still a cycle. Imports inside ``if TYPE_CHECKING:`` are left out (they never run).
``from package import name`` counts as importing ``package.name`` when that is a module,
else ``package`` (its ``__init__``); the implicit import of a module's parent packages
is not counted (every re-exporting ``__init__`` would otherwise be a cycle).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_LINES = 450

WORKER = "ptcbox.runtimes.subprocess.worker"
WORKER_ALLOWED_PACKAGES = (WORKER, "ptcbox.sandbox")
"""The child's own package and the language-level policy it enforces (whole packages)."""

WORKER_ALLOWED_MODULES: dict[str, str] = {
    "ptcbox.runtimes._wire": "the protocol both sides speak",
    "ptcbox.errors": "the exception types snippets see (ToolError, the limit errors)",
    "ptcbox._jsonable": "turns the values a snippet hands back into JSON data (stdlib only)",
    "ptcbox._datavalues": "numpy/pandas values as plain data for the wire (imports neither)",
    "ptcbox.runtimes._shared._awaitable": "tool calls a snippet can await",
    "ptcbox.runtimes._shared._value": "the size caps of values crossing the tool boundary",
    "ptcbox.runtimes._shared._codec": "tool values keep their Python types (tagged JSON)",
    "ptcbox.runtimes._shared._hashes": "the codec refuses hash floods (stdlib and the ablation)",
    "ptcbox.runtimes._shared._frames": "a thread's frame for the timeout text (stdlib only)",
    "ptcbox.runtimes._shared._tool_errors": "a tool's exception rebuilt from data as its type",
    "ptcbox.runtimes._shared._name_hint": "a NameError's note: the closest tool names",
    "ptcbox.runtimes._shared._error_text": "the snippet's traceback text for the model",
    "ptcbox.runtimes._shared._output": "caps that error text as output is capped",
    "ptcbox.runtimes._shared._exit": "script exit semantics of SystemExit (sys.exit(0) succeeds)",
}
"""ptcbox modules outside those packages the child may import, each with the reason."""

WORKER_ALLOWED_THIRD_PARTY: dict[str, str] = {
    "orjson": "fast JSON on the wire (the worker documents it; a C extension, no imports)",
    "RestrictedPython": "the sandbox's compiler (through ptcbox.sandbox)",
    "regex": "the sandbox's re view matches with it (a C extension, through ptcbox.sandbox)",
}
"""Third-party distributions the child may import, each with the reason."""


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except those under ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def import_graph(root: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The import graph of the packages under ``root``.

    Returns:
        For each module: the modules under ``root`` it imports, and the top-level names
        of the other modules it imports (standard library and third-party).
    """
    paths = {_module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    internal: dict[str, set[str]] = {}
    external: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        outside: set[str] = set()
        for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                candidates = [
                    f"{module}.{alias.name}" if f"{module}.{alias.name}" in paths else module
                    for alias in node.names
                ]
            for candidate in candidates:
                found = candidate
                while found and found not in paths:
                    found = found.rpartition(".")[0]
                if found:
                    if found != name:
                        targets.add(found)
                else:
                    outside.add(candidate.partition(".")[0])
        internal[name] = targets
        external[name] = outside
    return internal, external


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a path ``[a, b, ..., a]``, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def _worker_may_import(module: str) -> bool:
    return module in WORKER_ALLOWED_MODULES or any(
        module == package or module.startswith(package + ".") for package in WORKER_ALLOWED_PACKAGES
    )


def worker_violations(
    internal: dict[str, set[str]], external: dict[str, set[str]], start: str
) -> list[str]:
    """Every import outside the child's allowlist reachable from package ``start``."""
    roots = [m for m in internal if m == start or m.startswith(start + ".")]
    chain: dict[str, list[str]] = {m: [m] for m in roots}
    queue = list(roots)
    problems: list[str] = []
    while queue:
        module = queue.pop(0)
        for name in sorted(external[module]):
            if name not in sys.stdlib_module_names and name not in WORKER_ALLOWED_THIRD_PARTY:
                problems.append(" -> ".join([*chain[module], name]))
        for target in sorted(internal[module]):
            if target in chain:
                continue
            chain[target] = [*chain[module], target]
            if _worker_may_import(target):
                queue.append(target)
            else:
                problems.append(" -> ".join(chain[target]))
    return problems


GRAPH, EXTERNAL = import_graph(SRC)


def test_the_worker_imports_only_the_stdlib_the_wire_the_sandbox_and_the_allowlist() -> None:
    assert WORKER in GRAPH, "the worker package moved: update WORKER"
    problems = worker_violations(GRAPH, EXTERNAL, WORKER)
    assert not problems, "the sandboxed child imports outside its allowlist:\n" + "\n".join(
        problems
    )


def test_the_worker_allowlist_is_all_in_use() -> None:
    reached: set[str] = set()
    queue = [m for m in GRAPH if m.startswith(WORKER)]
    while queue:
        module = queue.pop()
        for target in GRAPH[module]:
            if target not in reached:
                reached.add(target)
                queue.append(target)
    unused = sorted(set(WORKER_ALLOWED_MODULES) - reached)
    assert not unused, f"no longer imported by the worker, drop from the allowlist: {unused}"


def test_no_import_cycles_in_src() -> None:
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_is_over_450_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(SRC)} has {lines} lines; split it by concern"


def test_the_checks_see_lazy_imports_and_skip_type_checking_ones(tmp_path: Path) -> None:
    """The graph the tests above read: a planted cycle through a function-level import is
    found, one through ``if TYPE_CHECKING:`` is not, and a lazy host import is flagged."""
    pkg = tmp_path / "pkg"
    (pkg / "worker").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "worker" / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\n"
    )
    (pkg / "b.py").write_text("from pkg import a\n")
    graph, external = import_graph(tmp_path)
    assert find_cycle(graph) is None
    (pkg / "c.py").write_text("def f():\n    from . import d\n")
    (pkg / "d.py").write_text("import pkg.c\nimport anyio\n")
    graph, external = import_graph(tmp_path)
    assert find_cycle(graph) == ["pkg.c", "pkg.d", "pkg.c"]
    (pkg / "worker" / "main.py").write_text("import os\n\ndef run():\n    from pkg import d\n")
    graph, external = import_graph(tmp_path)
    assert worker_violations(graph, external, "pkg.worker") == ["pkg.worker.main -> pkg.d"]
    assert external["pkg.d"] == {"anyio"}

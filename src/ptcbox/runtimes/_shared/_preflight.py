# ruff: noqa: N802  (visit_<NodeClass> names, as ast.NodeVisitor dispatches on)
"""Pre-flight check of tool calls: wrong arguments fail before any tool runs.

Before a snippet runs, its syntax tree is searched for *direct calls of known tools by
name* (``get_weather(town="Oslo")``, the name not bound anywhere in the snippet) whose
positional count or keyword names the tool's signature cannot accept, and for calls of
names that are defined nowhere (not in the snippet, not a builtin, not a tool, not an
extra global or a session's global). Such a call fails every time it is reached, so the
execution fails at once, with the ``TypeError`` CPython would raise there (worded by the
tool's :class:`~ptcbox.projections.ArgumentBinder`, the signature in a PEP 678 note) or
the ``NameError`` with the closest tool names (:mod:`._name_hint`), on that line, and no
tool's side effect happens first (a retry of the whole snippet would otherwise repeat
them).

The check refuses only what CPython would also fail on, and only when it changes
something: a bad call is left to fail at run time, exactly as CPython fails it, when

- it sits inside a ``try`` whose handlers could catch the error (``except TypeError``,
  ``NameError``, ``Exception``, ``BaseException``, a bare ``except``, or a handler
  expression the check cannot read), or inside ``with suppress(...)``; a call inside a
  ``def`` or ``lambda`` counts as guarded when any ``try`` in the snippet could catch
  the error (the function may be called there);
- the snippet refers to no other tool (no other tool call could run before it, so the
  early failure would only lose the output printed before the error).

What the check cannot see (these fail at run time, as in CPython): calls through another
name (``f = get_weather; f(town=...)``), ``*args``/``**kwargs`` splats, calls through
variables, attributes or containers (``tools["x"]()``), names made dynamically, a tool
name the snippet rebinds anywhere, and (in a SubprocessRuntime session, whose globals
live in the worker) unknown names. Snippets over :data:`MAX_CHECKED_CHARS` characters,
or that do not parse, are not checked.
"""

from __future__ import annotations

import ast
import builtins
import functools
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ptcbox._result import CodeResult
from ptcbox.runtimes._shared._error_text import SNIPPET_FILENAME
from ptcbox.runtimes._shared._host import ToolSpec
from ptcbox.runtimes._shared._name_hint import name_hint

__all__ = ["MAX_CHECKED_CHARS", "PreflightFailure", "preflight", "refused"]

MAX_CHECKED_CHARS = 100_000
"""Longest snippet checked (characters): parsing is linear, but runs on the host."""

_BUILTIN_NAMES = frozenset(dir(builtins))
_CATCH_ALL = frozenset({"Exception", "BaseException"})
_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


@dataclass(frozen=True, slots=True)
class PreflightFailure:
    """Why the snippet was not run: the error text and type for its ``CodeResult``."""

    error: str
    error_type: str


def refused(failure: PreflightFailure, started: float) -> CodeResult:
    """The ``CodeResult`` of a snippet the check refused (``started``: perf_counter)."""
    return CodeResult(
        stdout="",
        stderr="",
        return_code=1,
        error=failure.error,
        error_type=failure.error_type,
        duration_s=time.perf_counter() - started,
    )


@dataclass(frozen=True, slots=True)
class _Site:
    name: str
    lineno: int
    where: str  # "<module>" or the enclosing function's name
    positional: int
    keywords: tuple[str, ...]
    splat: bool
    guards: frozenset[str] | None  # exception names caught around it; None: anything


@dataclass(frozen=True, slots=True)
class _Analysis:
    sites: tuple[_Site, ...]
    bound: frozenset[str]
    loaded: dict[str, int]  # name -> how many times it is read
    caught_anywhere: frozenset[str] | None
    lines: tuple[str, ...]


def preflight(
    code: str, specs: Mapping[str, ToolSpec], known: Collection[str] | None
) -> PreflightFailure | None:
    """Check the snippet's direct tool calls before it runs (see the module docstring).

    Args:
        code: The snippet.
        specs: The execution's tools by name.
        known: Other names the snippet's globals have (extra globals, a session's
            names); ``None`` when they are not known here: unknown names are not checked.

    Returns:
        The failure to report, or ``None`` to run the snippet.
    """
    if not specs or len(code) > MAX_CHECKED_CHARS:
        return None
    analysis = _analyse(code)
    if analysis is None:
        return None
    errors: dict[int, TypeError] = {}  # direct tool calls that fail whatever runs first
    for index, site in enumerate(analysis.sites):
        spec = specs.get(site.name)
        if spec is not None and not site.splat and site.name not in analysis.bound:
            try:
                spec.binder.bind((None,) * site.positional, dict.fromkeys(site.keywords))
            except TypeError as exc:
                errors[index] = exc
    useful = _useful_references(analysis, specs, errors)
    for index, site in enumerate(analysis.sites):
        failure = _check(site, analysis, specs, known, errors.get(index), useful)
        if failure is not None:
            return failure
    return None


def _useful_references(
    analysis: _Analysis, specs: Mapping[str, ToolSpec], errors: dict[int, TypeError]
) -> int:
    """How often the snippet reads a tool name other than as a call that cannot work."""
    count = sum(
        times
        for tool, times in analysis.loaded.items()
        if tool in specs and tool not in analysis.bound
    )
    return count - len(errors)


def _check(  # noqa: PLR0917 - one site's facts
    site: _Site,
    analysis: _Analysis,
    specs: Mapping[str, ToolSpec],
    known: Collection[str] | None,
    error: TypeError | None,
    useful: int,
) -> PreflightFailure | None:
    # Only worth refusing if some tool could run before this call (else CPython's own
    # failure at run time is the same, with the output printed before it kept).
    if useful <= 0:
        return None
    name = site.name
    if error is not None:
        if _guarded(site, analysis, "TypeError"):
            return None
        notes = [n for n in getattr(error, "__notes__", []) if isinstance(n, str)]
        return _failure(site, analysis, "TypeError", str(error), notes)
    if name in specs or known is None or name in known or name in _BUILTIN_NAMES:
        return None
    if name in analysis.bound or _guarded(site, analysis, "NameError"):
        return None
    hint = name_hint(name, specs.keys())
    notes = [hint] if hint else []
    return _failure(site, analysis, "NameError", f"name {name!r} is not defined", notes)


def _guarded(site: _Site, analysis: _Analysis, error: str) -> bool:
    guards = site.guards
    if site.where != "<module>":  # the function may be called inside any try
        guards = _union(guards, analysis.caught_anywhere)
    return guards is None or error in guards or not guards.isdisjoint(_CATCH_ALL)


def _failure(
    site: _Site, analysis: _Analysis, kind: str, message: str, notes: list[str]
) -> PreflightFailure:
    lines = [
        "Traceback (most recent call last):",
        f'  File "{SNIPPET_FILENAME}", line {site.lineno}, in {site.where}',
    ]
    if 0 < site.lineno <= len(analysis.lines) and analysis.lines[site.lineno - 1].strip():
        lines.append("    " + analysis.lines[site.lineno - 1].strip())
    lines.append(f"{kind}: {message}")
    lines.extend(notes)
    lines.append("(found before running: no code ran and no tool was called)")
    return PreflightFailure("\n".join(lines), kind)


@functools.lru_cache(maxsize=256)
def _analyse(code: str) -> _Analysis | None:
    try:
        tree = compile(code, SNIPPET_FILENAME, "exec", _FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    visitor = _Visitor()
    try:
        visitor.visit(tree)
    except RecursionError:
        return None
    return _Analysis(
        tuple(visitor.sites),
        frozenset(visitor.bound),
        visitor.loaded,
        visitor.caught_anywhere,
        tuple(code.splitlines()),
    )


def _caught(handler_type: ast.expr | None) -> frozenset[str] | None:
    """The exception names a handler catches; ``None``: anything (or unreadable)."""
    if handler_type is None:
        return None
    items = handler_type.elts if isinstance(handler_type, ast.Tuple) else [handler_type]
    names = set()
    for item in items:
        if isinstance(item, ast.Name):
            names.add(item.id)
        elif isinstance(item, ast.Attribute):
            names.add(item.attr)
        else:
            return None
    return frozenset(names)


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else a | b


_LEAVES = frozenset(
    {
        ast.Constant,
        ast.Pass,
        ast.Break,
        ast.Continue,
        *ast.expr_context.__subclasses__(),
        *ast.operator.__subclasses__(),
        *ast.boolop.__subclasses__(),
        *ast.unaryop.__subclasses__(),
        *ast.cmpop.__subclasses__(),
    }
)
"""Node classes with no child nodes and no rule: never entered."""


class _Visitor:
    """The walk of :func:`_analyse`: ``ast.NodeVisitor``'s order and rules, with the
    method looked up once per node class, the fields read directly and the leaves
    skipped (``NodeVisitor`` spent most of the check in ``generic_visit`` and in
    ``visit_Constant``'s deprecated-name lookups)."""

    def __init__(self) -> None:
        self.sites: list[_Site] = []
        self.bound: set[str] = set()
        self.loaded: dict[str, int] = {}
        self.caught_anywhere: frozenset[str] | None = frozenset()
        self._guards: frozenset[str] | None = frozenset()
        self._where = ["<module>"]

    def visit(self, node: ast.AST) -> None:
        cls = type(node)
        method = _METHODS.get(cls)
        if method is None:
            method = _METHODS[cls] = _method(cls)
        method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        visit = self.visit
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST) and type(item) not in _LEAVES:
                        visit(item)
            elif isinstance(value, ast.AST) and type(value) not in _LEAVES:
                visit(value)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loaded[node.id] = self.loaded.get(node.id, 0) + 1
        else:
            self.bound.add(node.id)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            splat = any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords
            )
            keywords = tuple(k.arg for k in node.keywords if k.arg is not None)
            self.sites.append(
                _Site(
                    func.id,
                    node.lineno,
                    self._where[-1],
                    len(node.args),
                    keywords,
                    splat,
                    self._guards,
                )
            )
        self.generic_visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                self.bound.add(arg.arg)
        name = node.name if not isinstance(node, ast.Lambda) else "<lambda>"
        self._where.append(name)
        self.generic_visit(node)
        self._where.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.bound.add(node.name)
        self._function(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815 - ast.NodeVisitor names

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._function(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bound.add(node.name)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        self.bound.add(node.asname or node.name.split(".")[0])

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.bound.update(node.names)

    visit_Nonlocal = visit_Global  # noqa: N815 - ast.NodeVisitor names

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bound.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.bound.add(node.rest)
        self.generic_visit(node)

    def _try(self, node: ast.Try | ast.TryStar) -> None:
        caught: frozenset[str] | None = frozenset()
        for handler in node.handlers:
            caught = _union(caught, _caught(handler.type))
        self.caught_anywhere = _union(self.caught_anywhere, caught)
        outer = self._guards
        self._guards = _union(outer, caught)
        for statement in node.body:
            self.visit(statement)
        self._guards = outer
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_Try = visit_TryStar = _try  # noqa: N815 - ast.NodeVisitor names

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        suppressing = any(
            isinstance(item.context_expr, ast.Call)
            and _callee(item.context_expr.func) == "suppress"
            for item in node.items
        )
        if not suppressing:
            self.generic_visit(node)
            return
        outer = self._guards
        self._guards = None
        self.caught_anywhere = None
        self.generic_visit(node)
        self._guards = outer

    visit_With = visit_AsyncWith = _with  # noqa: N815 - ast.NodeVisitor names


_METHODS: dict[type, Callable[[_Visitor, Any], None]] = {}


def _method(cls: type) -> Callable[[_Visitor, Any], None]:
    if cls in _LEAVES:
        return _skip
    method: Callable[[_Visitor, Any], None] | None = vars(_Visitor).get("visit_" + cls.__name__)
    return method if method is not None else _Visitor.generic_visit


def _skip(visitor: _Visitor, node: ast.AST) -> None:
    return None


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None

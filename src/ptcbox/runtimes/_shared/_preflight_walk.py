# ruff: noqa: N802  (visit_<NodeClass> names, as ast.NodeVisitor dispatches on)
"""The walk of the pre-flight check (:mod:`._preflight`): the direct calls by name, with
where they sit (function, enclosing ``try`` handlers), and the names bound and read.

``ast.NodeVisitor``'s order and rules, with the method looked up once per node class, the
fields read directly and the leaves skipped (``NodeVisitor`` spent most of the check in
``generic_visit`` and in ``visit_Constant``'s deprecated-name lookups).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Site", "Visitor", "union"]


@dataclass(frozen=True, slots=True)
class Site:
    name: str
    lineno: int
    where: str  # "<module>" or the enclosing function's name
    positional: int
    keywords: tuple[str, ...]
    splat: bool
    guards: frozenset[str] | None  # exception names caught around it; None: anything


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


def union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
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


class Visitor:
    """The walk of :func:`_analyse`: ``ast.NodeVisitor``'s order and rules, with the
    method looked up once per node class, the fields read directly and the leaves
    skipped (``NodeVisitor`` spent most of the check in ``generic_visit`` and in
    ``visit_Constant``'s deprecated-name lookups)."""

    def __init__(self) -> None:
        self.sites: list[Site] = []
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
                Site(
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
            caught = union(caught, _caught(handler.type))
        self.caught_anywhere = union(self.caught_anywhere, caught)
        outer = self._guards
        self._guards = union(outer, caught)
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


_METHODS: dict[type, Callable[[Visitor, Any], None]] = {}


def _method(cls: type) -> Callable[[Visitor, Any], None]:
    if cls in _LEAVES:
        return _skip
    method: Callable[[Visitor, Any], None] | None = vars(Visitor).get("visit_" + cls.__name__)
    return method if method is not None else Visitor.generic_visit


def _skip(visitor: Visitor, node: ast.AST) -> None:
    return None


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None

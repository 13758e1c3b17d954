"""A small, conservative flow analysis: which names surely hold numbers here?

The size guards on ``*``/``**``/``%`` cost a Python call each, which would make hot loops
several times slower. Where both operands of ``*`` (or the left operand of ``%``) are
provably ``int``/``float``, repetition and %-formatting are impossible and the operator can
stay native. A name is provably numeric at a program point when, on every path in its
scope, it was last bound by a numeric expression (a number literal, arithmetic on
numeric names) or it is the target of ``for i in range(...)`` (index of
``enumerate(...)``). The loop's iterable goes through ``_numiter_``, which checks at run
time that it really is a ``range``/``enumerate`` (a tool could shadow ``range``).

Conservative by construction: free variables of nested functions, lambdas, generator
expressions and class bodies are never numeric (they can change before the code runs);
names declared ``global``/``nonlocal`` anywhere are never numeric; after a compound
statement every name bound inside it is forgotten; at the top of a loop body every name
bound in the loop is forgotten (the back edge).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from ptcbox.sandbox._bindings import BindingIndex, source_facts

__all__ = ["NumericScopes", "bound_names"]


class _Visitor(Protocol):
    """The transformer, as far as the analysis needs it: it visits the nodes in between."""

    def visit(self, node: Any) -> Any: ...


_NUMERIC_BINOPS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.LShift,
    ast.RShift,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _children(node: Any) -> list[Any]:
    """The direct child nodes of ``node``, like ``ast.iter_child_nodes`` (faster)."""
    out: list[Any] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif type(value) is list:
            out.extend(item for item in value if isinstance(item, ast.AST))
    return out


def bound_names(nodes: list[Any]) -> set[str]:
    """Every name bound by ``nodes`` in their own scope (nested scopes excluded)."""
    found: set[str] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, _SCOPES):
            if not isinstance(node, ast.Lambda):
                found.add(node.name)
            continue  # a nested scope binds its names in its own namespace
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
        elif (isinstance(node, ast.ExceptHandler) and node.name) or (
            isinstance(node, ast.MatchAs | ast.MatchStar) and node.name
        ):
            found.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)
        stack.extend(_children(node))
    return found


class NumericScopes:
    """Tracks the provably-numeric names while the transformer walks the tree in order."""

    def __init__(self, source: str | None = None) -> None:
        self.current: set[str] = set()
        self._facts = source_facts(source) if source is not None else None
        self._root: ast.AST | None = None
        self._index: BindingIndex | None = None

    # -- the tree-wide facts ----------------------------------------------------------

    def _built(self, root: ast.AST) -> BindingIndex:
        """The :class:`~ptcbox.sandbox._bindings.BindingIndex` of the tree, built now if
        it was not. Built part way through the transform, it answers as one built
        before: the transform adds loads (guard calls, alive checks) and no binding,
        and moves no binding into another subtree or scope."""
        if self._index is None:
            self._index = BindingIndex(root)
        return self._index

    @property
    def never(self) -> set[str] | frozenset[str]:
        """Names declared ``global``/``nonlocal`` anywhere in the tree: never numeric."""
        root = self._root
        if root is None or (self._index is None and self._facts and not self._facts.declares):
            return frozenset()
        return self._built(root).never

    def _shadowed(self, builtin: str) -> bool:
        """Whether the tree binds ``builtin`` (``range``/``enumerate``) anywhere."""
        root = self._root
        if root is None:
            return False
        if self._index is None and self._facts and builtin not in self._facts.shadowable:
            return False
        return builtin in self._built(root).everywhere

    @property
    def resumes(self) -> bool:
        """Whether the tree may resume suspended code other than in generator expression
        steps (see :attr:`~ptcbox.sandbox._bindings.BindingIndex.resumes`); ``True``
        before the walk starts."""
        root = self._root
        if root is None:
            return True
        if self._index is None and self._facts and not self._facts.resumes:
            return False
        return self._built(root).resumes

    # -- scopes ---------------------------------------------------------------------------

    @contextmanager
    def scope(self, node: ast.AST) -> Iterator[None]:
        if self._root is None:
            self._root = node
            if self._facts is None:  # no source text to rule things out: index it all now
                self._built(node)
        if not isinstance(node, ast.Module):
            self.kill(getattr(node, "name", None))
        saved = self.current
        self.current = set()
        try:
            yield
        finally:
            self.current = saved
            if not isinstance(node, ast.Module | ast.Lambda):
                self.kill(getattr(node, "name", None))

    def not_bound_in(self, node: ast.AST, names: Collection[str]) -> set[str]:
        """Those of ``names`` that nothing inside ``node`` binds (in its own scope).

        Answered from the :class:`~ptcbox.sandbox._bindings.BindingIndex` of the tree (a
        binary search per name, so deep nesting stays linear; the index is built on the
        first question with names to answer); a node the transform made is walked. The
        transform only adds loads (guard calls), never bindings, so a subtree's bound
        names stay what they were before it was visited.
        """
        if not names:
            return set()
        root = self._root
        index = self._built(root) if root is not None else None
        if index is not None and index.knows(node):
            return index.not_bound_in(node, names)
        return set(names) - bound_names([node])

    def kill(self, name: str | None) -> None:
        if name is not None:
            self.current.discard(name)

    # -- queries ----------------------------------------------------------------------

    def is_numeric(self, node: ast.AST) -> bool:
        """True when ``node`` (an untransformed expression) surely evaluates to int/float."""
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float)
        if isinstance(node, ast.Name):
            return node.id in self.current
        if isinstance(node, ast.UnaryOp):
            return not isinstance(node.op, ast.Not) and self.is_numeric(node.operand)
        if isinstance(node, ast.BinOp):
            return (
                isinstance(node.op, _NUMERIC_BINOPS)
                and self.is_numeric(node.left)
                and self.is_numeric(node.right)
            )
        if isinstance(node, ast.IfExp):
            return self.is_numeric(node.body) and self.is_numeric(node.orelse)
        return False

    # -- statements -------------------------------------------------------------------

    def note_assign(self, node: ast.Assign, numeric_value: bool) -> None:
        if numeric_value:
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id not in self.never:
                    self.current.add(target.id)

    def note_annassign(self, node: ast.AnnAssign, numeric_value: bool) -> None:
        if numeric_value and isinstance(node.target, ast.Name) and node.target.id not in self.never:
            self.current.add(node.target.id)

    def note_augassign(self, name: str, numeric_result: bool) -> None:
        if numeric_result and name not in self.never:
            self.current.add(name)
        else:
            self.current.discard(name)

    def _numeric_target(self, target: ast.expr, iterable: ast.expr) -> str | None:
        """The loop target name that is surely numeric, if any."""
        if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)):
            return None
        func = iterable.func.id
        if func not in ("range", "enumerate") or self._shadowed(func):
            return None
        if func == "range" and isinstance(target, ast.Name):
            return target.id
        if (
            func == "enumerate"
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
            and isinstance(target.elts[0], ast.Name)
            and not any(isinstance(e, ast.Starred) for e in target.elts)
        ):
            return target.elts[0].id
        return None

    def _wrap_iter(self, iterable: ast.expr) -> ast.expr:
        name = ast.copy_location(ast.Name(id="_numiter_", ctx=ast.Load()), iterable)
        call = ast.Call(func=name, args=[iterable], keywords=[])
        return ast.copy_location(call, iterable)

    def visit_loop(self, tf: _Visitor, node: ast.For) -> ast.For:
        """Visit a ``for`` statement (target, iter, body, else) with the flow rules."""
        before = set(self.current)
        kept = self.not_bound_in(node, before)
        numeric = self._numeric_target(node.target, node.iter)
        node.iter = tf.visit(node.iter)
        node.target = tf.visit(node.target)
        if numeric is not None and numeric not in self.never:
            node.iter = self._wrap_iter(node.iter)
        self.current = set(kept)
        if numeric is not None and numeric not in self.never:
            self.current.add(numeric)
        node.body = _visit_block(tf, node.body)
        self.current = set(kept)
        node.orelse = _visit_block(tf, node.orelse)
        self.current = kept
        return node

    def visit_compound(self, tf: _Visitor, node: Any, *, loop: bool) -> Any:
        """Visit if/while/try/with: every block starts from what held before."""
        before = set(self.current)
        kept = self.not_bound_in(node, before)
        start = set(kept) if loop else before
        for field, value in ast.iter_fields(node):
            self.current = set(start)
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    setattr(node, field, _visit_block(tf, value))
                else:
                    new_items = []
                    for item in value:
                        new = tf.visit(item)
                        if new is not None:
                            new_items.append(new)
                    setattr(node, field, new_items)
            elif isinstance(value, ast.AST):
                setattr(node, field, tf.visit(value))
            if not loop and field in ("test", "items"):
                start = set(self.current)  # condition/context bound before the blocks
            elif isinstance(node, ast.Try) and field == "body":
                start = set(kept)
        self.current = kept
        return node

    def visit_comprehension(self, tf: _Visitor, node: Any) -> Any:
        """Comprehensions: targets of range()/enumerate() generators are numeric inside."""
        outer = self.current
        lazy = isinstance(node, ast.GeneratorExp)
        # a comprehension is a loop: every name bound anywhere in it (targets, walrus)
        # may hold a later iteration's value
        self.current = set() if lazy else self.not_bound_in(node, outer)
        for gen in node.generators:
            numeric = self._numeric_target(gen.target, gen.iter)
            gen.iter = tf.visit(gen.iter)
            gen.target = tf.visit(gen.target)
            if numeric is not None and numeric not in self.never:
                gen.iter = self._wrap_iter(gen.iter)
                self.current.add(numeric)
            gen.ifs = [tf.visit(cond) for cond in gen.ifs]
        if isinstance(node, ast.DictComp):
            node.key = tf.visit(node.key)
            node.value = tf.visit(node.value)
        else:
            node.elt = tf.visit(node.elt)
        self.current = self.not_bound_in(node, outer)
        return node


def _visit_block(tf: _Visitor, stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in stmts:
        new = tf.visit(stmt)
        if new is None:
            continue
        if isinstance(new, list):
            out.extend(new)
        else:
            out.append(new)
    return out

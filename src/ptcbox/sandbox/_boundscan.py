"""One pass over a snippet's tree for the numeric flow analysis's name sets.

:class:`~ptcbox.sandbox._numeric.NumericScopes` needs, before the transform starts, the
names declared ``global``/``nonlocal`` anywhere and every name bound anywhere, and,
while it walks, the names each loop, compound statement and comprehension binds in its
own scope (:func:`~ptcbox.sandbox._numeric.bound_names`). Computed separately these
walk the tree once for the first and once more per compound node for the second (a
loop nested ``k`` deep is walked ``k`` times): together about half of the restricted
compile of a realistic 13-line snippet. :func:`scan_bindings` computes all of them in
one post-order pass, with exactly the rules of the two separate walks (kept there as
the reference; ``tests/sandbox/test_boundscan.py`` checks both give the same sets).
"""

from __future__ import annotations

import ast
from typing import Any, NamedTuple

__all__ = ["Bindings", "scan_bindings"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
"""Scopes with a name (a lambda binds nothing in the enclosing scope)."""

KEPT = frozenset(
    {
        ast.For, ast.AsyncFor, ast.While, ast.If, ast.Try, ast.With, ast.AsyncWith,
        ast.Match, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
        *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
    }
)  # fmt: skip
"""Node classes whose own bound names are kept (those the analysis asks about)."""

_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops"})
"""Fields holding context and operator singletons: they never bind a name."""

_FIELDS: dict[type, tuple[str, ...]] = {}


class Bindings(NamedTuple):
    """What :func:`scan_bindings` found.

    Attributes:
        never: Names declared ``global`` or ``nonlocal`` anywhere in the tree.
        everywhere: Every name bound anywhere (nested scopes and arguments included).
        own: ``id(node) -> (node, names)`` for every node of a :data:`KEPT` class: the
            names it binds in its own scope (nested scopes excluded, their own names
            included), as :func:`~ptcbox.sandbox._numeric.bound_names` gives them. The
            node is kept so that an id reused by a later object never matches.
    """

    never: set[str]
    everywhere: set[str]
    own: dict[int, tuple[ast.AST, frozenset[str]]]


def scan_bindings(tree: ast.AST) -> Bindings:
    """Walk ``tree`` once and return its :class:`Bindings`.

    Raises:
        RecursionError: The tree nests too deeply (one frame per level: the transform,
            which takes several per level, would fail on it first).
    """
    found = Bindings(set(), set(), {})
    _scan(tree, found)
    return found


def _fields(cls: type) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _SKIPPED_FIELDS)  # type: ignore[attr-defined]
    return fields


def _scan(node: Any, found: Bindings) -> set[str] | None:
    """The names ``node`` binds in its own scope (``None``: none); fills ``found``."""
    cls = type(node)
    if cls is ast.Name:
        if isinstance(node.ctx, ast.Load):
            return None
        found.everywhere.add(node.id)
        return {node.id}
    if cls is ast.Constant:
        return None
    own: set[str] | None = None
    name: str | None = None
    if cls is ast.alias:
        name = (node.asname or node.name).split(".")[0]
    elif cls is ast.arg:
        found.everywhere.add(node.arg)  # bound in the function's scope, not its parent's
    elif cls is ast.Global or cls is ast.Nonlocal:
        found.never.update(node.names)
    elif cls is ast.ExceptHandler or cls is ast.MatchAs or cls is ast.MatchStar:
        name = node.name or None
    elif cls is ast.MatchMapping and node.rest:
        own = {node.rest}  # bound here, but not among the names bound anywhere
    scope = cls in _SCOPES or cls is ast.Lambda
    for field in _fields(cls):
        value = getattr(node, field, None)
        if type(value) is list:
            for item in value:
                if isinstance(item, ast.AST):
                    sub = _scan(item, found)
                    if sub and not scope:
                        own = sub if own is None else own | sub
        elif isinstance(value, ast.AST):
            sub = _scan(value, found)
            if sub and not scope:
                own = sub if own is None else own | sub
    if scope:
        if cls is ast.Lambda:
            return None
        found.everywhere.add(node.name)
        return {node.name}
    if name is not None:
        found.everywhere.add(name)
        own = {name} if own is None else own | {name}
    if cls in KEPT:
        found.own[id(node)] = (node, frozenset(own or ()))
    return own

"""Where each name is bound, found in one walk of the tree (issue 13, item 3).

The numeric flow analysis (:mod:`ptcbox.sandbox._numeric`) must forget, after a
compound statement, every name bound anywhere inside it. Walking each compound
statement's subtree for that is quadratic in nesting depth: an ``if``/``elif`` chain of
depth *n* is *n* nested ``If`` nodes, and walking each one's subtree visits
*n*, *n*-1, ... nodes (a 2 KiB snippet took ~100 ms). :class:`BindingIndex` walks the
tree once instead, numbering the nodes in pre-order, so that every subtree is a range of
numbers; for every (scope, name) it keeps the sorted numbers of the nodes that bind the
name. "Is ``x`` bound inside this node?" is then one binary search, and forgetting the
bound names of a compound statement costs a search per name the analysis tracks there,
not a walk of the statement.

The binding rules are those of :func:`ptcbox.sandbox._numeric.bound_names`: a name
bound by a nested function, lambda or class body belongs to that scope; the name of a
``def``/``class`` statement belongs to the scope around it.

That walk costs about as much as a third of the transform (issue 16), and most snippets
never ask a question only it can answer: :func:`source_facts` rules out from the text
what it can (no ``global``, nothing that resumes, ``range``/``enumerate`` not rebound),
and the analysis builds the index at the first question left open.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["BindingIndex", "SourceFacts", "source_facts"]

_SCOPE_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})
_BINDERS = frozenset(
    {
        *_SCOPE_TYPES,
        ast.Name,
        ast.Global,
        ast.Nonlocal,
        ast.arg,
        ast.alias,
        ast.ExceptHandler,
        ast.MatchAs,
        ast.MatchStar,
        ast.MatchMapping,
    }
)
_LEAVES = frozenset({ast.Constant, ast.Pass, ast.Break, ast.Continue})
_SKIPPED = frozenset({"ctx", "op"})  # shared singletons (Load, Add ...): they bind nothing
_FIELDS: dict[type, tuple[str, ...]] = {}  # node class -> its fields but _SKIPPED
# the nodes whose bound names the analysis asks for
_ASKED_TYPES = frozenset(
    {
        ast.For,
        ast.AsyncFor,
        ast.While,
        ast.If,
        ast.With,
        ast.AsyncWith,
        ast.Try,
        ast.Match,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
        ast.GeneratorExp,
    }
)


_RESUMING = frozenset({ast.Yield, ast.YieldFrom, ast.Await, ast.AsyncFor, ast.AsyncWith})
_SHADOWABLE = ("range", "enumerate")
_CALLED = r"[ \t\f]*(?:\\(?:\r\n?|\n)[ \t\f]*)*\("
"""What follows a called name: ``(`` on the same logical line. Not a newline: a name an
``import``/``del`` binds may end its line, and the next line open with ``(``."""
_MAY_BIND = {  # an occurrence not followed by "(", or a def/class of the name
    name: (
        re.compile(rf"{name}(?<!\w{name})(?!\w)(?!{_CALLED})"),
        re.compile(rf"def(?<!\wdef)[\s\\]+{name}(?!\w)"),
        re.compile(rf"class(?<!\wclass)[\s\\]+{name}(?!\w)"),
    )
    for name in _SHADOWABLE
}


@dataclass(frozen=True, slots=True)
class SourceFacts:
    """What a snippet's text rules out about its tree, so that a walk of the whole tree
    (:class:`BindingIndex`) is needed only when the text leaves the question open.

    Keywords are ASCII words of the text: no ``yield``/``await``/``async`` in it, no
    node that resumes (:attr:`BindingIndex.resumes`); no ``global``/``nonlocal``, no
    declared name (:attr:`BindingIndex.never`). Names are the text's words when it is
    ASCII (else NFKC may make one of other characters), and the only binding of a name
    followed by ``(`` is ``def``/``class`` *name*: so a builtin of
    :data:`_SHADOWABLE` whose every occurrence in an ASCII text is called (``range(``)
    and not defined is bound nowhere.

    Attributes:
        resumes: The text has a word that can make code resume.
        declares: The text has ``global`` or ``nonlocal``.
        shadowable: The builtins of ``range``/``enumerate`` the tree may bind.
    """

    resumes: bool
    declares: bool
    shadowable: frozenset[str]


def source_facts(source: str) -> SourceFacts:
    """The :class:`SourceFacts` of ``source`` (the text the tree was parsed from)."""
    ascii_text = source.isascii()
    return SourceFacts(
        resumes="yield" in source or "await" in source or "async" in source,
        declares="global" in source or "nonlocal" in source,
        shadowable=frozenset(
            name
            for name, patterns in _MAY_BIND.items()
            if not ascii_text
            or (name in source and any(p.search(source) is not None for p in patterns))
        ),
    )


class BindingIndex:
    """The bound names of every subtree of ``tree``, from one pre-order walk.

    Also collects, for the whole tree, the names declared ``global``/``nonlocal``
    (:attr:`never`) and every name bound anywhere, arguments included (:attr:`everywhere`),
    and whether any code in it can be suspended and resumed other than in a generator
    expression's steps (:attr:`resumes`: a ``yield``, ``await``, ``async for``/``with``
    or ``async`` comprehension clause; see :mod:`ptcbox.sandbox._resume`).

    Args:
        tree: The module, before the transform changes it (the transform adds loads,
            never bindings, so the answers stay right while it runs).
    """

    def __init__(self, tree: ast.AST) -> None:
        self.never: set[str] = set()
        self.everywhere: set[str] = set()
        self.resumes = False
        # id(node) -> (node, first number, one past the last, number of its scope); the
        # node is kept so that its id is not reused by a node the transform makes
        self._spans: dict[int, tuple[ast.AST, int, int, int]] = {}
        self._sites: dict[tuple[int, str], list[int]] = {}
        sites = self._sites
        parents: list[int] = []
        inner: list[int] = []  # by number: the scope of the node's children
        asked: list[tuple[ast.AST, int, int]] = []
        nodes: list[Any] = [tree]
        ups: list[int] = [-1]
        while nodes:  # depth first, in pre-order: every subtree gets a range of numbers
            node = nodes.pop()
            parent = ups.pop()
            cls = type(node)
            if cls in _LEAVES or (cls is ast.Name and type(node.ctx) is ast.Load):
                continue  # binds nothing, holds nothing: left unnumbered
            number = len(parents)
            parents.append(parent)
            scope = inner[parent] if parent >= 0 else 0
            inner.append(number if cls in _SCOPE_TYPES else scope)
            if cls in _BINDERS:
                name = self._binding(node)
                if name is not None:
                    found = sites.get((scope, name))
                    if found is None:
                        sites[scope, name] = [number]
                    else:
                        found.append(number)
            if cls in _ASKED_TYPES:
                asked.append((node, number, scope))
            if cls in _RESUMING or (cls is ast.comprehension and node.is_async):
                self.resumes = True
            fields = _FIELDS.get(cls)
            if fields is None:
                fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _SKIPPED)
            children: list[Any] = []
            for field in fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    children += [item for item in value if isinstance(item, ast.AST)]
                elif isinstance(value, ast.AST):
                    children.append(value)
            if children:
                children.reverse()  # the first child comes out first
                nodes += children
                ups += [number] * len(children)
        sizes = [1] * len(parents)
        for number in range(len(parents) - 1, 0, -1):
            sizes[parents[number]] += sizes[number]
        for node, number, scope in asked:
            self._spans[id(node)] = (node, number, number + sizes[number], scope)

    def _binding(self, node: Any) -> str | None:
        """The name ``node`` itself binds (in its scope), noting the tree-wide sets."""
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                return None
            name: str = node.id
        elif isinstance(node, ast.Global | ast.Nonlocal):
            self.never.update(node.names)
            return None
        elif isinstance(node, ast.Lambda):
            return None
        elif isinstance(node, ast.arg):
            self.everywhere.add(node.arg)
            return None
        elif isinstance(node, ast.alias):
            name = (node.asname or node.name).split(".")[0]
        elif isinstance(node, ast.MatchMapping):
            return node.rest  # not in "everywhere", as before
        else:  # def, class, except ... as, match capture
            name = getattr(node, "name", None)  # type: ignore[assignment]
            if not name:
                return None
        self.everywhere.add(name)
        return name

    def knows(self, node: ast.AST) -> bool:
        """Whether ``node`` was in the tree (else ask :func:`bound_names`)."""
        span = self._spans.get(id(node))
        return span is not None and span[0] is node

    def not_bound_in(self, node: ast.AST, names: Iterable[str]) -> set[str]:
        """Those of ``names`` that nothing inside ``node`` binds in ``node``'s scope.

        Costs one binary search per name. ``node`` must be one :meth:`knows`.
        """
        _, first, end, scope = self._spans[id(node)]
        sites = self._sites
        out: set[str] = set()
        for name in names:
            numbers = sites.get((scope, name))
            if numbers is not None:
                at = bisect_left(numbers, first)
                if at < len(numbers) and numbers[at] < end:
                    continue
            out.add(name)
        return out

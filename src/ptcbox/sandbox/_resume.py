"""Alive checks where suspended snippet code resumes (red-team R1, issue 12).

:mod:`ptcbox.sandbox._alive` checks ``_alive_.running`` where snippet code can *start*
when nobody runs the snippet (function bodies, handlers, ``finally`` blocks). A
generator or coroutine can also be *resumed* by whoever holds it: the garbage collector
closing a suspended generator calls ``close()`` of the iterator it delegates to, which
the snippet can set to a builtin that drives another generator of its own
(``functools.partial(next, gen)``), in whatever host thread runs the collection. The
steps of a generator expression, and the code after a ``yield``/``await``, then ran in
that thread with no check and no time limit. This pass, run after
:class:`~ptcbox.sandbox._transform.PtcTransformer` when alive checks are on, adds:

* a check as the first condition of every ``for`` clause of a generator expression
  (and of a comprehension that awaits), so each step is checked;
* a check right after every resumption point: after a statement whose value is the
  ``yield``/``await`` (``x = await f()``, ``yield v``), else in the expression itself
  (``(<yield>, _alive_.running)[0]``); ``return await f()`` needs none (nothing of the
  frame runs after it but ``finally`` blocks, which are checked);
* at the start of the body of ``async for`` (each step awaits ``__anext__``) and
  ``async with`` (``__aenter__``), and after both statements (the last ``__anext__``,
  ``__aexit__``).

Cost: one attribute read of a ``threading.local`` per step or resumption (~20 ns; see
``benchmarks/sandbox_overhead.py``).
"""

from __future__ import annotations

import ast
from typing import Any

from ptcbox.sandbox._alive import alive_check, alive_read
from ptcbox.sandbox._astnodes import copy_locations, visit_children

__all__ = ["add_resume_checks", "check_steps"]

_RESUME = (ast.Yield, ast.YieldFrom, ast.Await)
_LEAVES = (
    ast.Name,
    ast.Constant,
    ast.expr_context,
    ast.operator,
    ast.boolop,
    ast.unaryop,
    ast.cmpop,
)
"""Nodes the pass never changes and never needs to enter (no resumption below them)."""
_DISPATCH: dict[type, Any] = {}


def _awaits(node: ast.AST) -> bool:
    return any(isinstance(child, ast.Await) for child in ast.walk(node))


def _checked_read(where: ast.AST) -> ast.expr:
    check = alive_read()
    copy_locations(check, where)
    return check


def check_steps(node: ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp) -> None:
    """Start each ``for`` clause's conditions of ``node`` with a read of
    ``_alive_.running``: each step of a generator expression (or of a comprehension that
    awaits) checks that its execution still runs, wherever it is resumed."""
    for clause in node.generators:
        clause.ifs.insert(0, _checked_read(clause.iter))


def _leaf(visitor: Any, node: ast.AST) -> ast.AST:
    return node


class _ResumeChecks(ast.NodeTransformer):
    # -- traversal: ``ast.NodeTransformer``'s, with the method looked up once per class
    # and the leaves skipped (a third of a realistic snippet's restricted compile)

    def visit(self, node: ast.AST) -> Any:
        cls = type(node)
        method = _DISPATCH.get(cls)
        if method is None:
            if issubclass(cls, _LEAVES):
                method = _leaf
            else:
                method = vars(_ResumeChecks).get(
                    "visit_" + cls.__name__, _ResumeChecks.generic_visit
                )
            _DISPATCH[cls] = method
        return method(self, node)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        return visit_children(self.visit, node)

    # -- steps of generator expressions and awaiting comprehensions --------------------

    def _check_steps(self, node: Any) -> Any:
        self.generic_visit(node)
        check_steps(node)
        return node

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return self._check_steps(node)

    def _comprehension(self, node: Any) -> Any:
        if any(clause.is_async for clause in node.generators) or _awaits(node):
            return self._check_steps(node)
        return self.generic_visit(node)

    visit_ListComp = visit_SetComp = visit_DictComp = _comprehension  # noqa: N815

    # -- resumption inside an expression --------------------------------------------

    def _resumed(self, node: ast.expr) -> Any:
        self.generic_visit(node)
        pair = ast.Tuple(elts=[node, _checked_read(node)], ctx=ast.Load())
        new = ast.Subscript(value=pair, slice=ast.Constant(0), ctx=ast.Load())
        copy_locations(pair, node)
        copy_locations(new.slice, node)
        copy_locations(new, node)
        return new

    visit_Yield = visit_YieldFrom = visit_Await = _resumed  # noqa: N815

    # -- resumption as a statement's whole value --------------------------------------

    def _statement(self, node: Any) -> Any:
        value = node.value
        if not isinstance(value, _RESUME):
            return self.generic_visit(node)
        value.value = self.visit(value.value) if value.value is not None else None
        for field in ("targets", "target", "annotation"):
            if hasattr(node, field) and getattr(node, field) is not None:
                old = getattr(node, field)
                setattr(
                    node,
                    field,
                    [self.visit(t) for t in old] if type(old) is list else self.visit(old),
                )
        return [node, alive_check(node)]

    visit_Expr = visit_Assign = visit_AnnAssign = _statement  # noqa: N815

    def visit_Return(self, node: ast.Return) -> Any:
        value = node.value
        if isinstance(value, _RESUME):  # nothing of this frame runs after it
            if value.value is not None:
                value.value = self.visit(value.value)
            return node
        return self.generic_visit(node)

    # -- implicit awaits ----------------------------------------------------------------

    def _implicit(self, node: Any) -> Any:
        self.generic_visit(node)
        node.body.insert(0, alive_check(node))
        return [node, alive_check(node)]

    visit_AsyncFor = visit_AsyncWith = _implicit  # noqa: N815


def add_resume_checks(tree: ast.Module) -> None:
    """Insert the checks described in the module docstring into ``tree`` (in place)."""
    _ResumeChecks().visit(tree)

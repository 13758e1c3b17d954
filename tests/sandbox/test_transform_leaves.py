"""The transform keeps childless nodes without visiting them only where RestrictedPython's
rule would keep them as they are (``return self.node_contents_visit(node)``)."""

from __future__ import annotations

import ast
from typing import Any

from ptcbox.sandbox._leaves import _LEAVES, unchanged_leaves
from ptcbox.sandbox._transform import PtcTransformer


def test_every_leaf_kept_unvisited_is_one_restrictedpython_keeps_as_is() -> None:
    kept = unchanged_leaves(PtcTransformer)
    assert {ast.Constant, ast.Load, ast.Store, ast.Add, ast.Eq, ast.And, ast.Not} <= kept
    for leaf in kept:
        node = leaf(value=1) if leaf is ast.Constant else leaf()
        errors: list[str] = []
        method = getattr(PtcTransformer, "visit_" + leaf.__name__)
        assert method(PtcTransformer(errors), node) is node
        assert errors == []
    # no rule of RestrictedPython for these (they are not made by the parser): not kept
    assert {ast.AugLoad, ast.AugStore, ast.Param}.isdisjoint(kept)
    assert kept <= set(_LEAVES)


class _Refuses(PtcTransformer):
    """A transformer with a rule of its own for two leaves (the positive control)."""

    def visit_Constant(self, node: ast.Constant) -> Any:
        self.error(node, "no constants")
        return node

    def visit_Mult(self, node: ast.Mult) -> Any:
        self.error(node, "no multiplication")
        return node


def test_a_leaf_with_a_rule_of_its_own_is_visited() -> None:
    assert ast.Constant not in unchanged_leaves(_Refuses)
    assert ast.Mult not in unchanged_leaves(_Refuses)
    errors: list[str] = []
    _Refuses(errors).visit(ast.parse("x = [1] * n\n"))
    assert any("no constants" in e for e in errors)
    assert any("no multiplication" in e for e in errors)
    plain: list[str] = []
    PtcTransformer(plain).visit(ast.parse("x = [1] * n\n"))
    assert plain == []

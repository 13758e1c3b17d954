# ruff: noqa: N802  (ast.NodeTransformer dispatches on visit_<NodeClass> names)
"""The transformer's rules for ``match`` statements (a mixin of ``PtcTransformer``).

Capture names are checked like any binding; value and class patterns must be plain
dotted names whose parts pass the attribute rules; positional class patterns read the
attributes named by ``cls.__match_args__`` natively, so those names are checked at run
time (``_match_args_``) before the statement runs.
"""

from __future__ import annotations

import ast
import copy
from typing import TYPE_CHECKING, Any

from RestrictedPython.transformer import RestrictingNodeTransformer

from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._astnodes import copy_locations, global_call
from ptcbox.sandbox._dunders import GUARDED_DUNDER_READS
from ptcbox.sandbox._names import NOT_NATIVE_ATTRS, VALUE_CHECKED_ATTRS, is_private

if TYPE_CHECKING:
    from ptcbox.sandbox._numeric import NumericScopes

__all__ = ["PatternVisitors"]

_ATTRIBUTE_OFF = off("attribute")  # test-only ablation (see _ablation)


class PatternVisitors(RestrictingNodeTransformer):
    """``visit_Match`` and the checks of its patterns."""

    if TYPE_CHECKING:  # provided by PtcTransformer
        numeric: NumericScopes

        def check_attr(self, node: ast.AST, attr: str, *, store: bool) -> None: ...

    def visit_Match(self, node: ast.Match) -> Any:
        # Positional class patterns read the attributes named by cls.__match_args__
        # natively; check those names at run time, before the match statement.
        classes = [
            copy.deepcopy(sub.cls)
            for case in node.cases
            for sub in ast.walk(case.pattern)
            if isinstance(sub, ast.MatchClass) and sub.patterns
        ]
        check: ast.stmt | None = None
        if classes:
            check = ast.Expr(value=global_call("_match_args_", *[self.visit(c) for c in classes]))
            copy_locations(check, node)
        node.subject = self.visit(node.subject)
        before = self.numeric.not_bound_in(node, self.numeric.current)
        for case in node.cases:
            self.numeric.current = set(before)
            self._check_pattern(case.pattern)
            if case.guard is not None:
                case.guard = self.visit(case.guard)
            new_body: list[ast.stmt] = []
            for stmt in case.body:
                new = self.visit(stmt)
                if new is None:
                    continue
                new_body.extend(new if isinstance(new, list) else [new])
            case.body = new_body or [ast.Pass()]
        self.numeric.current = before
        return node if check is None else [check, node]

    def _check_dotted(self, node: ast.expr) -> None:
        """Pattern values/classes stay native dotted names; check each part."""
        while isinstance(node, ast.Attribute):
            self.check_attr(node, node.attr, store=False)
            if (
                is_private(node.attr)
                or node.attr in VALUE_CHECKED_ATTRS
                or node.attr in GUARDED_DUNDER_READS  # native here: never unguarded
            ) and not _ATTRIBUTE_OFF:
                # a value pattern hands the value to the subject's __eq__
                self.error(node, f'attribute "{node.attr}" is not allowed in a pattern')
            node = node.value
        if isinstance(node, ast.Name):
            self.visit_Name(node)

    def _check_pattern(self, pattern: ast.pattern) -> None:
        for sub in ast.walk(pattern):
            if isinstance(sub, ast.MatchAs | ast.MatchStar):
                self.check_name(sub, sub.name)
            elif isinstance(sub, ast.MatchMapping):
                self.check_name(sub, sub.rest)
            elif isinstance(sub, ast.MatchValue):
                if isinstance(sub.value, ast.Attribute | ast.Name):
                    self._check_dotted(sub.value)
            elif isinstance(sub, ast.MatchClass):
                self._check_dotted(sub.cls)
                for attr in sub.kwd_attrs:
                    if (attr.startswith("_") or attr in NOT_NATIVE_ATTRS) and not _ATTRIBUTE_OFF:
                        self.error(sub, f'attribute "{attr}" is not allowed in a class pattern')

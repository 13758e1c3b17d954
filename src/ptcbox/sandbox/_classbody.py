# ruff: noqa: N802  (ast.NodeTransformer dispatches on visit_<NodeClass> names)
"""The transformer's rules for ``__slots__`` and ``try/except*`` (a mixin of
``PtcTransformer``).

``__slots__`` may be bound in a class body to a literal of plain names (no dunders but
``__dict__``/``__weakref__``, no reserved or restricted names: each would become a
descriptor on the class). ``try/except*`` runs with the check of ``_exceptstar`` first.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from RestrictedPython.transformer import RestrictingNodeTransformer

from ptcbox.sandbox._astnodes import copy_locations, global_call
from ptcbox.sandbox._exceptstar import EXCEPT_STAR_GUARD

__all__ = ["ClassBodyVisitors"]


class ClassBodyVisitors(RestrictingNodeTransformer):
    """``__slots__`` literals and ``visit_TryStar``."""

    if TYPE_CHECKING:  # provided by PtcTransformer
        in_class_body: bool

        def check_name(
            self, node: Any, name: str | None, allow_magic_methods: bool = False
        ) -> None: ...

        def _attr_name(self, attr: str) -> str: ...

        def visit_Try(self, node: Any) -> Any: ...

    def _check_slots(self, node: ast.Assign) -> bool:
        """``__slots__ = ("a", "_b")`` in a class body: a literal of plain names only."""
        if not (
            self.in_class_body
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "__slots__"
        ):
            return False
        value = node.value
        items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        for item in items:
            name = item.value if isinstance(item, ast.Constant) else None
            if not isinstance(name, str) or not name.isidentifier():
                self.error(node, "__slots__ must be a literal tuple or list of names")
            elif name not in ("__dict__", "__weakref__"):
                self.check_name(node, self._attr_name(name))
        return True

    def visit_TryStar(self, node: Any) -> Any:
        """``try/except*``: the body's exception passes ``_except_star_`` first."""
        node = self.visit_Try(node)
        name = "_exc_star_"
        check = ast.Expr(value=global_call(EXCEPT_STAR_GUARD, ast.Name(id=name, ctx=ast.Load())))
        handler = ast.ExceptHandler(
            type=ast.Name(id="BaseException", ctx=ast.Load()),
            name=name,
            body=[check, ast.Raise(exc=None, cause=None)],
        )
        inner = ast.Try(body=node.body, handlers=[handler], orelse=[], finalbody=[])
        for new in (check, handler, inner, *handler.body):
            copy_locations(new, node)
        node.body = [inner]
        return node

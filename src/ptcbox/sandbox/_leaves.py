"""Which childless nodes the transform may keep without visiting them.

RestrictedPython allows a context (``Load``), an operator, a constant, ``pass`` ... with
a rule of one line, ``return self.node_contents_visit(node)``: for a node without
children that is the node as it is. A call per such leaf was a third of the transform's
visits (issue 16); the transform keeps them in place while the rule in use for their
class is exactly that one (a subclass with a rule of its own is visited as before).
"""

from __future__ import annotations

import ast
from typing import Any

from RestrictedPython.transformer import RestrictingNodeTransformer

__all__ = ["allows_as_is", "unchanged_leaves"]

_LEAVES = (
    ast.Constant,
    ast.Pass,
    ast.Break,
    ast.Continue,
    *ast.expr_context.__subclasses__(),
    *ast.operator.__subclasses__(),
    *ast.boolop.__subclasses__(),
    *ast.unaryop.__subclasses__(),
    *ast.cmpop.__subclasses__(),
)
"""Node classes without child nodes."""

_AS_IS = RestrictingNodeTransformer.visit_Load.__code__


def allows_as_is(method: Any, node_class: type) -> bool:
    """Whether ``method`` is RestrictedPython's rule for ``node_class`` and that rule is
    ``return self.node_contents_visit(node)`` (allowed, children visited): a node of a
    class in :data:`_LEAVES` is then returned as it is."""
    code = getattr(method, "__code__", None)
    return (
        node_class in _LEAVES
        and getattr(method, "__qualname__", "")
        == f"RestrictingNodeTransformer.visit_{node_class.__name__}"
        and code is not None
        and code.co_code == _AS_IS.co_code
        and code.co_names == _AS_IS.co_names
    )


_UNCHANGED: dict[type, frozenset[type]] = {}  # transformer class: the leaves it keeps as is


def unchanged_leaves(transformer_class: type) -> frozenset[type]:
    """The classes of :data:`_LEAVES` whose rule in ``transformer_class`` keeps a node as
    it is (see :func:`allows_as_is`): the transform keeps them without a visit."""
    found = _UNCHANGED.get(transformer_class)
    if found is None:
        found = _UNCHANGED[transformer_class] = frozenset(
            leaf
            for leaf in _LEAVES
            if allows_as_is(getattr(transformer_class, "visit_" + leaf.__name__, None), leaf)
        )
    return found

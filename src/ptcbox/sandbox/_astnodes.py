"""Small AST builders the transformer and its visitor mixins share."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

__all__ = ["const_number", "copy_locations", "global_call", "load_name", "visit_children"]


def load_name(id_: str) -> ast.Name:
    """``id_`` as a ``Load`` name."""
    return ast.Name(id=id_, ctx=ast.Load())


_POSITION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def copy_locations(new: Any, old: Any) -> None:
    """Give ``new`` the position of ``old``, and the nodes below it that have none too.

    RestrictedPython's ``copy_locations`` runs ``ast.fix_missing_locations`` over the
    whole subtree of ``new``, which holds the original expression it wraps: wrapping
    each level of ``x.a.a.a...`` walked everything below it again, quadratic in the
    nesting (1 KB of attribute chains took 0.7 s, red-team R3). This stops at nodes that
    have a position (the parser's, or ones positioned earlier), so it only visits the
    nodes the transform just made.
    """
    position = tuple(getattr(old, name, None) for name in _POSITION)
    _place(new, position)
    stack = [new]
    while stack:  # ast.iter_child_nodes' children, read from the fields directly
        parent = stack.pop()
        for field in parent._fields:
            value = getattr(parent, field, None)
            for child in value if type(value) is list else (value,):
                if not isinstance(child, ast.AST):
                    continue
                if "lineno" in child._attributes:
                    if getattr(child, "lineno", None) is not None:
                        continue  # positioned, and so is everything below it
                    _place(child, position)
                if child._fields:  # a context or operator singleton has no children
                    stack.append(child)


def _place(node: Any, position: tuple[Any, ...]) -> None:
    node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = position


def global_call(func: str, *args: ast.expr) -> ast.Call:
    """A call of the global ``func`` with positional ``args``."""
    return ast.Call(func=load_name(func), args=list(args), keywords=[])


def const_number(node: ast.expr) -> int | float | complex | None:
    """The value of a number literal (``-3`` included); ``None`` for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, int | float | complex) and not isinstance(value, bool):
            return value
    return None


def visit_children(
    visit: Callable[[ast.AST], Any], node: ast.AST, unchanged: frozenset[type] = frozenset()
) -> ast.AST:
    """``ast.NodeTransformer.generic_visit`` with ``visit``: visit every child and splice
    the results (``None`` drops a child, a list replaces it), reading ``node._fields``
    directly instead of through generators. Children of the ``unchanged`` classes (ones
    ``visit`` returns as they are) are kept without the call. Returns ``node``."""
    for field in node._fields:
        old = getattr(node, field, None)
        if type(old) is list:
            new_values: list[Any] = []
            for item in old:
                if type(item) in unchanged or not isinstance(item, ast.AST):
                    new_values.append(item)  # a name, None (a ``**`` key), a leaf
                    continue
                value = visit(item)
                if value is None:
                    continue
                if isinstance(value, ast.AST):
                    new_values.append(value)
                else:
                    new_values.extend(value)  # a visitor returned several statements
            old[:] = new_values
        elif isinstance(old, ast.AST) and type(old) not in unchanged:
            new = visit(old)
            if new is None:
                delattr(node, field)
            else:
                setattr(node, field, new)
    return node

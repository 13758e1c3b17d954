# ruff: noqa: N802  (ast.NodeTransformer dispatches on visit_<NodeClass> names)
"""The transformer's arithmetic and format size guards (a mixin of ``PtcTransformer``).

``**``, ``<<``, ``*`` and ``%`` (also augmented) and format specs go through the size
guards of :mod:`ptcbox.sandbox._limits` unless the operands are provably small numbers
(:mod:`ptcbox.sandbox._numeric`); ``*``, ``%`` and format specs are left native when
``size_guards`` is off (a worker process: the OS enforces the memory limit).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from RestrictedPython.transformer import RestrictingNodeTransformer

from ptcbox.sandbox._astnodes import const_number, copy_locations, global_call, load_name
from ptcbox.sandbox._names import VALUE_CHECKED_ATTRS, is_private

if TYPE_CHECKING:
    from ptcbox.sandbox._numeric import NumericScopes

__all__ = ["SizeGuardVisitors"]

_GUARDED_BINOPS: dict[type[ast.operator], str] = {
    ast.Pow: "_pow_",
    ast.LShift: "_lshift_",
    ast.Mult: "_mul_",
    ast.Mod: "_mod_",
}
_GUARDED_AUGOPS: dict[type[ast.operator], str] = {
    ast.Pow: "_ipow_",
    ast.LShift: "_ilshift_",
    ast.Mult: "_imul_",
    ast.Mod: "_imod_",
}
_INPLACE: dict[type[ast.operator], str] = {
    ast.Add: "iadd",
    ast.Sub: "isub",
    ast.Mult: "imul",
    ast.MatMult: "imatmul",
    ast.Div: "itruediv",
    ast.FloorDiv: "ifloordiv",
    ast.Mod: "imod",
    ast.Pow: "ipow",
    ast.LShift: "ilshift",
    ast.RShift: "irshift",
    ast.BitAnd: "iand",
    ast.BitXor: "ixor",
    ast.BitOr: "ior",
}
_SMALL_INT = 16
_SMALL_SHIFT = 64
_SMALL_WIDTH_DIGITS = 6


class SizeGuardVisitors(RestrictingNodeTransformer):
    """``visit_BinOp``, ``visit_AugAssign`` and ``visit_FormattedValue`` with size guards."""

    if TYPE_CHECKING:  # provided by PtcTransformer
        size_guards: bool
        numeric: NumericScopes

        def _attr_name(self, attr: str) -> str: ...

        def check_attr(self, node: ast.AST, attr: str, *, store: bool) -> None: ...

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        node = self.node_contents_visit(node)
        spec = node.format_spec
        if spec is None or not self.size_guards:
            return node
        static = isinstance(spec, ast.JoinedStr) and all(
            isinstance(v, ast.Constant) and isinstance(v.value, str) for v in spec.values
        )
        if static:
            text = "".join(v.value for v in spec.values)  # type: ignore[attr-defined]
            digits = "".join(c if c.isdigit() else " " for c in text).split()
            if all(len(d) <= _SMALL_WIDTH_DIGITS for d in digits):
                return node
        call = global_call("_format_", node.value, spec, ast.Constant(node.conversion))
        copy_locations(call, node)
        new = ast.FormattedValue(value=call, conversion=-1, format_spec=None)
        copy_locations(new, node)
        return new

    def _binop_is_safe(self, node: ast.BinOp) -> bool:
        left, right = node.left, node.right
        op = node.op
        lnum, rnum = const_number(left), const_number(right)
        if isinstance(op, ast.Mult):
            if isinstance(lnum, float | complex) or isinstance(rnum, float | complex):
                return True
            if (type(lnum) is int and abs(lnum) <= _SMALL_INT) or (
                type(rnum) is int and abs(rnum) <= _SMALL_INT
            ):
                return True
            return self.numeric.is_numeric(left) and self.numeric.is_numeric(right)
        if isinstance(op, ast.Pow):
            if isinstance(rnum, float | complex) or isinstance(lnum, float | complex):
                return True
            return type(rnum) is int and abs(rnum) <= _SMALL_INT
        if isinstance(op, ast.LShift):
            return type(rnum) is int and rnum <= _SMALL_SHIFT
        if isinstance(op, ast.Mod):
            if lnum is not None or self.numeric.is_numeric(left):
                return True
            if isinstance(left, ast.Constant) and isinstance(left.value, str | bytes):
                text = left.value if isinstance(left.value, str) else left.value.decode("latin-1")
                if "*" in text:
                    return False
                digits = "".join(c if c.isdigit() else " " for c in text).split()
                return all(len(d) <= _SMALL_WIDTH_DIGITS for d in digits)
            return False
        return True

    def _guarded(self, op: ast.operator) -> bool:
        return self.size_guards or isinstance(op, ast.Pow | ast.LShift)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        node = self.node_contents_visit(node)
        guard = _GUARDED_BINOPS.get(type(node.op))
        if guard is None or not self._guarded(node.op) or self._binop_is_safe(node):
            return node
        new = global_call(guard, node.left, node.right)
        copy_locations(new, node)
        return new

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        target = node.target
        op = node.op
        guard = _GUARDED_AUGOPS.get(type(op)) if self._guarded(op) else None
        # the left operand is the target's current value; only a Name can be known numeric
        left_id = target.id if isinstance(target, ast.Name) else "_ptc_unknown_"
        left = ast.Name(id=left_id, ctx=ast.Load())
        probe = ast.BinOp(left=left, op=op, right=node.value)
        if guard is not None and self._binop_is_safe(probe):
            guard = None
        numeric_result = self.numeric.is_numeric(probe)
        node.value = self.visit(node.value)
        if isinstance(target, ast.Name):
            self.check_name(target, target.id)
            self.numeric.note_augassign(target.id, numeric_result)
            if guard is None:
                return node
            new = ast.Assign(
                targets=[ast.Name(id=target.id, ctx=ast.Store())],
                value=global_call(guard, ast.Name(id=target.id, ctx=ast.Load()), node.value),
            )
            copy_locations(new, node)
            return new
        if isinstance(target, ast.Attribute):
            attr = self._attr_name(target.attr)
            self.check_attr(target, attr, store=True)
            writer = "_write_private_" if is_private(attr) else "_write_"
            written = global_call(writer, self.visit(target.value))
            copy_locations(written, target)
            if guard is None and attr not in VALUE_CHECKED_ATTRS:
                target.value = written
                return node
            # the read goes through the getattr guard: ``s.format += x`` would otherwise
            # hand the real str.format to x.__radd__
            how: ast.expr = load_name(guard) if guard else ast.Constant(_INPLACE[type(op)])
            expr = global_call("_augattr_", written, ast.Constant(attr), how, node.value)
            stmt = ast.Expr(value=expr)
            copy_locations(stmt, node)
            return stmt
        if isinstance(target, ast.Subscript):
            obj = self.visit(target.value)
            key = self.visit(target.slice)
            if guard is None:
                target.value, target.slice = obj, key
                return node
            stmt = ast.Expr(value=global_call("_augitem_", obj, key, load_name(guard), node.value))
            copy_locations(stmt, node)
            return stmt
        self.error(node, "unsupported augmented assignment target")  # pragma: no cover
        return node

# ruff: noqa: N802  (ast.NodeTransformer dispatches on visit_<NodeClass> names)
"""The AST transformer: RestrictedPython's, extended for the code models actually write.

Starts from :class:`RestrictedPython.transformer.RestrictingNodeTransformer` (which refuses
every node it has no rule for) and changes it where ptcbox's guard model differs:

* async code (``async def``, ``await`` also at top level, ``async for/with``), ``match``,
  ``nonlocal``, annotated assignments and augmented assignment to attributes and
  subscripts are allowed;
* ``print`` is an ordinary builtin (the sandbox's ``print`` writes to the execution's
  stdout), not RestrictedPython's ``printed`` collector;
* subscripts, iteration and unpacking run natively: ptcbox guards attributes, not items;
* attribute reads of a few hot names run natively (see ``NATIVE_ATTRS``), others go
  through ``_getattr_``; ``_private`` names are allowed on the snippet's own objects;
* ``**``, ``<<``, ``*`` and ``%`` go through size guards unless the operands are provably
  small numbers (skipped entirely when ``os_enforced_limits``);
* the last expression statement is stored in ``VALUE_NAME`` (REPL-style value);
* ``try/except*`` stays refused (CVE-2025-22153).
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from RestrictedPython.transformer import RestrictingNodeTransformer

from ptcbox.sandbox._names import (
    ALLOWED_DUNDER_DEFS,
    ALLOWED_DUNDER_NAMES,
    ALLOWED_DUNDER_READS,
    NATIVE_ATTRS,
    NOT_NATIVE_ATTRS,
    RESTRICTED_ATTRS,
    VALUE_CHECKED_ATTRS,
    is_dunder,
    is_private,
    is_reserved,
    restricted_reason,
)
from ptcbox.sandbox._numeric import NumericScopes

__all__ = ["ALIVE_ATTR", "ALIVE_NAME", "VALUE_NAME", "PtcTransformer"]

VALUE_NAME = "_ptc_value_"
"""Global that receives the value of a snippet's trailing expression (REPL-style).

Reserved: snippets cannot bind ``_x_``-style names, so only the compiled rewrite of the
last expression statement writes it."""

ALIVE_NAME = "_alive_"
ALIVE_ATTR = "running"
"""Restricted code reads ``_alive_.running`` at the start of every function body, lambda,
``except`` handler and ``finally`` block (unless ``alive_checks=False``).

Those are the places where snippet code can start running when nobody runs the
snippet: the garbage collector closes a suspended generator or coroutine of the snippet
(``GeneratorExit`` at its ``yield``/``await``, so its handlers run, and whatever its
unwinding calls: ``__exit__`` of its ``with`` blocks, ``close()`` of an iterator it
delegates to) on whatever thread runs the collection, possibly long after the
execution ended. The thread runtime binds ``_alive_`` to a ``threading.local`` whose
``running`` is set only in the execution's thread while its snippet code runs, so such
code fails at its first line with ``AttributeError`` (every handler starts with the
check, so none can swallow it). A C-level attribute read, ~50 ns per function call.
Elsewhere ``running`` is always there. A worker process needs no check: it dies with
its execution.

Not covered (red-team R1, open): the items of a generator expression, and the steps of
a generator after a ``yield``, when host code drives them through a builtin the snippet
installed as a hook (``close`` of an iterator a generator delegates to, say). Checks
there would cost every item and every ``yield``."""

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
_DISPATCH: dict[tuple[type, type], Any] = {}  # (transformer class, node class): visit method


def _name(id_: str) -> ast.Name:
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
    for name, value in zip(_POSITION, position, strict=True):
        setattr(new, name, value)
    stack = [new]
    while stack:
        parent = stack.pop()
        for child in ast.iter_child_nodes(parent):
            if "lineno" in child._attributes:
                if getattr(child, "lineno", None) is not None:
                    continue  # positioned, and so is everything below it
                for name, value in zip(_POSITION, position, strict=True):
                    setattr(child, name, value)
            stack.append(child)


def _alive() -> ast.Attribute:
    return ast.Attribute(value=_name(ALIVE_NAME), attr=ALIVE_ATTR, ctx=ast.Load())


def _call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=_name(func), args=list(args), keywords=[])


def _const_number(node: ast.expr) -> int | float | complex | None:
    """The value of a number literal (``-3`` included); ``None`` for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, int | float | complex) and not isinstance(value, bool):
            return value
    return None


class PtcTransformer(RestrictingNodeTransformer):
    """RestrictedPython's transformer with ptcbox's rules (see the module docstring).

    Args:
        errors, warnings, used_names: As for ``RestrictingNodeTransformer``.
        size_guards: Compile ``*``/``%``/format specs through the size guards (``**`` and
            ``<<`` are always guarded: in a subprocess too, a clear error at once beats
            burning the whole timeout on one C call).
        alive_checks: Start every function body, lambda, ``except`` handler and
            ``finally`` block with a read of ``_alive_.running`` (see
            :data:`ALIVE_ATTR`).
    """

    def __init__(
        self,
        errors: list[str] | None = None,
        warnings: list[str] | None = None,
        used_names: dict[str, bool] | None = None,
        *,
        size_guards: bool = True,
        alive_checks: bool = True,
    ) -> None:
        super().__init__(errors, warnings, used_names)
        self.size_guards = size_guards
        self.alive_checks = alive_checks
        self.class_names: list[str] = []
        self.in_class_body = False
        self.has_value = False
        self.numeric = NumericScopes()

    # -- dispatch -----------------------------------------------------------------------

    def visit(self, node: Any) -> Any:
        """``ast.NodeVisitor.visit`` with the method looked up once per node class."""
        key = (type(self), type(node))
        method = _DISPATCH.get(key)
        if method is None:
            name = "visit_" + type(node).__name__
            method = _DISPATCH[key] = getattr(type(self), name, type(self).generic_visit)
        return method(self, node)

    def node_contents_visit(self, node: Any) -> Any:
        """``ast.NodeTransformer.generic_visit`` (visit every child, splice the results),
        reading ``node._fields`` directly instead of through generators."""
        for field in node._fields:
            old = getattr(node, field, None)
            if type(old) is list:
                new_values: list[Any] = []
                for item in old:
                    if not isinstance(item, ast.AST):  # a name, or None (a ``**`` key)
                        new_values.append(item)
                        continue
                    value = self.visit(item)
                    if value is None:
                        continue
                    if isinstance(value, ast.AST):
                        new_values.append(value)
                    else:
                        new_values.extend(value)  # a visitor returned several statements
                old[:] = new_values
            elif isinstance(old, ast.AST):
                new = self.visit(old)
                if new is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new)
        return node

    # -- names ------------------------------------------------------------------------

    def check_name(self, node: Any, name: str | None, allow_magic_methods: bool = False) -> None:
        if name is None or name == "_":
            return
        if is_dunder(name):
            if not (allow_magic_methods and name in ALLOWED_DUNDER_DEFS):
                self.error(node, f'"{name}" is a reserved name (special names cannot be bound)')
        elif is_reserved(name):
            self.error(
                node,
                f'"{name}" is a reserved name: names that start and end with "_" belong '
                "to the sandbox",
            )
        elif self.in_class_body and name in RESTRICTED_ATTRS:
            # class attributes (and dataclass fields, which feed __match_args__) must not
            # be named like interpreter internals
            self.error(node, f'"{name}" is a restricted name and cannot be a class attribute')

    def visit_Name(self, node: ast.Name) -> Any:
        if isinstance(node.ctx, ast.Load):
            if is_reserved(node.id) and node.id not in ALLOWED_DUNDER_NAMES:
                self.error(node, f'"{node.id}" is a reserved name and cannot be used')
            self.used_names[node.id] = True
        else:
            self.check_name(node, node.id)
            self.numeric.kill(node.id)
        return node

    def _attr_name(self, attr: str) -> str:
        """The attribute name after private-name mangling (``__x`` in class ``C``)."""
        if attr.startswith("__") and not attr.endswith("__") and self.class_names:
            owner = self.class_names[-1].lstrip("_")
            if owner:
                return f"_{owner}{attr}"
        return attr

    def check_attr(self, node: ast.AST, attr: str, *, store: bool) -> None:
        if attr in RESTRICTED_ATTRS:
            self.error(node, f'"{attr}" is a restricted attribute ({restricted_reason(attr)})')
        elif is_dunder(attr):
            if store or attr not in ALLOWED_DUNDER_READS:
                hint = "; use type(obj) instead" if attr == "__class__" else ""
                self.error(node, f'access to attribute "{attr}" is not allowed{hint}')
        elif is_reserved(attr):
            self.error(node, f'attribute "{attr}" is reserved for the sandbox')

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        attr = self._attr_name(node.attr)
        self.check_attr(node, attr, store=not isinstance(node.ctx, ast.Load))
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            if attr in NATIVE_ATTRS:
                return node
            guard = "_getattr_private_" if is_private(attr) else "_getattr_"
            new: ast.expr = _call(guard, node.value, ast.Constant(attr))
            copy_locations(new, node)
            return new
        guard = "_write_private_" if is_private(attr) else "_write_"
        wrapped = _call(guard, node.value)
        copy_locations(wrapped, node.value)
        node.value = wrapped
        return node

    # -- things RestrictedPython guards and ptcbox runs natively ----------------------

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        return self.node_contents_visit(node)

    def visit_For(self, node: ast.For) -> Any:
        return self.numeric.visit_loop(self, node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> Any:
        return self.numeric.visit_compound(self, node, loop=True)

    def visit_While(self, node: ast.While) -> Any:
        return self.numeric.visit_compound(self, node, loop=True)

    def visit_If(self, node: ast.If) -> Any:
        return self.numeric.visit_compound(self, node, loop=False)

    def visit_Try(self, node: ast.Try) -> Any:
        node = self.numeric.visit_compound(self, node, loop=False)
        if node.finalbody:
            self._check_alive(node.finalbody, node.finalbody[0])
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> Any:
        self.check_name(node, node.name)
        self.numeric.kill(node.name)
        node = self.node_contents_visit(node)
        self._check_alive(node.body, node)
        return node

    def _check_alive(
        self, body: list[ast.stmt], where: ast.stmt | ast.excepthandler, at: int = 0
    ) -> None:
        """Insert ``_alive_.running`` at ``body[at]`` (see :data:`ALIVE_ATTR`)."""
        if self.alive_checks:
            check = ast.Expr(value=_alive())
            copy_locations(check, where)
            body.insert(at, check)

    def visit_alias(self, node: ast.alias) -> Any:
        self.numeric.kill((node.asname or node.name).split(".")[0])
        return node

    def visit_comprehension(self, node: ast.comprehension) -> Any:
        return self.node_contents_visit(node)

    def visit_ListComp(self, node: ast.ListComp) -> Any:
        return self.numeric.visit_comprehension(self, node)

    def visit_SetComp(self, node: ast.SetComp) -> Any:
        return self.numeric.visit_comprehension(self, node)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return self.numeric.visit_comprehension(self, node)

    def visit_DictComp(self, node: ast.DictComp) -> Any:
        return self.numeric.visit_comprehension(self, node)

    def visit_Assign(self, node: ast.Assign) -> Any:
        numeric = self.numeric.is_numeric(node.value)
        node.value = self.visit(node.value)  # evaluated before the targets are bound
        node.targets = [self.visit(t) for t in node.targets]
        self.numeric.note_assign(node, numeric)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        numeric = node.value is not None and self.numeric.is_numeric(node.value)
        if node.value is not None:
            node.value = self.visit(node.value)
        node.annotation = self.visit(node.annotation)
        node.target = self.visit(node.target)
        self.numeric.note_annassign(node, numeric)
        return node

    def visit_With(self, node: ast.With) -> Any:
        return self.numeric.visit_compound(self, node, loop=False)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> Any:
        return self.numeric.visit_compound(self, node, loop=False)

    def visit_Await(self, node: ast.Await) -> Any:
        return self.node_contents_visit(node)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> Any:
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_Global(self, node: ast.Global) -> Any:
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_TryStar(self, node: ast.AST) -> Any:
        self.error(
            node,
            "try/except* is not allowed in the sandbox (RestrictedPython refuses it since "
            "CVE-2025-22153); catch the ExceptionGroup with a plain `except ExceptionGroup "
            "as eg:` and inspect eg.exceptions",
        )

    def visit_Call(self, node: ast.Call) -> Any:
        for kw in node.keywords:
            if kw.arg is not None and (kw.arg.startswith("__") or is_reserved(kw.arg)):
                self.error(node, f'keyword argument "{kw.arg}" is not allowed')
        return super().visit_Call(node)

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
        call = _call("_format_", node.value, spec, ast.Constant(node.conversion))
        copy_locations(call, node)
        new = ast.FormattedValue(value=call, conversion=-1, format_spec=None)
        copy_locations(new, node)
        return new

    # -- arithmetic size guards -------------------------------------------------------

    def _binop_is_safe(self, node: ast.BinOp) -> bool:
        left, right = node.left, node.right
        op = node.op
        lnum, rnum = _const_number(left), _const_number(right)
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
        new = _call(guard, node.left, node.right)
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
                value=_call(guard, ast.Name(id=target.id, ctx=ast.Load()), node.value),
            )
            copy_locations(new, node)
            return new
        if isinstance(target, ast.Attribute):
            attr = self._attr_name(target.attr)
            self.check_attr(target, attr, store=True)
            writer = "_write_private_" if is_private(attr) else "_write_"
            written = _call(writer, self.visit(target.value))
            copy_locations(written, target)
            if guard is None and attr not in VALUE_CHECKED_ATTRS:
                target.value = written
                return node
            # the read goes through the getattr guard: ``s.format += x`` would otherwise
            # hand the real str.format to x.__radd__
            how: ast.expr = _name(guard) if guard else ast.Constant(_INPLACE[type(op)])
            expr = _call("_augattr_", written, ast.Constant(attr), how, node.value)
            stmt = ast.Expr(value=expr)
            copy_locations(stmt, node)
            return stmt
        if isinstance(target, ast.Subscript):
            obj = self.visit(target.value)
            key = self.visit(target.slice)
            if guard is None:
                target.value, target.slice = obj, key
                return node
            stmt = ast.Expr(value=_call("_augitem_", obj, key, _name(guard), node.value))
            copy_locations(stmt, node)
            return stmt
        self.error(node, "unsupported augmented assignment target")  # pragma: no cover
        return node

    # -- definitions ----------------------------------------------------------------------

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Any:
        self.check_name(node, node.name, allow_magic_methods=self.in_class_body)
        self.check_function_argument_names(node)
        outer = self.in_class_body
        self.in_class_body = False
        with self.numeric.scope(node):
            node = self.node_contents_visit(node)
        self.in_class_body = outer
        first = node.body[0]
        docstring = (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        )
        self._check_alive(node.body, first, at=1 if docstring else 0)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        return self._visit_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        return self._visit_function(node)

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        self.check_function_argument_names(node)
        with self.numeric.scope(node):
            node = self.node_contents_visit(node)
        if self.alive_checks:  # `_alive_.running and body`: running is True
            body = ast.BoolOp(op=ast.And(), values=[_alive(), node.body])
            copy_locations(body, node.body)
            node.body = body
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        self.check_name(node, node.name)
        for kw in node.keywords:
            if kw.arg is None or kw.arg == "metaclass":
                self.error(node, "class keyword arguments metaclass= and ** are not allowed")
            elif kw.arg.startswith("_"):
                self.error(node, f'class keyword "{kw.arg}" is not allowed')
        # decorators and bases are evaluated outside the class scope
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        self.class_names.append(node.name)
        outer = self.in_class_body
        self.in_class_body = True
        with self.numeric.scope(node):
            body: list[ast.stmt] = []
            for stmt in node.body:
                new = self.visit(stmt)
                if new is None:
                    continue
                body.extend(new if isinstance(new, list) else [new])
            node.body = body or [ast.Pass()]
        self.in_class_body = outer
        self.class_names.pop()
        return node

    # -- match ------------------------------------------------------------------------

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
            check = ast.Expr(value=_call("_match_args_", *[self.visit(c) for c in classes]))
            copy_locations(check, node)
        node.subject = self.visit(node.subject)
        before = set(self.numeric.current) - self.numeric.bound(node)
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
            if is_private(node.attr) or node.attr in VALUE_CHECKED_ATTRS:
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
                    if attr.startswith("_") or attr in NOT_NATIVE_ATTRS:
                        self.error(sub, f'attribute "{attr}" is not allowed in a class pattern')

    # -- module -----------------------------------------------------------------------

    def visit_Module(self, node: ast.Module) -> Any:
        with self.numeric.scope(node):
            node = self.node_contents_visit(node)
        if node.body and isinstance(node.body[-1], ast.Expr):
            last = node.body[-1]
            store = ast.Assign(targets=[ast.Name(id=VALUE_NAME, ctx=ast.Store())], value=last.value)
            copy_locations(store, last)
            node.body[-1] = store
            self.has_value = True
        return node

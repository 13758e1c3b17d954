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

This module keeps the dispatch and the rules for names, attributes, calls and
definitions; the rest is split by concern: the size guards of arithmetic and format
specs (:mod:`ptcbox.sandbox._sizeguards`) and the ``match`` rules
(:mod:`ptcbox.sandbox._patterns`) are mixins of :class:`PtcTransformer`; the alive checks
are :mod:`ptcbox.sandbox._alive`, the flow analysis that proves operands numeric
:mod:`ptcbox.sandbox._numeric`, and the AST builders :mod:`ptcbox.sandbox._astnodes`.
"""

from __future__ import annotations

import ast
from typing import Any

from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._alive import alive_check, alive_read
from ptcbox.sandbox._astnodes import copy_locations, global_call, visit_children
from ptcbox.sandbox._classbody import ClassBodyVisitors
from ptcbox.sandbox._dunders import GUARDED_DUNDER_READS
from ptcbox.sandbox._leaves import allows_as_is, unchanged_leaves
from ptcbox.sandbox._names import (
    ALLOWED_DUNDER_DEFS,
    ALLOWED_DUNDER_NAMES,
    ALLOWED_DUNDER_READS,
    NATIVE_ATTRS,
    RESTRICTED_ATTRS,
    is_dunder,
    is_private,
    is_reserved,
    restricted_reason,
)
from ptcbox.sandbox._numeric import NumericScopes
from ptcbox.sandbox._patterns import PatternVisitors
from ptcbox.sandbox._resume import check_steps
from ptcbox.sandbox._sizeguards import SizeGuardVisitors

__all__ = ["VALUE_NAME", "PtcTransformer"]

VALUE_NAME = "_ptc_value_"
"""Global that receives the value of a snippet's trailing expression (REPL-style).

Reserved: snippets cannot bind ``_x_``-style names, so only the compiled rewrite of the
last expression statement writes it."""

_DISPATCH: dict[type, dict[type, Any]] = {}  # transformer class: {node class: visit method}


def _unchanged(transformer: Any, node: ast.AST) -> ast.AST:
    return node


_ATTRIBUTE_OFF = off("attribute")  # test-only ablation switches (see _ablation)
_METACLASS_OFF = off("metaclass")
_NAMES_OFF = off("names")


class PtcTransformer(SizeGuardVisitors, PatternVisitors, ClassBodyVisitors):
    """RestrictedPython's transformer with ptcbox's rules (see the module docstring).

    Args:
        errors, warnings, used_names: As for ``RestrictingNodeTransformer``.
        size_guards: Compile ``*``/``%``/format specs through the size guards (``**`` and
            ``<<`` are always guarded: in a subprocess too, a clear error at once beats
            burning the whole timeout on one C call).
        alive_checks: Start every function body, lambda, ``except`` handler and
            ``finally`` block with a read of ``_alive_.running`` (see
            :data:`ALIVE_ATTR`).
        resume_checks: Check ``_alive_.running`` at each step of a generator expression
            here, when nothing else in the module resumes suspended code
            (:attr:`resume_pass_needed` is then ``False``); else leave every resumption
            check to :func:`~ptcbox.sandbox._resume.add_resume_checks`, run after the
            transform when :attr:`resume_pass_needed`.
    """

    def __init__(
        self,
        errors: list[str] | None = None,
        warnings: list[str] | None = None,
        used_names: dict[str, bool] | None = None,
        *,
        size_guards: bool = True,
        alive_checks: bool = True,
        resume_checks: bool = False,
        source: str | None = None,
    ) -> None:
        super().__init__(errors, warnings, used_names)
        self.size_guards = size_guards
        self.alive_checks = alive_checks
        self.resume_checks = resume_checks
        self.class_names: list[str] = []
        self.in_class_body = False
        self.has_value = False
        self.numeric = NumericScopes(source)
        self._methods = _DISPATCH.setdefault(type(self), {})
        self._kept = unchanged_leaves(type(self))

    # -- dispatch -----------------------------------------------------------------------

    def visit(self, node: Any) -> Any:
        """``ast.NodeVisitor.visit`` with the method looked up once per node class; the
        childless nodes RestrictedPython allows as they are are returned at once."""
        cls = type(node)
        method = self._methods.get(cls)
        if method is None:
            found: Any = getattr(type(self), "visit_" + cls.__name__, type(self).generic_visit)
            method = self._methods[cls] = _unchanged if allows_as_is(found, cls) else found
        return method(self, node)

    def node_contents_visit(self, node: Any) -> Any:
        """``ast.NodeTransformer.generic_visit`` (visit every child, splice the results),
        reading ``node._fields`` directly instead of through generators; the leaves
        RestrictedPython allows as they are are kept without a call."""
        return visit_children(self.visit, node, self._kept)

    # -- names ------------------------------------------------------------------------

    def check_name(self, node: Any, name: str | None, allow_magic_methods: bool = False) -> None:
        if name is None or name == "_" or _NAMES_OFF:
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
            name = node.id
            reserved = name[:1] == "_" and is_reserved(name)
            if reserved and name not in ALLOWED_DUNDER_NAMES and not _NAMES_OFF:
                self.error(node, f'"{name}" is a reserved name and cannot be used')
            self.used_names[name] = True
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
        if _ATTRIBUTE_OFF:  # test-only ablation (see _ablation)
            return
        if attr in RESTRICTED_ATTRS:
            self.error(node, f'"{attr}" is a restricted attribute ({restricted_reason(attr)})')
        elif is_dunder(attr):
            if store or (attr not in ALLOWED_DUNDER_READS and attr not in GUARDED_DUNDER_READS):
                hint = (
                    " (class-hierarchy traversal from __class__ is off limits)"
                    if attr in ("__base__", "__bases__", "__subclasses__")
                    else ""
                )
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
            new: ast.expr = global_call(guard, node.value, ast.Constant(attr))
            copy_locations(new, node)
            return new
        guard = "_write_private_" if is_private(attr) else "_write_"
        wrapped = global_call(guard, node.value)
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
            body.insert(at, alive_check(where))

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
        node = self.numeric.visit_comprehension(self, node)
        if self.resume_checks and not self.numeric.resumes:  # as add_resume_checks would
            check_steps(node)
        return node

    @property
    def resume_pass_needed(self) -> bool:
        """Run :func:`~ptcbox.sandbox._resume.add_resume_checks` on the result: the
        module has resumption points other than generator expression steps."""
        return self.resume_checks and self.numeric.resumes

    def visit_DictComp(self, node: ast.DictComp) -> Any:
        return self.numeric.visit_comprehension(self, node)

    def visit_Assign(self, node: ast.Assign) -> Any:
        if self._check_slots(node):
            return node
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

    def visit_Call(self, node: ast.Call) -> Any:
        for kw in node.keywords:
            if kw.arg is not None and (kw.arg.startswith("__") or is_reserved(kw.arg)):
                self.error(node, f'keyword argument "{kw.arg}" is not allowed')
        return super().visit_Call(node)

    # -- definitions ----------------------------------------------------------------------

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Any:
        self.check_name(node, node.name, allow_magic_methods=self.in_class_body)
        self.check_function_argument_names(node)
        outer = self.in_class_body
        self.in_class_body = False
        with self.numeric.scope(node):
            node = self.node_contents_visit(node)
        self.in_class_body = outer
        if not node.body:  # every statement was refused: the errors are reported
            return node
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
            body = ast.BoolOp(op=ast.And(), values=[alive_read(), node.body])
            copy_locations(body, node.body)
            node.body = body
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        self.check_name(node, node.name)
        for kw in node.keywords:
            if kw.arg is None or kw.arg == "metaclass":
                if not _METACLASS_OFF:  # test-only ablation (see _ablation)
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

"""Module views for json, textwrap, re, collections and uuid.

Pure-Python stdlib helpers that run a size-guarded operation in host code with a size the
snippet picks (F6's kind: one C call building a huge object, past the guards that only see
snippet code) get a checked version: ``json`` indentation, ``textwrap`` tab size,
``re.sub``/``subn`` (see ``_regexsize``). ``collections.UserString``/``UserList`` run every
str/list method in host code and are left out. ``uuid.getnode``/``uuid1`` never start the
``ip``/``ifconfig`` processes the stdlib falls back to.
"""

from __future__ import annotations

import secrets
import types
from typing import Any

from ptcbox.sandbox._regexview import re_functions
from ptcbox.sandbox._specbase import Attrs, ModuleContext, ix, public

__all__ = ["TEXT_SPECS"]

_JSON_DEPTH = 1000
"""Nesting levels a JSON document may have (about the recursion limit): each level builds
its own ``indent * level`` string."""


def _plain_indent(indent: Any) -> Any:
    """``indent`` as the exact str/int the encoder will use (``__index__`` read once)."""
    if indent is None:
        return None
    if isinstance(indent, str):
        return str.__str__(indent)
    return ix(indent)


def _indent_width(indent: Any) -> int:
    if indent is None:
        return 0
    return len(indent) if isinstance(indent, str) else max(indent, 0)


def _json(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits
    attrs = public(module)
    real_encoder = module.JSONEncoder

    def checked_indent(indent: Any) -> Any:
        plain = _plain_indent(indent)
        lim.repeat_bytes("json indent", _indent_width(plain) * _JSON_DEPTH)
        return plain

    class JSONEncoder(real_encoder):  # type: ignore[misc, valid-type]
        __doc__ = real_encoder.__doc__

        indent: Any

        def iterencode(self, o: Any, _one_shot: bool = False) -> Any:
            self.indent = checked_indent(self.indent)
            return super().iterencode(o, _one_shot)

    JSONEncoder.__module__, JSONEncoder.__qualname__ = "json", "JSONEncoder"

    def dumps(obj: Any, *, cls: Any = None, **kw: Any) -> Any:
        """json.dumps -- sandboxed: the indentation is size-checked."""
        if kw.get("indent") is not None:
            kw["indent"] = checked_indent(kw["indent"])
        return module.dumps(obj, cls=cls, **kw)

    def dump(obj: Any, fp: Any, *, cls: Any = None, **kw: Any) -> Any:
        """json.dump -- sandboxed: the indentation is size-checked."""
        if kw.get("indent") is not None:
            kw["indent"] = checked_indent(kw["indent"])
        return module.dump(obj, fp, cls=cls, **kw)

    dumps.__doc__ = f"{dumps.__doc__}\n\n{module.dumps.__doc__}"
    attrs.update(JSONEncoder=JSONEncoder, dumps=dumps, dump=dump)
    return attrs, {}


def _textwrap(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    lim = ctx.limits
    attrs = public(module)
    real_wrapper = module.TextWrapper

    class TextWrapper(real_wrapper):  # type: ignore[misc, valid-type]
        __doc__ = real_wrapper.__doc__
        tabsize: Any
        expand_tabs: bool

        def _munge_whitespace(self, text: str) -> str:
            if self.expand_tabs and isinstance(text, str):
                self.tabsize = tabsize = ix(self.tabsize)  # read __index__ once
                if tabsize > 0:
                    grown = str.__len__(text) + str.count(text, "\t") * tabsize
                    lim.repeat_bytes("textwrap tabsize", grown)
            result: str = super()._munge_whitespace(text)
            return result

    TextWrapper.__module__, TextWrapper.__qualname__ = "textwrap", "TextWrapper"

    def wrap(text: str, width: int = 70, **kwargs: Any) -> list[str]:
        """textwrap.wrap -- sandboxed: tab expansion is size-checked."""
        result: list[str] = TextWrapper(width=width, **kwargs).wrap(text)
        return result

    def fill(text: str, width: int = 70, **kwargs: Any) -> str:
        """textwrap.fill -- sandboxed: tab expansion is size-checked."""
        result: str = TextWrapper(width=width, **kwargs).fill(text)
        return result

    def shorten(text: str, width: int, **kwargs: Any) -> str:
        """textwrap.shorten -- sandboxed: tab expansion is size-checked."""
        result: str = TextWrapper(width=width, max_lines=1, **kwargs).fill(
            " ".join(text.strip().split())
        )
        return result

    attrs.update(TextWrapper=TextWrapper, wrap=wrap, fill=fill, shorten=shorten)
    return attrs, {}


def _re(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = public(module)
    # compile, match, sub ... Pattern, Match: matched by `regex` under the deadline,
    # substitutions size-checked (see _regexview)
    attrs.update(re_functions(ctx.limits))
    del attrs["template"]  # compiles for CPython's engine, outside the deadline
    return attrs, {"template": "deprecated (removed in Python 3.13); use re.compile"}


def _collections(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    # UserString/UserList: see EXCLUDED_MODULES
    return public(module, {"UserString", "UserList"}), {}


def _uuid(module: types.ModuleType, ctx: ModuleContext) -> tuple[Attrs, dict[str, str]]:
    attrs = public(module)
    has_c_helper = getattr(module, "_generate_time_safe", None) is not None
    random_node: list[int] = []

    def getnode() -> int:
        """uuid.getnode -- sandboxed: never starts ip/ifconfig processes (a random node,
        as the stdlib's last resort, when the C helper is missing)."""
        if has_c_helper:
            node: int = module.getnode()  # the C helper answers first
            return node
        if not random_node:
            random_node.append(module._random_getnode())
        return random_node[0]

    def uuid1(node: int | None = None, clock_seq: int | None = None) -> Any:
        """uuid.uuid1 -- sandboxed: see getnode; the clock sequence is never drawn from
        the host's ``random`` generator (the stdlib's Python path does)."""
        if node is None and not (has_c_helper and clock_seq is None):
            node = getnode()
        if clock_seq is None and node is not None:
            clock_seq = secrets.randbits(14)
        return module.uuid1(node, clock_seq)

    attrs.update(getnode=getnode, uuid1=uuid1)
    return attrs, {}


TEXT_SPECS = {
    "json": _json,
    "textwrap": _textwrap,
    "re": _re,
    "collections": _collections,
    "uuid": _uuid,
}

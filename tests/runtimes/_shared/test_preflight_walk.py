"""The pre-flight check's fast walk finds exactly what ``ast.NodeVisitor``'s walk finds.

``_preflight_walk.Visitor`` looks its methods up once per node class, reads the fields
directly and skips the leaves instead of using ``ast.NodeVisitor.visit``/
``generic_visit``; over the corpus, ptcbox's own source and constructs chosen for the
check's rules (guards, scopes, bindings) it collects the same sites in the same order,
the same bound and read names and the same handlers.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from ptcbox.runtimes._shared import _preflight_walk

ROOT = Path(__file__).resolve().parents[3]

CONSTRUCTS = {
    "guards": """
        send(a=1)
        try:
            tool(b=2)
            try:
                other(*x, **y)
            except (KeyError, mod.Error):
                pass
        except TypeError as exc:
            tool(exc)
        else:
            tool()
        finally:
            tool(c=3)
        try:
            tool(s=1)
        except* ValueError:
            pass
        with suppress(Exception), open(f) as fh:
            tool(d=4)
        with ctx():
            tool(e=5)
        try:
            pass
        except handlers[0]:
            pass
        """,
    "scopes and bindings": """
        import os.path as p, json
        from x import y as z
        def f(a, /, b=1, *c, d, **e):
            global g
            def inner():
                nonlocal b
                return tool(b)
            return lambda q, *r: tool(q, w := 1)
        async def h():
            async for q in tool():
                async with tool() as (r1, r2):
                    await tool(k=1)
        class K(base := object):
            attr = tool(1)
        [tool(v) for v in range(3) if (u := v)]
        match cmd:
            case {"k": kv, **rest}:
                tool(kv)
            case [first, *others] | Point(x=px) as point:
                tool(first, px)
            case _:
                print(f"{tool()!r:>{width}}")
        del thing
        """,
}


class _Stock(_preflight_walk.Visitor):
    visit = ast.NodeVisitor.visit
    generic_visit = ast.NodeVisitor.generic_visit


def _sources() -> list[tuple[str, str]]:
    out = [(name, textwrap.dedent(code)) for name, code in CONSTRUCTS.items()]
    for path in sorted((ROOT / "src" / "ptcbox").rglob("*.py")):
        out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    for path in sorted((ROOT / "tests" / "corpus" / "snippets").glob("*.txt")):
        for index, chunk in enumerate(path.read_text(encoding="utf-8").split("\n### ")):
            out.append((f"{path.name}#{index}", chunk.partition("\n")[2]))
    return out


def test_fast_and_stock_walks_collect_the_same() -> None:
    compared = 0
    for name, code in _sources():
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        fast, stock = _preflight_walk.Visitor(), _Stock()
        fast.visit(tree)
        stock.visit(tree)
        assert fast.sites == stock.sites, name
        assert (fast.bound, fast.loaded) == (stock.bound, stock.loaded), name
        assert fast.caught_anywhere == stock.caught_anywhere, name
        compared += 1
    assert compared > 300


def test_the_constructs_are_seen() -> None:
    visitor = _preflight_walk.Visitor()
    visitor.visit(ast.parse(textwrap.dedent(CONSTRUCTS["scopes and bindings"])))
    where = {(site.name, site.where) for site in visitor.sites}
    assert {("tool", "inner"), ("tool", "<lambda>"), ("tool", "h"), ("print", "<module>")} <= where
    assert {"p", "json", "z", "f", "h", "K", "kv", "rest", "first", "others", "point"} <= (
        visitor.bound
    )
    guards = _preflight_walk.Visitor()
    guards.visit(ast.parse(textwrap.dedent(CONSTRUCTS["guards"]).lstrip()))
    assert guards.caught_anywhere is None  # the unreadable handler, and suppress(...)
    by_line = {site.lineno: site.guards for site in guards.sites}
    assert by_line[1] == frozenset() and by_line[3] == frozenset({"TypeError"})
    assert by_line[5] == frozenset({"TypeError", "KeyError", "Error"})
    assert by_line[15] == frozenset({"ValueError"}) and by_line[19] is None

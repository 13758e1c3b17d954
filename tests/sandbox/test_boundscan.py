"""The compile's fast paths give exactly what the reference walks give.

The one-pass name scan gives the sets of the two reference walks:

:func:`ptcbox.sandbox._boundscan.scan_bindings` replaced, for speed, a walk for the
``global``/``nonlocal`` and everywhere-bound names and one :func:`bound_names` walk per
compound node; the numeric analysis (and so which operations skip the size guards)
depends on these sets, so they are compared node by node with the reference walks over
the corpus, ptcbox's own source and constructs chosen for their binding rules.

The resume-check pass (``sandbox/_resume.py``) looks its visit methods up once per class
and skips leaves instead of using ``ast.NodeTransformer``'s ``visit``/``generic_visit``;
over the same sources it changes the tree exactly as the stock traversal does.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ptcbox.sandbox import _resume
from ptcbox.sandbox._boundscan import KEPT, scan_bindings
from ptcbox.sandbox._numeric import _global_like_and_all_bound, bound_names
from ptcbox.sandbox._transform import PtcTransformer

ROOT = Path(__file__).resolve().parents[2]

CONSTRUCTS = {
    "scopes": """
        import os.path as p, json
        from x import y as z
        g = 0
        def f(a, /, b=1, *c, d, **e):
            global g
            g = a
            def inner():
                nonlocal b
                b = 2
            return lambda q, *r: q + (w := 1)
        class K(base := object):
            attr = 1
            def m(self): pass
        """,
    "loops and comprehensions": """
        for i, (j, *k) in enumerate(x):
            while (n := i) > 0:
                n -= 1
                del k
            else:
                t = [v for v in range(n) if (u := v)]
        s = {a: b for a, b in {}.items()}
        gen = (m for m in s for o in m)
        async def h():
            async for q in aiter():
                async with cm() as (r1, r2):
                    pass
        """,
    "try and match": """
        try:
            pass
        except (KeyError, ValueError) as err:
            e2 = err
        else:
            ok = 1
        finally:
            fin = 1
        match cmd:
            case {"k": kv, **rest}:
                pass
            case [first, *others] | (first, *others):
                pass
            case Point(x=px) as point:
                pass
            case _:
                pass
        with open(f) as fh, ctx() as (c1, c2):
            body = fh
        """,
    "except star": """
        try:
            pass
        except* ValueError as group:
            handled = group
        """,
}


def _sources() -> list[tuple[str, str]]:
    out = [(name, textwrap.dedent(code)) for name, code in CONSTRUCTS.items()]
    for path in sorted((ROOT / "src" / "ptcbox").rglob("*.py")):
        out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    for path in sorted((ROOT / "tests" / "corpus" / "snippets").glob("*.txt")):
        for index, chunk in enumerate(path.read_text(encoding="utf-8").split("\n### ")):
            out.append((f"{path.name}#{index}", chunk.partition("\n")[2]))
    return out


SOURCES = _sources()


def _check(code: str, *, must_parse: bool = False) -> int:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        if must_parse:
            raise
        return 0
    found = scan_bindings(tree)
    never, everywhere = _global_like_and_all_bound(tree)
    assert found.never == never
    assert found.everywhere == everywhere
    kept = [node for node in ast.walk(tree) if type(node) in KEPT]
    assert set(found.own) == {id(node) for node in kept}
    for node in kept:
        entry = found.own[id(node)]
        assert entry[0] is node
        assert entry[1] == frozenset(bound_names([node])), ast.dump(node)[:200]
    return len(kept) + len(everywhere)


@pytest.mark.parametrize("name", [name for name, _ in SOURCES[: len(CONSTRUCTS)]])
def test_constructs_give_the_reference_sets(name: str) -> None:
    assert _check(textwrap.dedent(CONSTRUCTS[name]), must_parse=True) > 0


def test_corpus_and_package_sources_give_the_reference_sets() -> None:
    checked = sum(_check(code) for _, code in SOURCES[len(CONSTRUCTS) :])
    assert len(SOURCES) > 300 and checked > 1000  # the comparison really ran


def test_a_node_not_scanned_falls_back_to_the_reference_walk() -> None:
    from ptcbox.sandbox._numeric import NumericScopes

    scopes = NumericScopes()
    tree = ast.parse("for i in range(3):\n    x = i\n")
    with scopes.scope(tree):
        loop = tree.body[0]
        assert scopes.bound(loop) == {"i", "x"}
        copy = ast.parse("for a in b:\n    c = a\n").body[0]  # never scanned
        assert scopes.bound(copy) == {"a", "c"}


class _Stock(_resume._ResumeChecks):
    visit = ast.NodeVisitor.visit
    generic_visit = ast.NodeTransformer.generic_visit


def _both(code: str) -> tuple[str, str] | None:
    try:
        trees = [ast.parse(code), ast.parse(code)]
    except SyntaxError:
        return None
    out: list[str] = []
    for parsed, visitor in zip(trees, (_resume._ResumeChecks(), _Stock()), strict=True):
        tree = PtcTransformer([], [], {}, size_guards=True, alive_checks=True).visit(parsed)
        visitor.visit(tree)
        out.append(ast.dump(tree, include_attributes=True))
    return out[0], out[1]


def test_fast_and_stock_traversals_give_the_same_tree() -> None:
    compared = 0
    for name, code in SOURCES:
        both: Any = _both(code)
        if both is None:
            continue
        assert both[0] == both[1], name
        compared += 1
    assert compared > 300


def test_resumption_points_are_still_checked() -> None:
    tree = ast.parse("async def f():\n    x = await g()\n    return [y async for y in h()]\n")
    _resume.add_resume_checks(tree)
    text = ast.unparse(tree)
    assert text.count("_alive_.running") == 2, text

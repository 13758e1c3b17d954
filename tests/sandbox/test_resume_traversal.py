"""The resume-check pass's fast traversal gives exactly what the stock traversal gives.

The resume-check pass (``sandbox/_resume.py``) looks its visit methods up once per class
and skips leaves instead of using ``ast.NodeTransformer``'s ``visit``/``generic_visit``;
over the corpus, ptcbox's own source and constructs chosen for their binding rules it
changes the tree exactly as the stock traversal does.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any

from ptcbox.sandbox import _resume
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

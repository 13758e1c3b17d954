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


def _old_and_new(code: str, *, size_guards: bool) -> tuple[str, str] | None:
    """The old pipeline (transform, then the whole resume pass) and the new one (the
    transform checks generator expression steps, the pass runs only when needed)."""
    try:
        trees = [ast.parse(code), ast.parse(code)]
    except SyntaxError:
        return None
    old = PtcTransformer([], [], {}, size_guards=size_guards, alive_checks=True).visit(trees[0])
    _resume.add_resume_checks(old)
    transformer = PtcTransformer(
        [], [], {}, size_guards=size_guards, alive_checks=True, resume_checks=True
    )
    new = transformer.visit(trees[1])
    if transformer.resume_pass_needed:
        _resume.add_resume_checks(new)
    return ast.dump(old, include_attributes=True), ast.dump(new, include_attributes=True)


RESUMING = [
    "def g():\n    yield 1\n    return (x for x in range(3))",
    "def g():\n    yield from (y for y in h())",
    "async def f():\n    return [x async for x in a()]",
    "async def f():\n    async with c():\n        return (z for z in w)",
    "async def f():\n    async for i in a():\n        pass",
    "async def f():\n    return (await b() for q in c)",
    "await f()\n(v for v in w)",
]


def test_steps_checked_in_the_transform_give_the_same_tree() -> None:
    compared = resuming = 0
    sources = [*SOURCES, *((f"resuming {i}", code) for i, code in enumerate(RESUMING))]
    for name, code in sources:
        both = _old_and_new(code, size_guards=True)
        if both is None:
            continue
        assert both[0] == both[1], name
        compared += 1
        resuming += "(y for y" in code or "async" in code
    assert compared > 300 and resuming >= 5


def test_the_pass_is_skipped_only_without_resumption_points() -> None:
    for code, needed, checks in [
        ("s = sum(o for o in x)\nt = [v for v in y]", False, 1),  # none in the list
        ("def f():\n    return (o for o in x for p in o)", False, 2),  # one per clause
        *((code, True, 0) for code in RESUMING),  # all left to the pass
    ]:
        transformer = PtcTransformer([], [], {}, alive_checks=False, resume_checks=True)
        tree = transformer.visit(ast.parse(code))
        assert transformer.resume_pass_needed is needed, code
        assert ast.unparse(tree).count("_alive_.running") == checks, code
    off = PtcTransformer([], [], {}, resume_checks=False)
    off.visit(ast.parse("sum(o for o in x)"))
    assert not off.resume_pass_needed

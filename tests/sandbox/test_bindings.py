"""The binding index of the numeric analysis (issue 13, item 3: the transform is linear).

The index must give exactly what walking each subtree gives (:func:`bound_names`), and
compiling an ``if``/``elif`` chain must cost time proportional to its length: walking
every nested ``If`` made a 2 KiB chain take ~100 ms (the time grew 4-5x per doubling).
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest

from ptcbox.sandbox import SandboxPolicy, compile_snippet
from ptcbox.sandbox._bindings import BindingIndex
from ptcbox.sandbox._numeric import bound_names

_CORPUS = Path(__file__).parents[1] / "corpus" / "snippets"

_TRICKY = """
import os.path as p, json
from math import *
g = 1
def outer(a, b=lambda q: (w := q)):
    global g
    x = 1
    class K:
        y = 2
        def m(self): z = 3
    if a:
        (t := 4)
        for i, j in enumerate(b):
            try:
                pass
            except KeyError as err:
                k = [v for v in range(3) if (u := v)]
            else:
                del x
    match b:
        case {"a": aa, **rest}: pass
        case [first, *others] if first: pass
        case K(y=yy) | K(y=yy): pass
    with open("f") as (fh, fh2):
        async_like = {m: n for m, n in []}
    while (s := 0):
        nonlocal_like = (gen for gen in ())
    return K
"""


def _sources() -> list[str]:
    sources = [_TRICKY]
    for path in sorted(_CORPUS.glob("*.txt")):
        chunks = path.read_text().split("\n### ")
        sources.extend(chunk.split("\n", 1)[1] for chunk in chunks[1:] if "\n" in chunk)
    return sources


def test_the_index_answers_what_walking_each_subtree_answers() -> None:
    checked = 0
    for source in _sources():
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        index = BindingIndex(tree)
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {"outer", "K", "m", "p", "json", "err", "aa", "rest", "others", "yy", "g"}
        for node in ast.walk(tree):
            if index.knows(node):
                assert index.not_bound_in(node, names) == names - bound_names([node]), ast.unparse(
                    node
                )[:200]
                checked += 1
    assert checked > 300  # the corpus has that many compound statements and comprehensions


def test_nodes_made_later_are_not_known() -> None:
    tree = ast.parse("if a:\n    b = 1\n")
    index = BindingIndex(tree)
    assert index.knows(tree.body[0])
    assert not index.knows(ast.parse("if a:\n    b = 1\n").body[0])


def _elif_chain(depth: int, distinct: bool = False) -> str:
    lines = ["x = 5"]
    for i in range(depth):
        keyword = "if" if i == 0 else "elif"
        lines.append(f"{keyword} x == {i}:\n    y{i if distinct else ''} = {i}")
    return "\n".join(lines)


def _compile_seconds(code: str) -> float:
    policy = SandboxPolicy()
    best = float("inf")
    for _ in range(7):  # CPU time of this thread, the best of several runs: load-proof
        started = time.thread_time()
        compile_snippet(code, policy, os_enforced_limits=True, cache=False)
        best = min(best, time.thread_time() - started)
    return best


@pytest.mark.parametrize("distinct", [False, True], ids=["one-name", "a-name-per-branch"])
def test_compile_time_of_an_elif_chain_grows_linearly(distinct: bool) -> None:
    """Four times the depth: ~4x the time when linear; it was ~20x (quadratic)."""
    short = _compile_seconds(_elif_chain(50, distinct))
    long = _compile_seconds(_elif_chain(200, distinct))
    assert long / short < 9, (short, long)

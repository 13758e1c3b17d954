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
from ptcbox.sandbox._bindings import BindingIndex, source_facts
from ptcbox.sandbox._numeric import bound_names
from ptcbox.sandbox._transform import PtcTransformer

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


# Each binds range or enumerate somewhere: the text must leave that open (a positive
# control of source_facts: a check that ruled them out would skip the index wrongly).
_BINDS_A_BUILTIN = [
    "range = 1",
    "x, enumerate = 1, 2",
    "def range(): pass",
    "async def range(): pass",
    "def \\\n  range(): pass",
    "class range: pass",
    "class enumerate(object): pass",
    "lambda range: 0",
    "def f(*, enumerate=1): pass",
    "def f(*range): pass",
    "import range",
    "import range.sub",
    "from m import enumerate",
    "from m import (range)",
    "import m as range",
    "(range := 1)",
    "for range in x: pass",
    "with a as range: pass",
    "try:\n    pass\nexcept E as range:\n    pass",
    "match x:\n    case range:\n        pass",
    "match x:\n    case [*range]:\n        pass",
    "match x:\n    case {**range}:\n        pass",
    "[range] = [1]",
    "del range",
    "ｒａｎｇｅ = 1",  # NFKC makes it "range"
    "print(f'{(enumerate := 2)}')",
    # the bound name ends its line and the next line opens with "(": not a call
    "import m as range\n(0)",
    "from m import enumerate\n(print)(1)",
    "from m import a as range  \r\n(0)",
    "import m as range\r(0)",
    "import m as range\x0c\n(0)",
    "del range\n(0)",
    "for i in [0]:\n    import m as range\n(0)\nfor i in range(3):\n    x = i * i",
]


@pytest.mark.parametrize("source", _BINDS_A_BUILTIN)
def test_source_facts_leave_open_every_binding_of_range_and_enumerate(source: str) -> None:
    index = BindingIndex(ast.parse(source))
    bound = {"range", "enumerate"} & (index.everywhere | {source_binding(source)})
    assert bound, "the control must bind one of them"
    assert bound <= source_facts(source).shadowable


def source_binding(source: str) -> str:
    """The builtin a match capture or ``del`` binds (not in ``everywhere``)."""
    tree = ast.parse(source)
    names = bound_names(list(ast.iter_child_nodes(tree)))
    return next((n for n in ("range", "enumerate") if n in names), "")


def test_what_source_facts_rule_out_the_tree_never_has() -> None:
    sources = [*_sources(), *_BINDS_A_BUILTIN]
    sources += [p.read_text() for p in sorted(Path(__file__).parents[2].rglob("src/**/*.py"))]
    ruled_out = dict.fromkeys(("resumes", "declares", "range", "enumerate"), 0)
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        index, facts = BindingIndex(tree), source_facts(source)
        if not facts.resumes:
            ruled_out["resumes"] += 1
            assert not index.resumes, source[:200]
        if not facts.declares:
            ruled_out["declares"] += 1
            assert not index.never, source[:200]
        for name in ("range", "enumerate"):
            if name not in facts.shadowable:
                ruled_out[name] += 1
                assert name not in index.everywhere, source[:200]
    assert min(ruled_out.values()) > 50, ruled_out  # the corpus exercises each rule


@pytest.mark.parametrize("os_enforced_limits", [False, True])
def test_the_index_built_on_demand_gives_the_trees_of_the_index_built_first(
    os_enforced_limits: bool,
) -> None:
    """With the text (``source=``) the index is built late or never; same trees."""
    compared = 0
    for source in [*_sources(), *_BINDS_A_BUILTIN, _elif_chain(30)]:
        outputs = []
        for text in (None, source):
            transformer = PtcTransformer(
                [],
                [],
                {},
                size_guards=not os_enforced_limits,
                alive_checks=not os_enforced_limits,
                resume_checks=not os_enforced_limits,
                source=text,
            )
            tree = transformer.visit(ast.parse(source))
            dump = ast.dump(tree, include_attributes=True)
            outputs.append((dump, transformer.errors, transformer.resume_pass_needed))
        assert outputs[0] == outputs[1], source[:200]
        compared += 1
    assert compared > 100


def test_a_builtin_bound_at_the_end_of_a_line_is_still_the_snippets_own() -> None:
    """The name bound by ``import ... as range`` ends its line; the next line opens with
    ``(``. The loop over the snippet's ``range`` must run as before (no numeric-loop
    check refusing its items), like the same snippet without the ``(`` line."""
    plain = "from itertools import repeat as range\nfor i in range('ab', 2):\n    print(i * 3)\n"
    opened = plain.replace("\n", "\n(0)\n", 1)
    for code in (plain, opened):
        compiled = compile_snippet(code, SandboxPolicy(), cache=False)
        assert "_numiter_" not in compiled.code.co_names, code

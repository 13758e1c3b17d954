"""The numeric flow analysis that lets hot loops skip the size guards: it must be sound.

Every case here rebinds a name that once held a number to a string before ``x * 1000``;
the multiplication must then go through the guard (a tight policy makes the guard raise),
never run natively on the string.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from ptcbox.errors import ArithmeticLimitExceeded, PolicyViolation
from ptcbox.sandbox import SandboxPolicy, compile_snippet

TIGHT = SandboxPolicy(max_repeat_bytes=100)

UNSOUND_IF_NATIVE = {
    "branch": """
        x = 1
        if flag:
            x = "a"
        y = x * 1000
    """,
    "loop back edge": """
        x = 1
        for i in range(2):
            y = x * 1000
            x = "a"
    """,
    "while back edge": """
        x = 1
        n = 0
        while n < 2:
            y = x * 1000
            x = "a"
            n += 1
    """,
    "global in a function": """
        def f():
            global x
            x = "a"
        x = 1
        f()
        y = x * 1000
    """,
    "nonlocal": """
        def outer():
            x = 1
            def g():
                nonlocal x
                x = "a"
            g()
            return x * 1000
        outer()
    """,
    "closure sees a later value": """
        def outer():
            x = 1
            def g():
                return x * 1000
            x = "a"
            return g()
        outer()
    """,
    "lazy generator expression": """
        x = 1
        g = (x * 1000 for _ in [0])
        x = "a"
        list(g)
    """,
    "loop variable rebound in the body": """
        for i in range(1):
            i = "a"
            y = i * 1000
    """,
    "loop variable after an empty loop": """
        i = "a"
        for i in range(0):
            pass
        y = i * 1000
    """,
    "walrus in a condition": """
        x = 1
        if (x := "a"):
            pass
        y = x * 1000
    """,
    "exception handler": """
        x = 1
        try:
            x = "a"
            raise ValueError
        except ValueError:
            y = x * 1000
    """,
    "with target": """
        class C:
            def __enter__(self):
                return "a"
            def __exit__(self, *a):
                return False
        x = 1
        with C() as x:
            pass
        y = x * 1000
    """,
    "except as": """
        x = 1
        try:
            raise ValueError("a" * 5)
        except ValueError as x:
            y = x.args[0] * 1000
    """,
    "import as": """
        x = 1
        from string import ascii_lowercase as x
        y = x * 1000
    """,
    "def rebinding": """
        x = 1
        def x():
            pass
        y = [x] * 1000
    """,
    "match capture": """
        x = 1
        match "a":
            case x:
                pass
        y = x * 1000
    """,
    "augmented with an object whose __radd__ returns a string": """
        class S:
            def __radd__(self, other):
                return "a"
        x = 0
        x += S()
        y = x * 1000
    """,
    "enumerate item is not numeric": """
        for i, s in enumerate(["a"]):
            y = s * 1000
    """,
    "walrus inside a comprehension (second iteration)": """
        x = 1
        [(x * 1000, (x := "a")) for i in range(2)]
    """,
    "comprehension target from a list": """
        [x * 1000 for x in ["a"]]
    """,
    "snippet shadows range": """
        def range(n):
            return ["a"]
        for i in range(1):
            y = i * 1000
    """,
    "class body": """
        x = 1
        class C:
            x = "a"
            y = x * 1000
    """,
    "del then rebind elsewhere": """
        x = 1
        del x
        exec_ = 1
        x = "a"
        y = x * 1000
    """,
    "percent formatting on a rebound name": """
        x = 1
        if flag:
            x = "%2000d"
        y = x % 1
    """,
}


@pytest.mark.parametrize("code", list(UNSOUND_IF_NATIVE.values()), ids=list(UNSOUND_IF_NATIVE))
def test_rebound_names_are_guarded(sandbox_run: Callable, code: str) -> None:
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run(textwrap.dedent(code), TIGHT, extra_globals={"flag": True, "s": "a"})


def test_a_tool_shadowing_range_cannot_fake_numbers(sandbox_run: Callable) -> None:
    code = "for i in range(1):\n    y = i * 1000"
    with pytest.raises(PolicyViolation, match="shadowed"):
        sandbox_run(code, TIGHT, tools={"range": lambda n: ["a"]})
    with pytest.raises(PolicyViolation, match="shadowed"):
        sandbox_run("for i, v in enumerate(['a']):\n    y = i * 1000", TIGHT,
                    extra_globals={"enumerate": lambda xs: [("a", x) for x in xs]})  # fmt: skip


def test_a_tool_shadowing_range_with_numbers_still_works(sandbox_run: Callable) -> None:
    ran = sandbox_run(
        "t = 0\nfor i in range(3):\n    t += i * 10\nt", tools={"range": lambda n: [1, 2]}
    )
    assert ran.value == 30


def _guard_calls(code: str) -> set[str]:
    compiled = compile_snippet(textwrap.dedent(code), SandboxPolicy())
    names: set[str] = set()
    stack = [compiled.code]
    while stack:
        co = stack.pop()
        names.update(co.co_names)
        stack.extend(c for c in co.co_consts if hasattr(c, "co_names"))
    return names & {"_mul_", "_mod_", "_pow_", "_lshift_", "_imul_", "_imod_"}


@pytest.mark.parametrize(
    "code",
    [
        "t = 0\nfor i in range(10):\n    t += i * i",
        "for i in range(10):\n    if i % 3 == 0:\n        pass",
        "for i, v in enumerate([1]):\n    w = i * 2 + i % 5",
        (
            "def f(n):\n    s = 0\n    for i in range(n):\n        k = i * 3\n"
            "        s += k * k\n    return s"
        ),
        "[i * i for i in range(5)]",
        "sum(i * i for i in range(5))",
        "{i: i * 2 for i in range(5)}",
        "x = 2.5\ny = x * x",
        "x = 3\ny = x * 4\nz = y * x",
        "for i in range(3):\n    for j in range(3):\n        k = i * j",
        "n = 5\nwhile n:\n    n -= 1",
        "v = 7 % 3\nw = 'a' * 3",
    ],
)
def test_provably_numeric_code_has_no_guard_calls(code: str) -> None:
    assert _guard_calls(code) == set()


@pytest.mark.parametrize(
    "code",
    [
        "def f(a, b):\n    return a * b",
        "x = s * 3000",
        "y = a % b",
        "y = 2 ** n",
        "y = 1 << n",
        "x = 1\nif c:\n    x = 'a'\ny = x * n",
    ],
)
def test_unknown_operands_are_guarded(code: str) -> None:
    assert _guard_calls(code)


def test_numeric_results_are_still_correct(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        total = 0
        for i in range(200):
            if i % 3 == 0:
                total += i * i
        acc = [j * j for j in range(4)]
        pairs = {i: v * 2 for i, v in enumerate([5, 6])}
        (total, acc, pairs)
        """
    )
    expected_total = sum(i * i for i in range(200) if i % 3 == 0)
    assert sandbox_run(code).value == (expected_total, [0, 1, 4, 9], {0: 10, 1: 12})

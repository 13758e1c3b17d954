"""compile_snippet: restricted/trusted compile, trailing value, async, cache, refusals."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Callable

import pytest

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox import VALUE_NAME, CompiledSnippet, SandboxPolicy, compile_snippet
from ptcbox.sandbox._compile import _CACHE, clear_compile_cache

POLICIES = [SandboxPolicy(), SandboxPolicy.trusted()]


@pytest.mark.parametrize("policy", POLICIES, ids=["restricted", "trusted"])
def test_trailing_expression_value_is_stored(policy: SandboxPolicy, sandbox_run: Callable) -> None:
    compiled = compile_snippet("x = 2\nx * 21", policy)
    assert compiled.has_value and not compiled.is_async
    assert sandbox_run("x = 2\nx * 21", policy).value == 42


@pytest.mark.parametrize("policy", POLICIES, ids=["restricted", "trusted"])
@pytest.mark.parametrize(
    "code", ["x = 1", "if True:\n    1", "def f():\n    return 1", "for i in range(2):\n    i", ""]
)
def test_no_value_when_the_last_statement_is_not_an_expression(
    policy: SandboxPolicy, code: str
) -> None:
    assert compile_snippet(code, policy).has_value is False


def test_value_name_is_reserved_for_snippets() -> None:
    with pytest.raises(PolicyViolation, match=VALUE_NAME):
        compile_snippet(f"{VALUE_NAME} = 1", SandboxPolicy())


@pytest.mark.parametrize("policy", POLICIES, ids=["restricted", "trusted"])
@pytest.mark.parametrize(
    "code",
    [
        "import asyncio\nawait asyncio.sleep(0)",
        "async def g():\n    yield 1\nasync for x in g():\n    pass",
        "class C:\n    async def __aenter__(self): return 1\n"
        "    async def __aexit__(self, *a): return False\nasync with C() as c:\n    pass",
    ],
)
def test_top_level_await_marks_the_snippet_async(policy: SandboxPolicy, code: str) -> None:
    compiled = compile_snippet(code, policy)
    assert compiled.is_async


def test_async_def_without_top_level_await_is_not_async() -> None:
    assert not compile_snippet("async def f():\n    await g()", SandboxPolicy()).is_async


def test_async_snippet_returns_its_trailing_value(sandbox_run: Callable) -> None:
    code = "import asyncio\nasync def f(i):\n    return i\nr = await asyncio.gather(f(1), f(2))\nr"
    assert sandbox_run(code).value == [1, 2]


def test_syntax_error_keeps_its_line_number() -> None:
    with pytest.raises(SyntaxError) as info:
        compile_snippet("x = 1\ny = (", SandboxPolicy())
    assert info.value.lineno == 2


def test_policy_violation_lists_every_refusal_with_its_line() -> None:
    code = "a = ().__subclasses__\nb = 1\nc = x.gi_frame\n_getattr_ = 1"
    with pytest.raises(PolicyViolation) as info:
        compile_snippet(code, SandboxPolicy())
    text = str(info.value)
    assert "Line 1" in text and "__subclasses__" in text
    assert "Line 3" in text and "gi_frame" in text
    assert "Line 4" in text and "_getattr_" in text


def test_B06_try_except_star_runs_and_a_custom_split_is_refused(sandbox_run: Callable) -> None:
    code = (
        'try:\n    raise ExceptionGroup("g", [ValueError(1)])\n'
        'except* ValueError as eg:\n    print("ran", eg.exceptions)'
    )
    assert sandbox_run(code).stdout == "ran (ValueError(1),)\n"
    code = (
        "class G(ExceptionGroup):\n    def split(self, t):\n        return 1\n"
        'try:\n    raise G("g", [ValueError(1)])\nexcept* ValueError:\n    pass'
    )
    with pytest.raises(PolicyViolation, match=r"overrides split\(\) \(CVE-2025-22153\)"):
        sandbox_run(code)


def test_except_star_inside_a_function_compiles_and_refusals_never_crash() -> None:
    code = "def f():\n    try:\n        pass\n    except* ValueError:\n        pass\nf()"
    compile_snippet(code, SandboxPolicy())
    with pytest.raises(PolicyViolation, match="_getattr_"):
        compile_snippet("def f():\n    _getattr_ = 1", SandboxPolicy())


def test_B06_plain_except_exception_group_is_the_documented_alternative(
    sandbox_run: Callable,
) -> None:
    code = textwrap.dedent(
        """
        try:
            raise ExceptionGroup("g", [ValueError(1), KeyError(2)])
        except ExceptionGroup as eg:
            print(len(eg.exceptions), [type(e).__name__ for e in eg.exceptions])
        """
    )
    assert sandbox_run(code).stdout == "2 ['ValueError', 'KeyError']\n"


def test_compile_is_cached_on_code_and_compile_relevant_fields() -> None:
    clear_compile_cache()
    a = compile_snippet("y = 1", SandboxPolicy())
    assert compile_snippet("y = 1", SandboxPolicy(timeout=3)) is a  # timeout: not compiled in
    assert compile_snippet("y = 1", SandboxPolicy.trusted()) is not a
    assert compile_snippet("y = 1", SandboxPolicy(), os_enforced_limits=True) is not a
    assert compile_snippet("y = 1", SandboxPolicy(), filename="other") is not a
    assert _CACHE.hits >= 1 and _CACHE.maxsize == 256


def test_cache_is_bounded() -> None:
    clear_compile_cache()
    for i in range(300):
        compile_snippet(f"v = {i}", SandboxPolicy())
    assert len(_CACHE) == 256


def test_failed_compiles_are_not_cached_as_success() -> None:
    for _ in range(2):
        with pytest.raises(PolicyViolation):
            compile_snippet("a.__globals__", SandboxPolicy())


def test_code_must_be_a_string() -> None:
    with pytest.raises(TypeError):
        compile_snippet(b"x = 1", SandboxPolicy())  # type: ignore[arg-type]


def test_filename_appears_in_the_code_object() -> None:
    compiled = compile_snippet("x = 1", SandboxPolicy(), filename="<model snippet>")
    assert isinstance(compiled, CompiledSnippet)
    assert compiled.code.co_filename == "<model snippet>"


def _names(code: str, **kwargs: object) -> set[str]:
    compiled = compile_snippet(code, SandboxPolicy(), **kwargs)  # type: ignore[arg-type]
    names: set[str] = set()
    stack = [compiled.code]
    while stack:
        co = stack.pop()
        names.update(co.co_names)
        stack.extend(c for c in co.co_consts if hasattr(c, "co_names"))
    return names


def test_os_enforced_limits_compiles_the_size_guards_out() -> None:
    code = "def f(a, b):\n    return a ** b, a << b, a * b, a % b, f'{a:{b}}'"
    guarded = _names(code)
    assert {"_pow_", "_lshift_", "_mul_", "_mod_", "_format_"} <= guarded
    native = _names(code, os_enforced_limits=True)
    assert not {"_mul_", "_mod_", "_format_"} & native
    # one huge power would burn the whole timeout in a subprocess: still refused at once
    assert {"_pow_", "_lshift_"} <= native


def test_trusted_compile_has_no_guards_at_all() -> None:
    compiled = compile_snippet("x = ().__class__.__name__\nx", SandboxPolicy.trusted())
    assert "_getattr_" not in compiled.code.co_names
    assert compiled.has_value


def test_trusted_policy_runs_plain_python(sandbox_run: Callable) -> None:
    ran = sandbox_run("import os\nprint(type(os).__name__)\n().__class__", SandboxPolicy.trusted())
    assert ran.stdout == "module\n"
    assert ran.value is tuple


def test_hot_loops_compile_to_native_operations() -> None:
    """The loop from the latency benchmark has no guard call per iteration."""
    code = "total = 0\nfor i in range(200_000):\n    if i % 3 == 0:\n        total += i * i"
    names = _names(code)
    assert not {"_mul_", "_mod_", "_getattr_"} & names
    code2 = (
        "items = []\nd = {}\nfor i in range(10):\n    items.append(i)\n    d[i] = d.get(i, 0) + 1"
    )
    assert "_getattr_" not in _names(code2)


def test_future_import_still_works(sandbox_run: Callable) -> None:
    ran = sandbox_run(
        "from __future__ import annotations\ndef f(x: Undefined) -> int:\n    return 1\nf(2)"
    )
    assert ran.value == 1


DEEP = [
    "x = 0" + "+1" * 210_000,  # B19
    "x = " + "(" * 1000 + "1" + ")" * 1000,
    "x = " + "[" * 5000 + "]" * 5000,
    "x = " + "-" * 100_000 + "1",
    "a" + ".b" * 100_000,
    "f" + "(" * 150 + ")" * 150,
    "x = 1" + " if 1 else 1" * 50_000,
]
DEEP_COMPILES = {"f" + "(" * 150 + ")" * 150}


@pytest.mark.parametrize("policy", POLICIES, ids=["restricted", "trusted"])
@pytest.mark.parametrize("code", DEEP, ids=[f"deep{i}" for i in range(len(DEEP))])
def test_B19_deeply_nested_source_raises_instead_of_crashing(
    policy: SandboxPolicy, code: str
) -> None:
    """Each either compiles or raises a clean Python error, per CPython's own limits (the
    outcome is pinned: a compile that should fail and does not is a failure too)."""
    if code in DEEP_COMPILES:
        assert compile_snippet(code, policy).code is not None
        return
    with pytest.raises((RecursionError, SyntaxError, MemoryError)) as raised:
        compile_snippet(code, policy)
    if isinstance(raised.value, SyntaxError):
        assert "too many nested parentheses" in str(raised.value)
    elif isinstance(raised.value, RecursionError):
        assert "maximum recursion depth exceeded" in str(raised.value)


def test_B19_deep_nesting_does_not_crash_a_fresh_process() -> None:
    """Segfault check: compile B19 in a child; it must exit normally with a Python error."""
    script = textwrap.dedent(
        """
        from ptcbox.errors import PolicyViolation
        from ptcbox.sandbox import SandboxPolicy, compile_snippet
        for policy in (SandboxPolicy(), SandboxPolicy.trusted()):
            for code in ("x = 0" + "+1" * 210_000, "x = " + "-" * 300_000 + "1"):
                try:
                    compile_snippet(code, policy)
                    print("compiled")
                except (RecursionError, SyntaxError, PolicyViolation, MemoryError) as e:
                    print(type(e).__name__)
        print("alive")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.split()
    assert lines[-1] == "alive"
    assert set(lines[:-1]) <= {"RecursionError", "SyntaxError", "PolicyViolation", "MemoryError"}


def test_transformed_tree_is_valid_python_for_every_node_kind() -> None:
    """A broad snippet compiles; every node RestrictedPython knows is handled."""
    code = textwrap.dedent(
        """
        import math
        from collections import Counter as C
        x: int = 1
        y = [i for i in range(3) if i]
        z = {k: v for k, v in zip("ab", (1, 2))}
        s = {i for i in y}
        g = (i for i in y)
        a, *b = [1, 2, 3]
        (c, d), e = (1, 2), 3
        del e
        assert x
        with open_ctx() if False else nullctx() as (p, q):
            pass
        while False:
            break
        else:
            pass
        lam = lambda u, *v, w=1, **kw: u
        def gen():
            yield 1
            yield from [2]
        def outer():
            n = 0
            def inner():
                nonlocal n
                n += 1
            global GG
            GG = 1
            return inner
        class K(object):
            attr = 1
            def m(self, /, pos, *, kw):
                return (pos, kw)
        r = 1 if x else 2
        t = not x and x or -x
        u = x @ x if False else ~x
        v = x[1:2:3] if False else x
        ok = f"{x!r:>4}{x=}"
        """
    )
    tree = ast.parse(code)
    assert tree.body
    compiled = compile_snippet(code, SandboxPolicy())
    assert compiled.code.co_filename == "<snippet>"


# -- the _alive_.running checks (see ptcbox.sandbox._alive.ALIVE_ATTR) ---------------

ALIVE_SNIPPET = '''
def f(x):
    """Doc."""
    try:
        return g(x)
    except ValueError:
        return -1
    finally:
        done.append(x)
g = lambda x: x * 2
done = []
[f(1), f.__doc__, done]
'''


class _Counter:
    """Counts the reads of ``running`` (what the transform inserts)."""

    def __init__(self) -> None:
        self.reads = 0

    @property
    def running(self) -> bool:
        self.reads += 1
        return True


def _run_with(alive: object, code: str, *, os_enforced_limits: bool = False) -> object:
    from ptcbox.sandbox import build_globals

    policy = SandboxPolicy()
    compiled = compile_snippet(code, policy, os_enforced_limits=os_enforced_limits)
    namespace = build_globals(policy, tools={}, stdout=sys.stdout, stderr=sys.stderr, alive=alive)
    exec(compiled.code, namespace)
    return namespace[VALUE_NAME]


def test_functions_lambdas_handlers_and_finally_blocks_check_that_they_may_run() -> None:
    counter = _Counter()
    assert _run_with(counter, ALIVE_SNIPPET) == [2, "Doc.", [1]]
    assert counter.reads == 3  # f's entry, the lambda, the finally block (no except ran)
    assert _run_with(counter, "try:\n    1 / 0\nexcept ZeroDivisionError:\n    pass\n0\n") == 0
    assert counter.reads == 4


def test_a_failing_check_stops_code_and_no_handler_can_swallow_it() -> None:
    class Dead:
        @property
        def running(self) -> bool:
            raise AttributeError("running")

    code = "def f():\n    while True:\n        pass\n"
    with pytest.raises(AttributeError):
        _run_with(Dead(), code + "f()\n")
    looping_handlers = (
        "while True:\n    try:\n        1 / 0\n    except BaseException:\n        pass\n"
    )
    with pytest.raises(AttributeError):
        _run_with(Dead(), looping_handlers)
    with pytest.raises(AttributeError):
        _run_with(Dead(), "while True:\n    try:\n        pass\n    finally:\n        pass\n")


def test_the_subprocess_compile_has_no_checks_and_default_globals_pass_them() -> None:
    counter = _Counter()
    assert _run_with(counter, ALIVE_SNIPPET, os_enforced_limits=True) == [2, "Doc.", [1]]
    assert counter.reads == 0
    assert _run_with(None, ALIVE_SNIPPET) == [2, "Doc.", [1]]  # build_globals' default


SHARED_TREE_CODES = [
    "x = [v * 2 for v in range(3)]\nprint(f'{x!r:>10}')\nx",
    "async def f():\n    return await g()\nawait f()\n",
    "class K:\n    __slots__ = ('a',)\n    def m(self):\n        yield self.a\n",
    "try:\n    1 / 0\nexcept* ValueError:\n    pass\n",
    "match p:\n    case Point(x=0) as q:\n        print(q)\n",
]
REFUSED_CODES = ["a.__globals__", "def f():\n    _getattr_ = 1", "x = 1\ny = x._private_()\n"]


@pytest.mark.parametrize("os_limits", [False, True])
@pytest.mark.parametrize("policy", POLICIES, ids=["restricted", "trusted"])
@pytest.mark.parametrize("code", SHARED_TREE_CODES)
def test_a_given_tree_compiles_to_the_same_code(
    code: str, policy: SandboxPolicy, os_limits: bool
) -> None:
    parsed = compile(code, "<snippet>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    given = compile_snippet(code, policy, os_enforced_limits=os_limits, cache=False, tree=parsed)
    own = compile_snippet(code, policy, os_enforced_limits=os_limits, cache=False)
    assert given.code == own.code
    assert (given.is_async, given.has_value) == (own.is_async, own.has_value)


@pytest.mark.parametrize("code", REFUSED_CODES)
def test_a_given_tree_is_refused_with_the_same_message(code: str) -> None:
    messages = []
    for tree in (None, ast.parse(code)):
        with pytest.raises(PolicyViolation) as info:
            compile_snippet(code, SandboxPolicy(), cache=False, tree=tree)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "Line " in messages[0]


def test_a_given_tree_is_cached_on_the_code_and_ignored_on_a_hit() -> None:
    clear_compile_cache()
    first = compile_snippet("z = 1", SandboxPolicy(), tree=ast.parse("z = 1"))
    assert compile_snippet("z = 1", SandboxPolicy()) is first
    # a hit never looks at the tree (the caller's tree is the code's parse by contract)
    assert compile_snippet("z = 1", SandboxPolicy(), tree=ast.parse("other = 2")) is first
    with pytest.raises(TypeError, match=r"tree must be an ast\.Module"):
        compile_snippet("z = 1", SandboxPolicy(), tree=ast.parse("z", mode="eval"))  # type: ignore[arg-type]


def test_childless_nodes_skip_only_restrictedpythons_plain_method() -> None:
    """The transform returns constants and contexts at once only while the method in use
    is RestrictedPython's plain allow; an override still runs."""
    from ptcbox.sandbox._transform import PtcTransformer

    seen: list[object] = []

    class Counting(PtcTransformer):
        def visit_Constant(self, node: ast.Constant) -> ast.AST:
            seen.append(node.value)
            return node

    Counting([], [], {}).visit(ast.parse("x = 1 + 2\ny = 'z'"))
    assert seen == [1, 2, "z"]
    plain = ast.parse("x = 1 + 2")
    assert PtcTransformer([], [], {}).visit(plain) is plain

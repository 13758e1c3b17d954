"""Code the way models write it must just work under the default policy."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from ptcbox.sandbox import SandboxPolicy


def _run(sandbox_run: Callable, code: str) -> Any:
    return sandbox_run(textwrap.dedent(code))


def test_main_guard(sandbox_run: Callable) -> None:
    ran = _run(sandbox_run, 'def main():\n    print("hi")\nif __name__ == "__main__":\n    main()')
    assert ran.stdout == "hi\n"


def test_fstrings(sandbox_run: Callable) -> None:
    code = 'x, name = 3.14159, "bob"\nf"{name!r:>6}|{x:.2f}|{x=}|{len(name)}|{{}}|{name.upper()}"'
    assert sandbox_run(code).value == " 'bob'|3.14|x=3.14159|3|{}|BOB"


def test_comprehensions(sandbox_run: Callable) -> None:
    code = (
        "[x * 2 for x in range(3)], {x: x for x in 'ab'}, {x % 2 for x in range(4)}, "
        "list(x for x in [1])"
    )
    assert sandbox_run(code).value == ([0, 2, 4], {"a": "a", "b": "b"}, {0, 1}, [1])


def test_classes_with_init_methods_inheritance_and_super(sandbox_run: Callable) -> None:
    code = """
        class Animal:
            kind = "animal"
            def __init__(self, name):
                self.name = name
            def speak(self):
                return f"{self.name} makes a sound"
            def __repr__(self):
                return f"Animal({self.name!r})"
        class Dog(Animal):
            def __init__(self, name, tricks=None):
                super().__init__(name)
                self.tricks = tricks or []
            def speak(self):
                return super().speak().replace("a sound", "woof")
            @property
            def n_tricks(self):
                return len(self.tricks)
            @classmethod
            def make(cls, name):
                return cls(name, ["sit"])
            @staticmethod
            def legs():
                return 4
        d = Dog.make("rex")
        (d.speak(), d.n_tricks, Dog.legs(), repr(Animal("x")), isinstance(d, Animal), d.kind)
    """
    assert _run(sandbox_run, code).value == (
        "rex makes woof", 1, 4, "Animal('x')", True, "animal",
    )  # fmt: skip


def test_dataclasses(sandbox_run: Callable) -> None:
    code = """
        from dataclasses import dataclass, field, asdict, replace
        @dataclass(order=True)
        class Expense:
            amount: float
            category: str = "misc"
            tags: list[str] = field(default_factory=list)
            def __post_init__(self):
                self.amount = round(self.amount, 2)
        @dataclass(frozen=True, slots=True)
        class Point:
            x: int
            y: int
        e = Expense(12.345, tags=["a"])
        cheapest = sorted([Expense(2), Expense(1)])[0].amount
        (asdict(e), replace(e, category="travel").category, Point(1, 2), cheapest)
    """
    assert _run(sandbox_run, code).value == (
        {"amount": 12.35, "category": "misc", "tags": ["a"]}, "travel", _point(), 1,
    )  # fmt: skip


def _point() -> Any:
    class Point:  # compares by repr only
        def __eq__(self, other: object) -> bool:
            return repr(other) == "Point(x=1, y=2)"

        __hash__ = None  # type: ignore[assignment]

    return Point()


def test_try_except_finally_and_custom_exceptions(sandbox_run: Callable) -> None:
    code = """
        class BudgetError(Exception):
            def __init__(self, who, over):
                super().__init__(f"{who} over by {over}")
                self.who = who
        log = []
        try:
            try:
                raise BudgetError("ann", 5)
            except (KeyError, BudgetError) as e:
                log.append((type(e).__name__, str(e), e.who))
                raise ValueError("wrapped") from e
            finally:
                log.append("inner finally")
        except ValueError as e:
            log.append(repr(e))
        else:
            log.append("no")
        finally:
            log.append("outer finally")
        log
    """
    assert _run(sandbox_run, code).value == [
        ("BudgetError", "ann over by 5", "ann"), "inner finally", "ValueError('wrapped')",
        "outer finally",
    ]  # fmt: skip


def test_type_hints(sandbox_run: Callable) -> None:
    code = """
        from typing import Optional, Any, TypedDict, NamedTuple
        class Row(TypedDict):
            id: int
        class P(NamedTuple):
            x: int
            y: int = 0
        def f(a: int, b: Optional[str] = None, *args: Any, **kw: dict[str, int]) -> list[int]:
            out: list[int] = [a]
            return out
        total: float = 0.0
        (f(1), P(1), Row(id=1), total)
    """
    assert _run(sandbox_run, code).value == ([1], (1, 0), {"id": 1}, 0.0)


def test_print_sep_end_and_file(sandbox_run: Callable) -> None:
    code = """
        class Sink:
            def __init__(self):
                self.parts = []
            def write(self, s):
                self.parts.append(s)
        s = Sink()
        print("a", "b", sep=", ", end="!\\n")
        print("x", end="")
        print()
        print(1, 2, sep=None, end=None)
        print("to sink", file=s)
        print(*[1, 2, 3])
        s.parts
    """
    ran = _run(sandbox_run, code)
    assert ran.stdout == "a, b!\nx\n1 2\n1 2 3\n"
    assert ran.value == ["to sink\n"]
    with pytest.raises(TypeError):
        sandbox_run("print(1, sep=3)")


def test_walrus(sandbox_run: Callable) -> None:
    code = (
        "data = [1, 2, 3]\nif (n := len(data)) > 2:\n    r = n\n"
        "[y for x in data if (y := x * 2) > 2]"
    )
    assert sandbox_run(code).value == [4, 6]


def test_match(sandbox_run: Callable) -> None:
    code = """
        from dataclasses import dataclass
        @dataclass
        class Pt:
            x: int
            y: int
        out = []
        cmds = ["go north", "quit", {"action": "buy", "qty": 2}, [1, 2, 3], Pt(0, 5), Pt(1, 1), 7]
        for cmd in cmds:
            match cmd:
                case "quit":
                    out.append("q")
                case str(s) if s.startswith("go "):
                    out.append(s.split()[1])
                case {"action": "buy", "qty": int(q)}:
                    out.append(q)
                case [first, *rest]:
                    out.append((first, rest))
                case Pt(x=0, y=y):
                    out.append(("y-axis", y))
                case Pt(a, b):
                    out.append((a, b))
                case _:
                    out.append("other")
        out
    """
    assert _run(sandbox_run, code).value == [
        "north", "q", 2, (1, [2, 3]), ("y-axis", 5), (1, 1), "other",
    ]  # fmt: skip


def test_lambdas_generators_sorted_key_and_builtins(sandbox_run: Callable) -> None:
    code = """
        people = [{"name": "b", "age": 30}, {"name": "a", "age": 25}]
        def gen(n):
            for i in range(n):
                yield i
            return "done"
        (
            sorted(people, key=lambda p: p["age"])[0]["name"],
            [i for i, _ in enumerate("xy")],
            list(zip("ab", [1, 2])),
            list(map(str.upper, ["a"])),
            list(filter(lambda v: v > 1, [1, 2, 3])),
            max(people, key=lambda p: p["age"])["name"],
            sum(gen(4)),
            list(reversed([1, 2])),
            any(p["age"] > 29 for p in people),
            dict(sorted({"b": 1, "a": 2}.items())),
            round(2.675, 1), divmod(7, 2), abs(-3), min(3, 1), chr(65), ord("A"),
        )
    """
    assert _run(sandbox_run, code).value == (
        "a", [0, 1], [("a", 1), ("b", 2)], ["A"], [2, 3], "b", 6, [2, 1], True,
        {"a": 2, "b": 1}, 2.7, (3, 1), 3, 1, "A", 65,
    )  # fmt: skip


def test_dict_items_and_counting_idioms(sandbox_run: Callable) -> None:
    code = """
        counts = {}
        for w in "a b a c a".split():
            counts[w] = counts.get(w, 0) + 1
        totals = {}
        for w in "a b".split():
            totals.setdefault(w, 0)
            totals[w] += 10
        [(k, v) for k, v in counts.items()], totals
    """
    assert _run(sandbox_run, code).value == ([("a", 3), ("b", 1), ("c", 1)], {"a": 10, "b": 10})


def test_augmented_assignment_to_subscripts_and_attributes(sandbox_run: Callable) -> None:
    code = """
        class Counter:
            def __init__(self):
                self.n = 0
                self.items = []
            def bump(self):
                self.n += 1
                self.items += ["x"]
                self.n *= 2
                return self
        c = Counter().bump().bump()
        grid = [[0] * 3 for _ in range(2)]
        grid[1][2] += 5
        grid[0][0] -= 1
        d = {"k": 2}
        d["k"] **= 3
        d["k"] %= 5
        (c.n, c.items, grid, d)
    """
    assert _run(sandbox_run, code).value == (6, ["x", "x"], [[-1, 0, 0], [0, 0, 5]], {"k": 3})


def test_string_methods(sandbox_run: Callable) -> None:
    code = """
        s = "  Hello, World  "
        (s.strip().lower(), s.split(","), "-".join(["a", "b"]), s.replace("l", "L", 1),
         "abc".startswith("a"), "x".center(5, "*"), "a,b".partition(","), "ab".upper().title(),
         "12".isdigit(), "hello world".capitalize(), "%s-%03d" % ("id", 7), "tab\\tx".expandtabs(2))
    """
    assert _run(sandbox_run, code).value == (
        "hello, world", ["  Hello", " World  "], "a-b", "  HeLlo, World  ", True, "**x**",
        ("a", ",", "b"), "Ab", True, "Hello world", "id-007", "tab x",
    )  # fmt: skip


def test_str_format_and_format_map_work_as_in_cpython(sandbox_run: Callable) -> None:
    code = """
        class P:
            name = "pen"
        ("{} is {}".format("x", 1), "{:,.2f}".format(1234.5), "{0[sku]}".format({"sku": 7}),
         "{p.name}".format(p=P()), "{city}".format_map({"city": "Oslo"}))
    """
    assert _run(sandbox_run, code).value == ("x is 1", "1,234.50", "7", "pen", "Oslo")


def test_isinstance_and_getattr_with_default(sandbox_run: Callable) -> None:
    code = """
        class A:
            color = "red"
        (isinstance(1, (int, float)), isinstance("s", str), getattr(A(), "color", None),
         getattr(A(), "size", "n/a"), hasattr(A, "color"), callable(len))
    """
    assert _run(sandbox_run, code).value == (True, True, "red", "n/a", True, True)


def test_raising_and_catching_tool_errors(sandbox_run: Callable) -> None:
    def failing(**kwargs: Any) -> Any:
        raise RuntimeError("boom")

    code = """
        try:
            broken()
        except RuntimeError as e:
            r = str(e)
        try:
            raise ToolError("lookup", "ValueError: no such id")
        except ToolError as e:
            r2 = (e.tool_name, e.message)
        (r, r2)
    """
    ran = sandbox_run(textwrap.dedent(code), tools={"broken": failing})
    assert ran.value == ("boom", ("lookup", "ValueError: no such id"))


def test_stdlib_favourites(sandbox_run: Callable) -> None:
    code = """
        import json, collections, datetime, statistics, re, math, itertools, functools
        import heapq, bisect, textwrap, uuid, hashlib, base64, decimal, fractions, random
        c = collections.Counter("abracadabra")
        dd = collections.defaultdict(list)
        dd["k"].append(1)
        od = collections.OrderedDict(a=1)
        dq = collections.deque([1, 2], maxlen=2)
        dq.append(3)
        d0 = datetime.date(2024, 3, 1) - datetime.timedelta(days=1)
        dt = datetime.datetime(2024, 1, 2, 3, 4, tzinfo=datetime.timezone.utc)
        (
            json.dumps({"b": [1, 2], "a": None}, sort_keys=True),
            json.loads('{"x": 1}')["x"],
            c.most_common(1),
            dict(dd), list(od), list(dq),
            d0.isoformat(), dt.isoformat(), datetime.datetime.fromisoformat("2024-01-02").year,
            statistics.mean([1, 2, 3, 4]), statistics.median([3, 1, 2]),
            re.findall(r"\\d+", "a1b22"), re.sub(r"\\s+", " ", "a   b"),
            math.isclose(math.sqrt(2) ** 2, 2), math.floor(2.5),
            list(itertools.islice(itertools.count(), 3)), list(itertools.chain([1], [2])),
            functools.reduce(lambda a, b: a * b, [1, 2, 3]),
            heapq.nsmallest(2, [5, 1, 3]), bisect.bisect([1, 3], 2),
            textwrap.shorten("hello world foo", width=11), len(str(uuid.uuid4())),
            hashlib.sha256(b"x").hexdigest()[:8], base64.b64encode(b"hi").decode(),
            str(decimal.Decimal("1.10") + decimal.Decimal("2.205")),
            str(fractions.Fraction(1, 3) * 3),
            isinstance(random.random(), float),
        )
    """
    assert _run(sandbox_run, code).value == (
        '{"a": null, "b": [1, 2]}', 1, [("a", 5)], {"k": [1]}, ["a"], [2, 3],
        "2024-02-29", "2024-01-02T03:04:00+00:00", 2024, 2.5, 2, ["1", "22"], "a b", True, 2,
        [0, 1, 2], [1, 2], 6, [1, 3], 1, "hello [...]", 36, "2d711642", "aGk=", "3.305", "1",
        True,
    )  # fmt: skip


def test_functools_and_itertools_idioms(sandbox_run: Callable) -> None:
    code = """
        import functools, itertools, operator
        @functools.lru_cache(maxsize=None)
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)
        add3 = functools.partial(operator.add, 3)
        groups = {k: list(g) for k, g in itertools.groupby(sorted("aabbc"))}
        (fib(30), add3(4), groups, sorted([(1, "b"), (0, "a")], key=operator.itemgetter(1)))
    """
    assert _run(sandbox_run, code).value == (
        832040, 7, {"a": ["a", "a"], "b": ["b", "b"], "c": ["c"]}, [(0, "a"), (1, "b")],
    )  # fmt: skip


def test_closures_nonlocal_global_and_recursion(sandbox_run: Callable) -> None:
    code = """
        calls = 0
        def counter():
            n = 0
            def inc():
                nonlocal n
                n += 1
                return n
            return inc
        def tick():
            global calls
            calls += 1
        c = counter()
        c(); c()
        tick()
        def fact(n):
            return 1 if n <= 1 else n * fact(n - 1)
        (c(), calls, fact(10))
    """
    assert _run(sandbox_run, code).value == (3, 1, 3628800)


def test_async_habits(sandbox_run: Callable) -> None:
    code = """
        import asyncio
        async def fetch(i):
            await asyncio.sleep(0)
            return i * 10
        async def agen():
            for i in range(2):
                yield i
        results = await asyncio.gather(*[fetch(i) for i in range(3)])
        seen = [x async for x in agen()]
        results, seen
    """
    assert _run(sandbox_run, code).value == ([0, 10, 20], [0, 1])


def test_private_helpers_and_underscore_names(sandbox_run: Callable) -> None:
    code = """
        _cache = {}
        def _helper(x):
            return x + 1
        for _ in range(2):
            pass
        class _Impl:
            def __init__(self):
                self._state = _helper(1)
        (_Impl()._state, _cache)
    """
    assert _run(sandbox_run, code).value == (2, {})


def test_enum_and_named_tuples(sandbox_run: Callable) -> None:
    code = """
        import enum, collections
        class Status(enum.Enum):
            OK = "ok"
            FAIL = "fail"
        P = collections.namedtuple("P", "x y")
        p = P(1, 2)
        (Status("ok").name, Status.FAIL.value, p.x, p._asdict(), p._replace(x=5), P._fields,
         P._make([3, 4]))
    """
    assert _run(sandbox_run, code).value == (
        "OK", "fail", 1, {"x": 1, "y": 2}, (5, 2), ("x", "y"), (3, 4),
    )  # fmt: skip


def test_strict_policy_keeps_the_common_habits(sandbox_run: Callable) -> None:
    code = (
        "import json, math\nfrom dataclasses import dataclass\n@dataclass\n"
        "class A:\n    x: int\njson.dumps([A(2).x, math.floor(1.5)])"
    )
    assert sandbox_run(code, SandboxPolicy.strict()).value == "[2, 1]"

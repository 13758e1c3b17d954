"""Attribute and write guards: every route to interpreter internals or host state.

Each test tries to get past a guard; "blocked" means PolicyViolation (at compile time or
at run time), never a leak of host objects.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Callable

import pytest

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox import SandboxPolicy, build_globals, compile_snippet

SECRET_GLOBAL = "host-secret-do-not-leak"


def _blocked(sandbox_run: Callable, code: str, match: str | None = None) -> None:
    with pytest.raises(PolicyViolation, match=match):
        sandbox_run(textwrap.dedent(code))


# -- the bug cases ------------------------------------------------------------------------


def test_B01_generator_frame_walk_is_refused_at_compile_time(sandbox_run: Callable) -> None:
    code = (
        "def gen():\n    fr = g.gi_frame.f_back\n"
        "    yield fr.f_back.f_globals\ng = gen()\nfor result in g:\n    break"
    )
    with pytest.raises(PolicyViolation) as info:
        sandbox_run(code)
    assert "gi_frame" in str(info.value) and "f_back" in str(info.value)


@pytest.mark.parametrize(
    "code",
    [
        'def g():\n    yield 1\nx = g()\ngetattr(x, "gi_" + "frame")',
        'def g():\n    yield 1\nx = g()\ngetattr(x, "gi_code")',
        (
            "def g():\n    yield 1\ndef h():\n    yield from g()\nx = h()\n"
            'next(x)\ngetattr(x, "gi_yieldfrom")'
        ),
        (
            "async def c():\n    pass\nco = c()\ntry:\n"
            '    getattr(co, "cr_frame")\nfinally:\n    co.close()'
        ),
        (
            'async def c():\n    pass\nco = c()\ntry:\n    getattr(co, "cr_code")\n'
            "finally:\n    co.close()"
        ),
        'async def ag():\n    yield 1\ngetattr(ag(), "ag_frame")',
        'async def ag():\n    yield 1\ngetattr(ag(), "ag_code")',
        'try:\n    1/0\nexcept Exception as e:\n    tb = getattr(e.__traceback__, "tb_frame")',
        'getattr(search, "func_globals")',
        "import asyncio\nasync def m():\n    t = asyncio.create_task(asyncio.sleep(0))\n"
        '    getattr(t, "get_" + "loop")()\nasyncio.run(m())',
        "import asyncio\nasync def m():\n    t = asyncio.create_task(asyncio.sleep(0))\n"
        '    getattr(t, "get_stack")()\nasyncio.run(m())',
    ],
)
def test_B01_frame_code_and_loop_internals_are_refused_dynamically(
    sandbox_run: Callable, code: str
) -> None:
    _blocked(sandbox_run, code)


@pytest.mark.parametrize(
    "attr",
    ["gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "f_back", "f_globals",
     "f_locals", "f_builtins", "f_code", "tb_frame", "co_code", "func_globals",
     "get_loop", "mro"],
)  # fmt: skip
def test_B01_restricted_attribute_names_are_refused_statically(attr: str) -> None:
    with pytest.raises(PolicyViolation, match=attr):
        compile_snippet(f"x = obj.{attr}", SandboxPolicy())
    with pytest.raises(PolicyViolation, match=attr):
        compile_snippet(f"obj.{attr} = 1", SandboxPolicy())


def test_B03_str_format_field_traversal_on_a_tool(sandbox_run: Callable) -> None:
    with pytest.raises(PolicyViolation, match="'__globals__' of 'function'") as info:
        sandbox_run('a = "{0.__globals__}".format(search)\nprint(a)')
    assert SECRET_GLOBAL not in str(info.value)


def test_B03b_format_map_traversal(sandbox_run: Callable) -> None:
    _blocked(sandbox_run, 'b = "{t.__class__}".format_map({"t": search})\nprint(b)', "__class__")


@pytest.mark.parametrize(
    "code",
    [
        'str.format("{0.__globals__}", search)',
        'f = str.format\nf("{0.__globals__}", search)',
        'getattr("{0.__globals__}", "format")(search)',
        'list(map(str.format, ["{0.__globals__}"], [search]))',
        'import functools\nfunctools.partial(str.format, "{0.__globals__}")(search)',
        'class S(str):\n    pass\nS("{0.__globals__}").format(search)',
        'str.format_map("{x.__globals__}", {"x": search})',
    ],
)
def test_B03_every_route_to_str_format_guards_its_fields(sandbox_run: Callable, code: str) -> None:
    _blocked(sandbox_run, code, "'__globals__'")


def test_B07_shadowing_a_guard_name_to_write_to_a_shared_module(sandbox_run: Callable) -> None:
    code = "import math\ndef f(_write_=lambda o: o, /):\n    math.pi = 3\nf()\nprint(math.pi)"
    with pytest.raises(PolicyViolation, match="_write_"):
        sandbox_run(code)
    assert math.pi == 3.141592653589793
    assert sandbox_run("import math\nmath.pi").value == math.pi


@pytest.mark.parametrize(
    "code",
    [
        "_write_ = lambda o: o",
        "def f(_getattr_): pass",
        "def f(*, _getattr_=getattr): pass",
        "def f(*_apply_): pass",
        "def f(**_write_): pass",
        "lambda _getattr_: 1",
        "for _write_ in []: pass",
        "import math as _write_",
        "from math import pi as _getattr_",
        "def _write_(): pass",
        "class _write_: pass",
        "try:\n    pass\nexcept Exception as _write_:\n    pass",
        "with ctx() as _write_:\n    pass",
        "(_write_ := 1)",
        "global _write_",
        "[1 for _getattr_ in []]",
        "match 1:\n    case _write_:\n        pass",
        "match {}:\n    case {**_write_}:\n        pass",
        "match []:\n    case [*_write_]:\n        pass",
        "class C:\n    _getattr_ = staticmethod(lambda o, n: 1)",
        "__builtins__ = {}",
        "__import__ = 1",
        "__metaclass__ = type",
        "_ptc_sandbox_ = None",
        "del _write_",
    ],
)
def test_B07_guard_names_cannot_be_bound_in_any_way(code: str) -> None:
    with pytest.raises(PolicyViolation, match="reserved"):
        compile_snippet(code, SandboxPolicy())


def test_B07b_assigning_to_an_allowed_module_is_refused(sandbox_run: Callable) -> None:
    _blocked(sandbox_run, "import math\nmath.pi = 3\nprint(math.pi)", "read-only|cannot modify")
    assert math.pi == 3.141592653589793


@pytest.mark.parametrize(
    "code",
    [
        'import math\nsetattr(math, "pi", 3)',
        "import math\ndel math.pi",
        'import math\ndelattr(math, "pi")',
        "import math\ntype(math).pi = 3",
        'import math\nsetattr(type(math), "pi", 3)',
        "import math\nmath.pi += 1",
        "import math as m\nf = lambda: setattr(m, 'sqrt', print)\nf()",
        "from math import pi\nimport math\nmath.tau = pi",
    ],
)
def test_B07b_every_route_to_modify_a_module_is_refused(sandbox_run: Callable, code: str) -> None:
    _blocked(sandbox_run, code)
    assert math.pi == 3.141592653589793
    assert math.sqrt(4) == 2.0


def test_B08_dunder_class_hierarchy_traversal(sandbox_run: Callable) -> None:
    with pytest.raises(PolicyViolation) as info:
        sandbox_run("a = ().__class__.__base__.__subclasses__()\nprint(len(a))")
    assert "__subclasses__" in str(info.value) and "__base__" in str(info.value)
    with pytest.raises(PolicyViolation, match="'__class__' of 'tuple' object"):
        sandbox_run("a = ().__class__")


def test_B08b_getattr_with_dunder_strings(sandbox_run: Callable) -> None:
    with pytest.raises(PolicyViolation, match="__class__"):
        sandbox_run('b = getattr(getattr((), "__class__"), "__base__")\nprint(b)')


@pytest.mark.parametrize(
    "code",
    [
        'getattr(search, "__glob" + "als__")',
        'getattr(search, "".join(["__", "globals", "__"]))',
        'name = "__class__"\ngetattr(1, name)',
        'import functools\nfunctools.partial(getattr, search)("__globals__")',
        'list(map(getattr, [search], ["__globals__"]))',
        'sorted([search], key=lambda t: getattr(t, "__code__"))',
        'getattr(type(search), "__mro__")',
        'getattr(object, "__subclasses__")()',
        'getattr(search, "__dict__")',
        'getattr(search, "__closure__")',
        'getattr(print, "__self__")',
        'getattr(getattr, "__globals__")',
        'getattr(1, "__reduce_ex__")(2)',
        'getattr(super, "__init__")',
        'getattr(type(1), "mro")()',
        'getattr(list, "__class_getitem__")',
        'setattr(search, "__name__", "x")',
        'delattr(search, "__doc__")',
    ],
)
def test_B08b_computed_attribute_names_get_the_same_checks(
    sandbox_run: Callable, code: str
) -> None:
    _blocked(sandbox_run, code)


@pytest.mark.parametrize(
    "code",
    [
        "__builtins__",
        "__import__",
        "search.__globals__",
        "search.__wrapped__",
        "print.__self__",
        "super().__thisclass__",
        "list.__class_getitem__",
        "obj.__getattribute__('x')",
        "def f(): pass\nf.__code__",
        "class C: pass\nC.__subclasses__()",
        "class C: pass\nC.__bases__",
    ],
)
def test_dunder_and_builtins_access_is_refused_statically(code: str) -> None:
    with pytest.raises(PolicyViolation):
        compile_snippet(code, SandboxPolicy())


def test_eval_exec_open_and_friends_are_not_builtins(sandbox_run: Callable) -> None:
    # globals/locals/vars()/dir() are read-only views: tests/attacks/test_namespace_views.py
    for name in ("open", "input", "breakpoint", "help", "memoryview", "compile"):
        with pytest.raises(NameError):
            sandbox_run(f"{name}")
    for name in ("eval", "exec"):
        with pytest.raises((NameError, PolicyViolation)):
            sandbox_run(f"{name}('1')")


def test_dir_lists_names_without_handing_out_objects(sandbox_run: Callable) -> None:
    ran = sandbox_run("d = dir()\nd2 = dir(search)\nd")
    assert "search" in ran.value
    assert all(isinstance(n, str) for n in ran.value)


def test_type_with_three_arguments_is_refused_on_every_route(sandbox_run: Callable) -> None:
    for code in [
        'type("X", (), {"__del__": print})',
        'type(int)("X", (), {})',
        'type(type)("X", (), {})',
        't = type\nt("X", (), {})',
        "import enum\nclass E(enum.Enum):\n    A = 1\ntype(E)",
        "class M(type):\n    pass\nM('X', (), {})",
    ]:
        _blocked(sandbox_run, code)


def test_type_with_one_argument_behaves_like_type(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        r = [type(1) is int, type("a").__name__, isinstance(int, type), type(int) is type,
             issubclass(bool, int), type(b"x") == bytes, isinstance(b"x", bytes),
             isinstance(type, type), type(None).__name__]
        r
        """
    )
    assert sandbox_run(code).value == [True, "str", True, True, True, True, True, True, "NoneType"]


def test_super_tricks(sandbox_run: Callable) -> None:
    ok = textwrap.dedent(
        """
        class A:
            def __init__(self, x):
                self.x = x
        class B(A):
            def __init__(self, x):
                super().__init__(x * 2)
                A.__init__(self, x * 3)
        B(1).x
        """
    )
    assert sandbox_run(ok).value == 3
    for code in [
        "super(int, 5).__init__",
        "import uuid\nsuper(uuid.UUID, uuid.NAMESPACE_DNS).__init__(int=0)",
        "Exception.__init__(ValueError('x'), 'y')",
        "class C:\n    def f(self):\n        return super().__getattribute__('x')",
        "class C:\n    def f(self):\n        return super().__self__",
    ]:
        with pytest.raises(PolicyViolation):
            sandbox_run(code + "\n")
    import uuid

    assert str(uuid.NAMESPACE_DNS) == "6ba7b810-9dad-11d1-80b4-00c04fd430c8"


@pytest.mark.parametrize(
    "code",
    [
        "class C:\n    __match_args__ = ('__globals__',)",
        "class C:\n    __slots__ = names",
        "class C:\n    __slots__ = ('__globals__',)",
        "class C:\n    __slots__ = ('gi_frame', 'x')",
        "class C:\n    __slots__ = '_ptc_owned_'",
        "class C:\n    def __del__(self): pass",
        "class C:\n    def __getattribute__(self, n): pass",
        "class C:\n    def __setattr__(self, n, v): pass",
        "class C:\n    def __reduce__(self): pass",
        "class C:\n    gi_frame: int = 0",
        "class C(metaclass=type): pass",
        "class C(**{'metaclass': type}): pass",
        "def __init__(self): pass",
    ],
)
def test_class_bodies_cannot_define_special_names(code: str) -> None:
    with pytest.raises(PolicyViolation):
        compile_snippet(code, SandboxPolicy())


def test_B11_snippet_classes_cannot_define_reduce() -> None:
    code = (
        "import os\nclass P:\n    def __reduce__(self):\n"
        '        return (os.system, ("touch /tmp/x",))\nP()'
    )
    with pytest.raises(PolicyViolation, match="__reduce__"):
        compile_snippet(code, SandboxPolicy())


def test_match_class_pattern_attribute_captures_are_refused() -> None:
    for code in [
        "match 1:\n    case int(__class__=x):\n        pass",
        "match 1:\n    case object(gi_frame=f):\n        pass",
        "match 1:\n    case object(_private=f):\n        pass",
        "match 1:\n    case x.__class__:\n        pass",
    ]:
        with pytest.raises(PolicyViolation):
            compile_snippet(code, SandboxPolicy())


def test_match_positional_patterns_check_match_args_at_run_time(sandbox_run: Callable) -> None:
    ok = textwrap.dedent(
        """
        from dataclasses import dataclass
        @dataclass
        class P:
            x: int
            y: int
        match P(1, 2):
            case P(a, b):
                r = (a, b)
        r
        """
    )
    assert sandbox_run(ok).value == (1, 2)
    # an Enum functional API class could have carried __match_args__ before it was closed
    bad = "import enum\nE = enum.Enum('E', {'__match_args__': ('__globals__',), 'A': 1})"
    with pytest.raises(PolicyViolation, match="__match_args__"):
        sandbox_run(bad)


def test_match_args_guard_refuses_dangerous_names() -> None:
    from ptcbox.sandbox._builtins import _match_args

    class Bad:
        __match_args__ = ("__globals__",)

    class Worse:
        __match_args__ = ("gi_frame",)

    class Good:
        __match_args__ = ("x",)

    _match_args(Good, int)
    for cls in (Bad, Worse):
        with pytest.raises(PolicyViolation):
            _match_args(cls)


@pytest.mark.parametrize(
    "code",
    [
        'search(**{"__x": 1})',
        'search(**{"_getattr_": 1})',
        "search(__x=1)",
        "dict(__class__=1)",
    ],
)
def test_keyword_names_with_double_underscores_are_refused(
    sandbox_run: Callable, code: str
) -> None:
    _blocked(sandbox_run, code)


def test_fstring_repr_and_format_of_a_tool_leak_nothing(sandbox_run: Callable) -> None:
    ran = sandbox_run('print(f"{search!r} {search!s} {search}")\nprint(format(search, ""))')
    assert "search" in ran.stdout
    assert SECRET_GLOBAL not in ran.stdout
    with pytest.raises(TypeError):
        sandbox_run('format(search, "x")')


def test_string_template_does_not_traverse_attributes(sandbox_run: Callable) -> None:
    ran = sandbox_run(
        'import string\nprint(string.Template("${x.__class__}").safe_substitute(x=1))'
    )
    assert ran.stdout == "${x.__class__}\n"
    ran = sandbox_run('import string\nprint(string.Template("$x!").substitute(x=search))')
    assert ran.stdout.startswith("<function search")


def test_dataclass_fields_hand_out_only_public_data(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import dataclasses
        @dataclasses.dataclass
        class P:
            x: int = 1
            tags: list = dataclasses.field(default_factory=list)
        f = dataclasses.fields(P)
        [(a.name, a.type.__name__ if isinstance(a.type, type) else a.type) for a in f]
        """
    )
    assert sandbox_run(code).value == [("x", "int"), ("tags", "list")]
    _blocked(
        sandbox_run,
        "import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int = 1\n"
        "dataclasses.fields(P)[0]._field_type",
    )


def test_decorators_cannot_change_host_objects(sandbox_run: Callable) -> None:
    for code in [
        "import dataclasses, json\ndataclasses.dataclass(json.JSONEncoder)",
        "import functools, json\nfunctools.total_ordering(json.JSONDecoder)",
        "import functools, json\nfunctools.update_wrapper(json.dumps, print)",
        "import functools, json\nfunctools.wraps(print)(json.loads)",
        "import typing, json\ntyping.final(json.JSONEncoder)",
        "import typing\ntyping.runtime_checkable(typing.SupportsInt)",
    ]:
        _blocked(sandbox_run, code, "cannot change")
    assert not hasattr(json.dumps, "__wrapped__")
    assert not hasattr(json.JSONEncoder, "__final__")


def test_decorators_work_on_the_snippets_own_objects(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import functools, typing
        def deco(f):
            @functools.wraps(f)
            def inner(*a, **k):
                return f(*a, **k) + 1
            return inner
        @deco
        def h(x):
            "doc"
            return x
        @functools.total_ordering
        class V:
            def __init__(self, v):
                self.v = v
            def __eq__(self, o):
                return self.v == o.v
            def __lt__(self, o):
                return self.v < o.v
        @typing.runtime_checkable
        class Proto(typing.Protocol):
            def run(self) -> int: ...
        [h(1), h.__name__, h.__doc__, V(1) <= V(2), isinstance(1, Proto)]
        """
    )
    assert sandbox_run(code).value == [2, "h", "doc", True, False]


def test_write_guard_refuses_host_classes_and_allows_own_objects(sandbox_run: Callable) -> None:
    import collections

    for code in [
        "import collections\ncollections.Counter.most_common = lambda s, n=None: []",
        'import collections\nsetattr(collections.Counter, "most_common", None)',
        "import json\njson.JSONEncoder.item_separator = ';'",
        "import json\nenc = json.JSONEncoder\ndel enc.default",
        "search.cache = {}",
        "import re\nre.IGNORECASE.label = 1",
        "(1).real = 2",
        "import decimal\nc = decimal.Context()\nc.prec = 10**9",
    ]:
        with pytest.raises((PolicyViolation, AttributeError, TypeError)):
            sandbox_run(code)
    assert collections.Counter("aab").most_common(1) == [("a", 2)]
    code = textwrap.dedent(
        """
        class A:
            pass
        a = A()
        a.x = 1
        setattr(a, "y", 2)
        A.z = 3
        def f(): pass
        f.tag = "t"
        del a.x
        e = ValueError("v")
        e.extra = 5
        (hasattr(a, "x"), a.y, a.z, f.tag, e.extra)
        """
    )
    assert sandbox_run(code).value == (False, 2, 3, "t", 5)


def test_private_attributes_on_own_objects_only(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        class Acc:
            def __init__(self):
                self._items = []
                self.__hidden = 0
            def add(self, x):
                self._items.append(x)
                self.__hidden += x
                return self
            def total(self):
                return self.__hidden, len(self._items), getattr(self, "_items")
        a = Acc().add(2).add(3)
        a.total()
        """
    )
    assert sandbox_run(code).value == (5, 2, [2, 3])
    for code in [
        "import random\nrandom._inst",
        "import collections\nclass Q(collections.OrderedDict):\n    pass\nQ()._OrderedDict__root",
        "import asyncio\nasyncio.Queue()._queue",
        "import json\njson._default_encoder",
        'import json\ngetattr(json.JSONEncoder(), "_private")',
        "x = 'a'._fake",
    ]:
        with pytest.raises(PolicyViolation, match="private"):
            sandbox_run(code)


def test_hasattr_answers_without_handing_anything_out(sandbox_run: Callable) -> None:
    code = (
        '[hasattr(search, "__globals__"), hasattr([], "append"), hasattr(1, "nope"), '
        'hasattr((x for x in []), "gi_frame")]'
    )
    assert sandbox_run(code).value == [True, True, False, False]


def test_getattr_default_and_missing_attributes(sandbox_run: Callable) -> None:
    assert sandbox_run('getattr([], "nope", 7)').value == 7
    with pytest.raises(AttributeError):
        sandbox_run('getattr([], "nope")')
    with pytest.raises(TypeError):
        sandbox_run("getattr([], 1)")


def test_tools_are_wrapped_so_their_attributes_do_not_leak() -> None:
    import functools
    import io

    class Recorder:
        secret = SECRET_GLOBAL

        def call(self, q: str = "") -> str:
            return q

    partial_tool = functools.partial(Recorder().call)
    policy = SandboxPolicy()
    g = build_globals(
        policy, tools={"lookup": partial_tool}, stdout=io.StringIO(), stderr=io.StringIO()
    )
    compiled = compile_snippet("r = lookup(q='x')\nfn = getattr(lookup, 'func', None)", policy)
    exec(compiled.code, g)
    assert g["r"] == "x"
    assert g["fn"] is None
    with pytest.raises(PolicyViolation):
        exec(compile_snippet("lookup.__self__", policy).code, g)


def test_module_valued_attributes_are_never_handed_out() -> None:
    from types import ModuleType

    from ptcbox.sandbox._builtins import make_base_builtins
    from ptcbox.sandbox._limits import Limits

    getattr_ = make_base_builtins(Limits(10, 10))["getattr"]

    class Holder:
        mod = json

    with pytest.raises(PolicyViolation, match="module"):
        getattr_(Holder(), "mod")
    assert not isinstance(getattr_(Holder(), "__name__", None), ModuleType)


def test_native_attribute_names_never_lead_to_modules_frames_or_code() -> None:
    """NATIVE_ATTRS skip the guard: check every object the allowed modules hand out."""
    import types

    from ptcbox.sandbox._limits import Limits
    from ptcbox.sandbox._modules import ImportHook
    from ptcbox.sandbox._names import NATIVE_ATTRS

    hook = ImportHook(SandboxPolicy().allowed_imports, Limits(10**6, 10**6), None)
    bad = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType)
    seen = 0
    for name in SandboxPolicy().allowed_imports:
        proxy = hook(name)
        for attr in dir(proxy):
            if attr.startswith("_"):
                continue
            obj = getattr(proxy, attr)
            for candidate in (obj, type(obj)):
                for native in NATIVE_ATTRS:
                    try:
                        value = getattr(candidate, native)
                    except Exception:
                        continue
                    seen += 1
                    assert not isinstance(value, bad), (name, attr, native)
    assert seen > 100

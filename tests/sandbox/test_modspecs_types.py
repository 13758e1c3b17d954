"""functools / dataclasses / typing / abc views: no attribute read or write by a name the
snippet picks, no evaluated annotation strings, no change to shared objects (F1's kind)."""

from __future__ import annotations

import functools
import json
import textwrap
import typing
from collections.abc import Callable

import pytest

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox import DEFAULT_ALLOWED_IMPORTS, SandboxPolicy

WITH_ABC = SandboxPolicy(allowed_imports=DEFAULT_ALLOWED_IMPORTS | {"abc"})


# -- functools.update_wrapper / wraps (F1) ------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        "functools.update_wrapper(f, search, assigned=(), updated=('__globals__',))",
        "functools.update_wrapper(f, search, assigned=('__globals__',), updated=())",
        "functools.update_wrapper(f, search, assigned=('__closure__',))",
        "functools.update_wrapper(f, str, assigned=('format',), updated=())",
        "functools.update_wrapper(f, search, assigned=('_ptc_private_ok_',))",
        "functools.update_wrapper(f, search, assigned=('__code__',))",
        "functools.wraps(search, assigned=(), updated=('__globals__',))(f)",
        "functools.wraps(search, assigned=('__defaults__',))(f)",
        "functools.partial(functools.update_wrapper, updated=('__globals__',))(f, search)",
    ],
)
def test_update_wrapper_copies_only_the_standard_names(sandbox_run: Callable, call: str) -> None:
    with pytest.raises(PolicyViolation, match="update_wrapper copies only"):
        sandbox_run(f"import functools\ndef f(): pass\n{call}")


def test_update_wrapper_does_not_copy_host_dicts_or_annotations(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import asyncio, functools
        def f(): pass
        functools.update_wrapper(f, asyncio.Queue)  # a host class: its __dict__ stays out
        def g(): pass
        functools.update_wrapper(g, json_dumps)
        [hasattr(f, "_get_loop"), f.__name__, g.__name__]
        """
    )
    ran = sandbox_run(code, extra_globals={"json_dumps": json.dumps})
    assert ran.value == [False, "Queue", "dumps"]
    assert ran.globals["g"].__annotations__ == {}


def test_wraps_keeps_working_for_the_snippets_own_decorators(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import functools
        def deco(fn):
            @functools.wraps(fn)
            def inner(*a):
                return fn(*a) * 2
            return inner
        @deco
        def twice(x: int) -> int:
            "Doc."
            return x
        twice.tag = 1
        @functools.wraps(twice)
        def again(): pass
        [twice(2), twice.__name__, twice.__doc__, again.tag]
        """
    )
    ran = sandbox_run(code)
    assert ran.value == [4, "twice", "Doc.", 1]
    assert ran.globals["twice"].__annotations__ == {"x": int, "return": int}


# -- functools.singledispatch: annotations are never evaluated -----------------------------


@pytest.mark.parametrize(
    "code",
    [
        "@f.register\ndef _(x: 'search.__globals__'): pass",
        "f.register(search)",
        "class A:\n    @functools.singledispatchmethod\n    def m(self, x): pass\n"
        "    @m.register\n    def _(self, x: 'search.__globals__'): pass",
    ],
)
def test_singledispatch_register_evaluates_no_strings(sandbox_run: Callable, code: str) -> None:
    head = "import functools\n@functools.singledispatch\ndef f(x): return 'base'\n"
    with pytest.raises(PolicyViolation):
        sandbox_run(head + code)


def test_singledispatch_refuses_postponed_annotations(sandbox_run: Callable) -> None:
    code = (
        "from __future__ import annotations\nimport functools\n@functools.singledispatch\n"
        "def f(x): return 'base'\n@f.register\ndef _(x: int): pass"
    )
    with pytest.raises(PolicyViolation, match="string annotations"):
        sandbox_run(code)


def test_singledispatch_works_with_classes_and_annotation_objects(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import functools
        @functools.singledispatch
        def f(x): return "base"
        @f.register
        def _(x: int): return "int"
        @f.register(str)
        def _(x): return "str"
        @f.register
        def _(x: list | tuple): return "seq"
        class A:
            @functools.singledispatchmethod
            def m(self, x): return "base"
            @m.register
            def _(self, x: float): return "float"
        [f(1), f("a"), f([]), f(None), A().m(1.5), A().m(1)]
        """
    )
    assert sandbox_run(code).value == ["int", "str", "seq", "base", "float", "base"]


# -- dataclasses --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "class D(str):\n    format: int = 0",
        "class D(str):\n    ljust: int = 0",
        "class D(bytes):\n    replace: int = 0",
        "class D(int):\n    to_bytes: int = 0",
    ],
)
def test_dataclass_fields_cannot_shadow_guarded_methods(sandbox_run: Callable, body: str) -> None:
    with pytest.raises(PolicyViolation, match="would shadow"):
        sandbox_run(f"import dataclasses\n@dataclasses.dataclass\n{body}")


def test_asdict_astuple_replace_read_fields_with_the_guards(sandbox_run: Callable) -> None:
    ok = textwrap.dedent(
        """
        import dataclasses
        @dataclasses.dataclass
        class P:
            x: int
            center: float = 0.0
            tags: list = dataclasses.field(default_factory=list)
        @dataclasses.dataclass
        class Box:
            p: P
            _hidden: int = 3
        b = Box(P(1, 2.0, ["a"]))
        [dataclasses.asdict(b), dataclasses.astuple(b), dataclasses.replace(b.p, x=5),
         dataclasses.asdict(b, dict_factory=lambda kv: sorted(kv))]
        """
    )
    value = sandbox_run(ok).value
    assert value[0] == {"p": {"x": 1, "center": 2.0, "tags": ["a"]}, "_hidden": 3}
    assert value[1] == ((1, 2.0, ["a"]), 3)
    assert repr(value[2]) == "P(x=5, center=2.0, tags=['a'])"
    assert value[3] == [("_hidden", 3), ("p", [("center", 2.0), ("tags", ["a"]), ("x", 1)])]


# -- typing -------------------------------------------------------------------------------


def test_typing_hands_out_no_metaclass(sandbox_run: Callable) -> None:
    ran = sandbox_run(
        "import typing\n[typing.get_origin(typing.Type[int]) is type, "
        "typing.get_args(typing.Dict[str, int]), typing.get_origin(typing.List[int])]"
    )
    assert ran.value == [True, (str, int), list]
    assert ran.globals["__builtins__"]["type"] is not type
    for code in [
        "import typing\ntyping.get_origin(typing.Type[int])('X', (), {'__del__': print})",
        "import typing\nclass M(typing.Type):\n    pass",
        "import typing\nclass M(typing.Type[int]):\n    pass",
        "import typing\ntyping.ABCMeta",
        "import typing\ntyping.NamedTupleMeta",
        "from typing import ABCMeta",
    ]:
        with pytest.raises((PolicyViolation, AttributeError, ImportError)):
            sandbox_run(code)


def test_typing_overload_does_not_use_the_process_wide_registry(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import typing
        @typing.overload
        def leak(x: int) -> int: ...
        def leak(x):
            return x
        leak(3)
        """
    )
    assert sandbox_run(code).value == 3
    assert typing._overload_registry.get("__main__", {}).get("leak") is None  # type: ignore[attr-defined]
    for code in [
        "import typing\ntyping.get_overloads",
        "import typing\ntyping.no_type_check_decorator",
    ]:
        with pytest.raises(AttributeError, match="not available"):
            sandbox_run(code)


# -- abc / typing.abstractmethod ----------------------------------------------------------


def test_abstractmethod_marks_only_the_snippets_objects(sandbox_run: Callable) -> None:
    for code in [
        "import typing\ntyping.abstractmethod(host)",
        "import abc\nabc.abstractmethod(host)",
    ]:
        with pytest.raises(PolicyViolation, match="cannot change"):
            sandbox_run(code, WITH_ABC, extra_globals={"host": json.dumps})
    assert not hasattr(json.dumps, "__isabstractmethod__")
    code = textwrap.dedent(
        """
        import abc, typing
        class Base(abc.ABC):
            @typing.abstractmethod
            def run(self): ...
            @property
            @abc.abstractmethod
            def name(self): ...
            @classmethod
            @abc.abstractmethod
            def make(cls): ...
        try:
            Base()
        except TypeError as e:
            r = "abstract" in str(e)
        r
        """
    )
    assert sandbox_run(code, WITH_ABC).value is True
    for code in ["import abc\nabc.abstractclassmethod", "import abc\nabc.ABCMeta"]:
        with pytest.raises(AttributeError, match="not available"):
            sandbox_run(code, WITH_ABC)


def test_functools_partial_of_the_real_update_wrapper_is_not_reachable() -> None:
    # the only update_wrapper a snippet can name is the sandbox's
    from ptcbox.sandbox._modspecs_types import update_wrapper

    assert update_wrapper is not functools.update_wrapper


# -- enum functional API: names read once, as plain str ------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        "[(S('__del__'), 1)]",
        "{S('__init_subclass__'): 1}",
        "[S('__del__')]",
    ],
)
def test_enum_names_cannot_lie_to_the_check(sandbox_run: Callable, names: str) -> None:
    head = "import enum\nclass S(str):\n    def startswith(self, p):\n        return False\n"
    with pytest.raises(PolicyViolation, match="enum member name"):
        sandbox_run(head + f"enum.Enum('E', {names})")


def test_enum_names_are_read_exactly_once(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import enum
        class S(str):
            calls = 0
            def replace(self, a, b):
                S.calls += 1
                return "__del__"
        class Item:
            calls = 0
            def __iter__(self):
                Item.calls += 1
                return iter(["A" if Item.calls == 1 else "__del__", 1])
        E = enum.Enum("E", S("X Y"))
        F = enum.Enum("F", [Item()])
        [[m.name for m in E], [m.name for m in F], S.calls]
        """
    )
    assert sandbox_run(code).value == [["X", "Y"], ["A"], 0]

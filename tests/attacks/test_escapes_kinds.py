"""Sibling attacks of findings F1-F4 and F6, through both runtimes (the whole kind of each).

F1: stdlib functions that turn a caller-chosen name (or annotation string) into an
attribute read/write or into evaluated code. F2: metaclasses and forged ownership marks.
F3: guards keyed on where a value was read instead of on the value. F4: re-exports that
bypass their home module's replacement. F6: one C call building a huge object through a
route the size guards did not see.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from ptcbox.runtimes import ThreadRuntime
from ptcbox.sandbox._ablation import ENV_VAR

from ._proof import Attack, assert_control, assert_refused, by_id

pytestmark = pytest.mark.anyio

MARK = "ESCAPED"


async def run(runtime: Any, tools: Any, code: str, timeout: float = 10) -> Any:
    return await runtime.execute(code, tools, timeout=timeout)


ESCAPES = {
    # F1: names and annotation strings
    "wrapper_assigned_globals": "import functools\ndef f(): pass\n"
    "functools.update_wrapper(f, search, assigned=('__globals__',), updated=())\n"
    "print('ESCAPED', f.__globals__)",
    "wrapper_host_class_dict": "import functools, asyncio\ndef f(): pass\n"
    "functools.update_wrapper(f, asyncio.Queue)\nq = asyncio.Queue()\n"
    "print('ESCAPED', f._get_loop(q))",
    "singledispatch_eval": "import functools\n@functools.singledispatch\ndef f(x): pass\n"
    "def g(x: \"print('ESCAPED') or int\"): pass\nf.register(g)",
    "singledispatchmethod_eval": "import functools\nclass A:\n"
    "    @functools.singledispatchmethod\n    def m(self, x): pass\n"
    "    @m.register\n    def _(self, x: \"print('ESCAPED') or int\"): pass",
    "get_overloads": "import typing\nprint('ESCAPED', typing.get_overloads(print))",
    "no_type_check_decorator": "import typing, json\n"
    "typing.no_type_check_decorator(lambda f: json.dumps)(print)\nprint('ESCAPED')",
    "abstractmethod_host": "import typing, json\ntyping.abstractmethod(json.dumps)\n"
    "print('ESCAPED')",
    "dataclass_shadow_format": "import dataclasses\n@dataclasses.dataclass\nclass D(str):\n"
    "    format: int = 0\nd = D('{0.__class__}')\ndel d.format\n"
    "print('ESCAPED', dataclasses.asdict(d))",
    # F2: metaclasses
    "type_alias_subclass": "import typing\nclass M(typing.Type):\n    pass\n"
    "X = M('X', (), {'__getattr__': lambda s, n: n})\nprint('ESCAPED', X().x)",
    "get_origin_type": "import typing\nT = typing.get_origin(typing.Type[int])\n"
    "X = T('X', (), {'__del__': print})\nprint('ESCAPED')",
    # CPython refuses NamedTupleMeta('X', (), {}) by itself (no '__module__', no
    # _NamedTuple base): the rewrite takes the metaclass, then gives it what it needs
    "namedtuple_meta": "import typing, types\nM = typing.NamedTupleMeta\n"
    "B = types.resolve_bases((typing.NamedTuple,))[0]\n"
    "X = M('X', (B,), {'__module__': 'm', '__getattr__': lambda s, n: 'ESCAPED ' + n})\n"
    "print(X().x)",
    "from_typing_abcmeta": "from typing import ABCMeta\nprint('ESCAPED')",
    "type_of_protocol": "import typing\nprint('ESCAPED', type(typing.Protocol))",
    "private_via_builtins_module_name": "import collections, asyncio\n"
    "P = collections.namedtuple('P', 'a', module='builtins')\nclass Q(P, asyncio.Queue):\n"
    "    pass\nprint('ESCAPED', Q(1)._get_loop())",
    # F3: value-keyed format guard
    "typing_text_format": "import typing\n"
    "print('ESCAPED', typing.Text.format('{0.__globals__}', search)[:20])",
    "strenum_format": "import enum\nclass E(enum.StrEnum):\n    A = '{0.__globals__}'\n"
    "print('ESCAPED', E.A.format(search)[:20])",
    "augassign_radd": "class S(str): pass\nclass X:\n    def __radd__(self, o):\n"
    "        print('ESCAPED', o(search)[:20])\n        return 1\n"
    "s = S('{0.__globals__}')\ns.format += X()",
    "match_kw_format": "class S(str): pass\nmatch S('{0.__globals__}'):\n"
    "    case S(format=f):\n        print('ESCAPED', f(search)[:20])",
    "match_value_eq": "class X:\n    def __eq__(self, o):\n"
    "        print('ESCAPED', o('{0.__globals__}', search)[:20])\n        return True\n"
    "match X():\n    case str.format:\n        pass",
    # F4: re-exports
    "uuid_enum_subclass": "import uuid\nclass B(uuid.Enum):\n    pass\n"
    "B('E', {'__del__': print})\nprint('ESCAPED')",
    "dataclasses_function_type": "import dataclasses\nprint('ESCAPED', dataclasses.FunctionType)",
    "enum_mapping_proxy": "import enum\nprint('ESCAPED', enum.DynamicClassAttribute)",
}


# On the _proof pattern: the control (a child Python with only the named guard off, plus
# ``also_off`` where a second layer would stop it too) prints ESCAPED; the real policy
# refuses exactly, on the attack's line. Dropped, because CPython refuses them by itself:
# wrapper_assigned_globals (a function's __globals__ is read-only; the old test was also
# stopped at compile time on the later print line), wrapper_host_class_dict ('_get_loop' is
# not in Queue.__dict__, so update_wrapper copies nothing). match_value_eq's control turns
# off the attribute switch, which now covers the value-pattern check too.
PROVEN = by_id(
    [
        Attack(
            "singledispatch_eval",
            ESCAPES["singledispatch_eval"],
            5,
            "PolicyViolation",
            "string annotations are not evaluated in the sandbox (that would run them as code); "
            "pass the class instead, e.g",
            "module_views",
            MARK,
        ),
        Attack(
            "singledispatchmethod_eval",
            ESCAPES["singledispatchmethod_eval"],
            5,
            "PolicyViolation",
            "string annotations are not evaluated in the sandbox (that would run them as code); "
            "pass the class instead, e.g",
            "module_views",
            MARK,
        ),
        Attack(
            "get_overloads",
            ESCAPES["get_overloads"],
            2,
            "AttributeError",
            "typing.get_overloads is not available in the sandbox: reads typing's process-wide "
            "overload registry (functions",
            "module_views",
            MARK,
        ),
        Attack(
            "no_type_check_decorator",
            ESCAPES["no_type_check_decorator"],
            2,
            "AttributeError",
            "typing.no_type_check_decorator is not available in the sandbox: its decorators "
            "change functions shared with th",
            "module_views",
            MARK,
        ),
        Attack(
            "abstractmethod_host",
            ESCAPES["abstractmethod_host"],
            2,
            "PolicyViolation",
            "@abstractmethod cannot change 'function' object: only functions, classes and objects "
            "created by the snippet ca",
            "owner",
            MARK,
        ),
        Attack(
            "dataclass_shadow_format",
            ESCAPES["dataclass_shadow_format"],
            2,
            "PolicyViolation",
            "dataclass field 'format' would shadow str.format, a method the sandbox guards; "
            "rename the field",
            "module_views",
            MARK,
        ),
        Attack(
            "type_alias_subclass",
            ESCAPES["type_alias_subclass"],
            2,
            "PolicyViolation",
            "subclassing type (metaclasses) is not allowed in the sandbox",
            "metaclass",
            MARK,
        ),
        Attack(
            "get_origin_type",
            ESCAPES["get_origin_type"],
            3,
            "PolicyViolation",
            "type() with 3 arguments is not available in the sandbox; use a class statement "
            "(type(obj) with one argument wo",
            "metaclass",
            MARK,
        ),
        Attack(
            "from_typing_abcmeta",
            ESCAPES["from_typing_abcmeta"],
            1,
            "ImportError",
            "cannot import name 'ABCMeta' from 'typing': typing.ABCMeta is not available in the "
            "sandbox: a metaclass: calli",
            "module_views",
            MARK,
        ),
        Attack(
            "type_of_protocol",
            ESCAPES["type_of_protocol"],
            2,
            "PolicyViolation",
            "type() of a class whose metaclass is '_ProtocolMeta' is not available in the sandbox "
            "(metaclasses can build cl",
            "metaclass",
            MARK,
        ),
        Attack(
            "private_via_builtins_module_name",
            ESCAPES["private_via_builtins_module_name"],
            5,
            "PolicyViolation",
            "access to private attribute '_get_loop' of 'Q' object is not allowed; private "
            "attributes are only accessible o",
            "owner",
            MARK,
        ),
        Attack(
            "typing_text_format",
            ESCAPES["typing_text_format"],
            2,
            "PolicyViolation",
            "access to attribute '__globals__' of 'function' object is not allowed (special "
            "attributes are off limits)",
            "format",
            MARK,
        ),
        Attack(
            "strenum_format",
            ESCAPES["strenum_format"],
            4,
            "PolicyViolation",
            "access to attribute '__globals__' of 'function' object is not allowed (special "
            "attributes are off limits)",
            "format",
            MARK,
        ),
        Attack(
            "augassign_radd",
            ESCAPES["augassign_radd"],
            4,
            "PolicyViolation",
            "access to attribute '__globals__' of 'function' object is not allowed (special "
            "attributes are off limits)",
            "format",
            MARK,
        ),
        Attack(
            "match_kw_format",
            ESCAPES["match_kw_format"],
            3,
            "PolicyViolation",
            'attribute "format" is not allowed in a class pattern',
            "attribute",
            MARK,
            compile_time=True,
        ),
        Attack(
            "uuid_enum_subclass",
            ESCAPES["uuid_enum_subclass"],
            4,
            "PolicyViolation",
            "enum member name '__del__' is not allowed (names must be plain str not starting with "
            "'_')",
            "module_views",
            MARK,
        ),
        Attack(
            "dataclasses_function_type",
            ESCAPES["dataclasses_function_type"],
            2,
            "AttributeError",
            "dataclasses.FunctionType is not available in the sandbox: it comes from 'types': "
            "reached only through the sand",
            "module_views",
            MARK,
        ),
        Attack(
            "enum_mapping_proxy",
            ESCAPES["enum_mapping_proxy"],
            2,
            "AttributeError",
            "enum.DynamicClassAttribute is not available in the sandbox: it is "
            "types.DynamicClassAttribute: not exposed in ",
            "module_views",
            MARK,
        ),
        Attack(
            "match_value_eq",
            ESCAPES["match_value_eq"],
            6,
            "PolicyViolation",
            'attribute "format" is not allowed in a pattern',
            "attribute",
            MARK,
            compile_time=True,
        ),
        Attack(
            "namedtuple_meta",
            ESCAPES["namedtuple_meta"],
            2,
            "AttributeError",
            "typing.NamedTupleMeta is not available in the sandbox: a metaclass: calling it "
            "builds a class from arbitrary names",
            "module_views",
            "ESCAPED x",
            also_off=("metaclass",),
        ),
    ]
)
_DROPPED = {"wrapper_assigned_globals", "wrapper_host_class_dict"}
assert set(ESCAPES) == set(PROVEN) | _DROPPED


@pytest.mark.parametrize("attack", sorted(PROVEN))
async def test_sibling_escape_proves_its_guard(runtime: Any, tools: Any, attack: str) -> None:
    proof = PROVEN[attack]
    assert_control(proof, PROVEN.values())
    assert_refused(proof, await run(runtime, tools, proof.code))


OVERLOADS_FIRST = (
    "import typing\n@typing.overload\ndef shared(x: int) -> int: ...\n"
    "def shared(x): return x\nshared(1)"
)
OVERLOADS_SECOND = "import typing\ndef shared(x): pass\nprint(len(typing.get_overloads(shared)))"
OVERLOADS_CHILD = f"""
import asyncio
from ptcbox import resolve_tools
from ptcbox.runtimes import ThreadRuntime
async def main():
    async with ThreadRuntime() as rt:
        await rt.execute({OVERLOADS_FIRST!r}, resolve_tools([]), timeout=30)
        r = await rt.execute({OVERLOADS_SECOND!r}, resolve_tools([]), timeout=30)
        print("SEEN", r.stdout.strip(), r.error)
asyncio.run(main())
"""


async def test_overloads_of_one_execution_never_reach_another(tools: Any) -> None:
    """ThreadRuntime (one process for every execution): typing's overload registry is
    process-wide. Control: with the module views off (a child Python), the second
    execution sees the first one's overload; the view refuses get_overloads exactly."""
    env = {**os.environ, ENV_VAR: "module_views"}
    done = subprocess.run(
        [sys.executable, "-c", OVERLOADS_CHILD],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert "SEEN 1 None" in done.stdout, done.stdout + done.stderr
    async with ThreadRuntime() as rt:
        first = await run(rt, tools, OVERLOADS_FIRST)
        assert (first.value, first.error) == (1, None), first
        result = await run(rt, tools, OVERLOADS_SECOND)
    assert result.error_type == "AttributeError" and result.stdout == "", result
    assert result.error is not None and 'File "<snippet>", line 3' in result.error
    assert result.error.rstrip().endswith(
        "typing.get_overloads is not available in the sandbox: reads typing's process-wide "
        "overload registry (functions of the host and of other executions)"
    )


# F6 routes: the control (size guards off, a child Python under a 3 GiB cap) builds ~10x
# the 1 MiB cap and prints its size; the real guard refuses on the building line.
_BUILT = "\nprint('BUILT', len(x))"
_ROUTES: dict[str, tuple[str, str]] = {  # id: (snippet, what the guard names)
    "bytes_subclass": ("class B(bytes): pass\nx = B(10**7)", "bytes(n)"),
    "bytearray_subclass": ("class B(bytearray): pass\nx = B(10**7)", "bytearray(n)"),
    "bytes_source_kw": ("pass\nx = bytes(source=10**7)", "bytes(n)"),
    "uuid_bytes": ("import uuid\nx = uuid.bytes_(10**7)", "bytes(n)"),
    "statistics_mul": ("import statistics\nx = statistics.mul('a', 10**7)", "*"),
    "super_center": ("class S(str): pass\nx = super(S, S('a')).center(10**7)", "S.center"),
    "subclass_to_bytes": ("class I(int): pass\nx = I.to_bytes(1, 10**7, 'big')", "to_bytes"),
    "textwrap_tabs": (
        "import textwrap\nx = textwrap.fill('a\\tb', width=2 * 10**7, tabsize=10**7)",
        "textwrap tabsize",
    ),
    "json_indent": ("import json\nx = json.dumps([1], indent=10**7)", "json indent"),
    "re_sub": ("import re\nx = re.sub('', 'x' * 10**4, 'a' * 10**3)", "re.sub"),
    "re_callable": (
        "import re; big = 'x' * 10**5\nx = re.sub('', lambda m: big, 'a' * 100)",
        "re.sub",
    ),
    "tee": ("import itertools\nx = itertools.tee([], 10**6)", "itertools.tee"),
    "shake": ("import hashlib\nx = hashlib.shake_256(b'').digest(10**7)", "digest"),
    "lying_contains": (
        "class S(str):\n    def __contains__(self, x):\n        return False\n"
        "x = S('%10000000s') % 'a'",
        "%",
    ),
    "lying_dict_values": (
        "class T(dict):\n    def values(self):\n        return []\n"
        "x = ('a' * 1000).translate(T({97: 'x' * 10**4}))",
        "str.translate",
    ),
    "format_spec_subclass": ("class S(str): pass\nx = format(1, S('10000000'))", "format"),
    "fraction_exponent": (
        "import fractions\nx = range(fractions.Fraction('1e2000000').numerator.bit_length())",
        "Fraction",
    ),
    "fraction_via_type": (
        "import fractions\n"
        "x = range(type(fractions.Fraction(1))('1e2000000').numerator.bit_length())",
        "Fraction",
    ),
}
SIZE_BOMBS = by_id(
    Attack(
        name,
        code + _BUILT,
        code.count("\n") + 1,
        "ArithmeticLimitExceeded",
        f"result size of {what!r} exceeded: ",
        "size",
        "BUILT ",
        policy={"max_repeat_bytes": 1 << 20},
    )
    for name, (code, what) in _ROUTES.items()
)


@pytest.mark.parametrize("attack", sorted(SIZE_BOMBS))
async def test_thread_size_guards_hold_for_every_route(
    make_runtime: Any, runtime_name: str, tools: Any, attack: str
) -> None:
    if runtime_name != "thread":
        pytest.skip("size guards are compiled out in the subprocess runtime (rlimits bound it)")
    proof = SIZE_BOMBS[attack]
    assert_control(proof, SIZE_BOMBS.values())  # size guards off: ~10 MB built
    rt = make_runtime(proof.sandbox_policy())
    assert_refused(proof, await run(rt, tools, proof.code, timeout=30))


# Routes to a class with a __del__ (a finalizer the host's gc would run: test_finalizers.py
# covers where such code may run). Control: with the metaclass checks off, the class is built
# and its finalizer runs. The old test ran gc.collect() in the test process itself (a success
# would have spun pytest for minutes) and checked only return_code == 1. Its uuid.Enum route
# is uuid_enum_subclass above and uuid_enum_functional_dunder in test_escapes.py.
_DEL = "def d(self):\n    print('ESCAPED del')\nimport typing\n"
DEL_ROUTES = by_id(
    [
        Attack(
            "type_subclass_del",
            _DEL
            + "class M(typing.Type):\n    pass\nX = M('X', (), {'__del__': d})\nx = X()\ndel x",
            4,
            "PolicyViolation",
            "subclassing type (metaclasses) is not allowed in the sandbox",
            "metaclass",
            "ESCAPED del",
        ),
        Attack(
            "get_origin_type_del",
            _DEL + "T = typing.get_origin(typing.Type[int])\nX = T('X', (), {'__del__': d})\n"
            "x = X()\ndel x",
            5,
            "PolicyViolation",
            "type() with 3 arguments is not available in the sandbox; use a class statement",
            "metaclass",
            "ESCAPED del",
        ),
    ]
)


@pytest.mark.parametrize("attack", sorted(DEL_ROUTES))
async def test_no_route_to_a_class_with_a_finalizer(runtime: Any, tools: Any, attack: str) -> None:
    proof = DEL_ROUTES[attack]
    assert_control(proof, DEL_ROUTES.values())
    assert_refused(proof, await run(runtime, tools, proof.code))

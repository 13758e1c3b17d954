"""Sibling attacks of findings F1-F4 and F6, through both runtimes (the whole kind of each).

F1: stdlib functions that turn a caller-chosen name (or annotation string) into an
attribute read/write or into evaluated code. F2: metaclasses and forged ownership marks.
F3: guards keyed on where a value was read instead of on the value. F4: re-exports that
bypass their home module's replacement. F6: one C call building a huge object through a
route the size guards did not see.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from ptcbox.runtimes import ThreadRuntime
from ptcbox.sandbox import SandboxPolicy
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
    "namedtuple_meta": "import typing\nX = typing.NamedTupleMeta('X', (), {})\nprint('ESCAPED')",
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
# not in Queue.__dict__, so update_wrapper copies nothing). Not yet retrofitted:
# match_value_eq (refused by the compile-time pattern check, which has no switch) and
# namedtuple_meta (its control with module views and metaclass checks off still fails).
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
    ]
)
_DROPPED = {"wrapper_assigned_globals", "wrapper_host_class_dict"}
_OLD_STYLE = [k for k in ESCAPES if k not in PROVEN and k not in _DROPPED]


@pytest.mark.parametrize("attack", sorted(PROVEN))
async def test_sibling_escape_proves_its_guard(runtime: Any, tools: Any, attack: str) -> None:
    proof = PROVEN[attack]
    assert_control(proof, PROVEN.values())
    assert_refused(proof, await run(runtime, tools, proof.code))


@pytest.mark.parametrize("attack", _OLD_STYLE)
async def test_sibling_escape_is_refused(runtime: Any, tools: Any, attack: str) -> None:
    result = await run(runtime, tools, ESCAPES[attack])
    assert MARK not in result.stdout, result.stdout
    assert result.return_code == 1
    assert "__builtins__" not in result.stdout


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


SIZE_BOMBS = {
    "bytes_subclass": "class B(bytes): pass\nB(10**9)",
    "bytearray_subclass": "class B(bytearray): pass\nB(10**9)",
    "bytes_source_kw": "bytes(source=10**9)",
    "uuid_bytes": "import uuid\nuuid.bytes_(10**9)",
    "statistics_mul": "import statistics\nstatistics.mul('a', 10**9)",
    "super_center": "class S(str): pass\nsuper(S, S('a')).center(10**9)",
    "subclass_to_bytes": "class I(int): pass\nI.to_bytes(1, 10**9, 'big')",
    "textwrap_tabs": "import textwrap\ntextwrap.fill('a\\tb', tabsize=10**9)",
    "json_indent": "import json\njson.dumps([1], indent=10**9)",
    "re_sub": "import re\nre.sub('', 'x' * 10**6, 'a' * 10**5)",
    "re_callable": "import re\nbig = 'x' * 10**7\nre.sub('', lambda m: big, 'a' * 1000)",
    "tee": "import itertools\nitertools.tee([], 10**9)",
    "shake": "import hashlib\nhashlib.shake_256(b'').digest(10**9)",
    "lying_contains": "class S(str):\n    def __contains__(self, x):\n        return False\n"
    "S('%1000000000s') % 'a'",
    "lying_dict_values": "class T(dict):\n    def values(self):\n        return []\n"
    "('a' * 1000).translate(T({97: 'x' * 10**6}))",
    "format_spec_subclass": "class S(str): pass\nformat(1, S('1000000000'))",
    "fraction_exponent": "import fractions\nfractions.Fraction('1e999999999')",
    "fraction_via_type": "import fractions\ntype(fractions.Fraction(1))('1e999999999')",
}


@pytest.mark.parametrize("code", list(SIZE_BOMBS.values()), ids=list(SIZE_BOMBS))
async def test_thread_size_guards_hold_for_every_route(
    make_runtime: Any, runtime_name: str, tools: Any, code: str
) -> None:
    if runtime_name != "thread":
        pytest.skip("size guards are compiled out in the subprocess runtime (rlimits bound it)")
    rt = make_runtime(SandboxPolicy().replace(max_repeat_bytes=1 << 20))
    result = await run(rt, tools, code, timeout=5)
    assert result.error_type == "ArithmeticLimitExceeded", result.error


DEL_ROUTES = [
    "import typing\nclass M(typing.Type):\n    pass\nX = M('X', (), {'__del__': d})",
    "import typing\nT = typing.get_origin(typing.Type[int])\nX = T('X', (), {'__del__': d})",
    "import uuid\nX = uuid.Enum('X', {'A': 1, '__del__': d})",
]


@pytest.mark.parametrize("route", DEL_ROUTES)
async def test_thread_no_route_to_a_finalizer_in_the_host_gc(
    make_runtime: Any, runtime_name: str, tools: Any, route: str
) -> None:
    if runtime_name != "thread":
        pytest.skip("thread runtime only")
    rt = make_runtime()
    # A finalizer that ran would loop for minutes: a collection that returns within
    # 15 s (a plain one takes milliseconds; seconds on a loaded 2-core machine) ran none.
    code = "def d(self):\n    n = 0\n    while n < 3 * 10**9:\n        n += 1\n" + route
    code += "\nx = X()\ncycle = [x]\ncycle.append(cycle)"
    result = await run(rt, tools, code, timeout=5)
    assert result.return_code == 1
    start = time.monotonic()
    gc.collect()
    assert time.monotonic() - start < 15

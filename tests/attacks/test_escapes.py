"""Sandbox escapes under the default policy (both runtimes).

Holes found by the attack review are ``xfail(strict=True)`` with their finding id; they
assert the SAFE behaviour, so they start passing (and strict xfail turns red) once fixed.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest

from ptcbox.sandbox._owner import PRIVATE_ATTR

from ._proof import Attack, assert_control, assert_refused, by_id, result_without

pytestmark = pytest.mark.anyio


async def run(runtime: Any, tools: Any, code: str, timeout: float = 10) -> Any:
    return await runtime.execute(code, tools, timeout=timeout)


# -- open holes --------------------------------------------------------------------------

GLOBALS_VIA_UPDATE_WRAPPER = """
import functools
def f(): pass
functools.update_wrapper(f, search, assigned=(), updated=("__globals__",))
print("ESCAPED", type(sys.modules["os"]).__name__)
"""

GLOBALS_VIA_WRAPS = """
import functools
@functools.wraps(search, assigned=(), updated=("__globals__",))
def f(): pass
print("ESCAPED", type(sys.modules["os"]).__name__)
"""


_NOT_GLOBALS = (
    "functools.update_wrapper copies only __module__, __name__, __qualname__, __doc__, "
    "__annotations__ (assigned) and __dict__ (updated) in the sandbox, not '__globals__'"
)
UPDATE_WRAPPER = by_id(
    [
        Attack(
            "update_wrapper",
            GLOBALS_VIA_UPDATE_WRAPPER,
            4,
            "PolicyViolation",
            _NOT_GLOBALS,
            "module_views",
            "ESCAPED module",
        ),
        Attack(
            "wraps",
            GLOBALS_VIA_WRAPS,
            3,
            "PolicyViolation",
            _NOT_GLOBALS,
            "module_views",
            "ESCAPED module",
        ),
    ]
)


@pytest.mark.parametrize("attack", sorted(UPDATE_WRAPPER))
async def test_update_wrapper_cannot_merge_host_globals(
    runtime: Any, tools: Any, attack: str
) -> None:
    proof = UPDATE_WRAPPER[attack]
    assert_control(proof, UPDATE_WRAPPER.values())  # the real functools merges them
    assert_refused(proof, await run(runtime, tools, proof.code))


# The dir_fd write outside the working directory (it died at update_wrapper here, never
# reaching a wall) is test_host_safety.py::test_dir_fd_write_outside_the_workdir.


# F2: the ownership marks were read with getattr, so a class-dict descriptor named like a
# mark (here classmethod(property(...)), which answers the class lookup with the class
# itself) forged private_ok() and opened the host's event loop. Snippets cannot put that
# name into a class dict: 3-argument type() (metaclass guard), typing.ABCMeta, make_dataclass,
# types.new_class (module views) and class-body names (names guard) are all refused first.
# So the test turns the route's guard off (never the ownership check) to reach the check.
FORGED_PRIVATE_OK = Attack(
    "private_ok_forged",
    "import asyncio\n"
    "Q = type('Q', (asyncio.Queue,), {'_ptc_private_ok_': classmethod(property(lambda c: c))})\n"
    "print('BUILT')\n"
    "q = Q()\n"
    "await asyncio.sleep(0)\n"
    "print('LOOP', type(q._get_loop()).__name__)",
    6,
    "PolicyViolation",
    "access to private attribute '_get_loop' of 'Q' object is not allowed; private attributes "
    "are only accessible on the snippet's own classes and objects",
    "owner",
    "LOOP _UnixSelectorEventLoop",
    also_off=("metaclass",),
)


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="classmethod no longer wraps property")
async def test_private_ok_cannot_be_forged(runtime: Any, tools: Any) -> None:
    forged = type("Q", (asyncio.Queue,), {PRIVATE_ATTR: classmethod(property(lambda c: c))})
    assert getattr(forged, PRIVATE_ATTR) is forged  # what the old getattr lookup saw
    assert_control(FORGED_PRIVATE_OK)  # route and ownership check off: the host's loop
    reached = result_without(FORGED_PRIVATE_OK, ["metaclass"])
    assert reached.stdout == "BUILT\n"  # the forged class exists; the check refuses it
    assert_refused(FORGED_PRIVATE_OK, reached)
    result = await run(runtime, tools, FORGED_PRIVATE_OK.code)  # the real policy
    assert result.error_type == "PolicyViolation" and result.stdout == "", result
    assert result.error is not None and 'File "<snippet>", line 2' in result.error
    assert result.error.rstrip().endswith(
        "type() with 3 arguments is not available in the sandbox; use a class statement "
        "(type(obj) with one argument works)"
    )


_METACLASS = (
    "typing.ABCMeta is not available in the sandbox: a metaclass: calling it builds a class "
    "from arbitrary (dunder) names"
)
_NOT_GLOBALS_FIELD = (
    "access to attribute '__globals__' of 'function' object is not allowed (special "
    "attributes are off limits)"
)
BUILT_CLASSES = by_id(
    [
        # typing.ABCMeta is a metaclass: a class from a dict of dunders (the metaclass guard
        # of class statements would refuse the call too: also off in the control)
        Attack(
            "abcmeta_getattr",
            "import typing\n"
            "X = typing.ABCMeta('X', (), {'__getattr__': lambda s, n: 'ESCAPED ' + n})\n"
            "print(X().x)",
            2,
            "AttributeError",
            _METACLASS,
            "module_views",
            "ESCAPED x",
            also_off=("metaclass",),
        ),
        Attack(
            "abcmeta_del",
            "import typing\n"
            "X = typing.ABCMeta('X', (), {'__del__': lambda s: print('ESCAPED del')})\n"
            "x = X()\ndel x",
            2,
            "AttributeError",
            _METACLASS,
            "module_views",
            "ESCAPED del",
            also_off=("metaclass",),
        ),
        Attack(
            "uuid_enum_functional_dunder",
            "import uuid\nE = uuid.Enum('E', {'A': 1, '__str__': lambda s: 'ESCAPED dunder'})\n"
            "print(E.A)",
            2,
            "PolicyViolation",
            "enum member name '__str__' is not allowed (names must be plain str not starting "
            "with '_')",
            "module_views",
            "ESCAPED dunder",
        ),
        # str subclasses reach str.format by other names: the format guard sees them all
        Attack(
            "str_subclass_format",
            "class S(str): pass\nprint(S.format('{0.__globals__[__builtins__]}', search)[:40])",
            2,
            "PolicyViolation",
            _NOT_GLOBALS_FIELD,
            "format",
            "{'__name__': 'builtins'",
        ),
        Attack(
            "str_subclass_format_map",
            "class S(str): pass\nprint(S.format_map('{t.__class__}', {'t': search}))",
            2,
            "PolicyViolation",
            "access to attribute '__class__' of 'function' object is not allowed (only on the "
            "snippet's own objects and exceptions; use type(obj))",
            "format",
            "<class 'function'>",
        ),
        Attack(
            "str_subclass_super_format",
            "class S(str): pass\ns = S('{0.__globals__}')\nprint(super(S, s).format(search)[:40])",
            3,
            "PolicyViolation",
            _NOT_GLOBALS_FIELD,
            "format",
            "{'__name__': 'ptcbox.sandbox._globals'",
        ),
    ]
)


@pytest.mark.parametrize("attack", sorted(BUILT_CLASSES))
async def test_metaclass_enum_and_format_routes_prove_their_guard(
    runtime: Any, tools: Any, attack: str
) -> None:
    proof = BUILT_CLASSES[attack]
    assert_control(proof, BUILT_CLASSES.values())
    assert_refused(proof, await run(runtime, tools, proof.code))


# -- attacks that are stopped (regression tests) --------------------------------------
# On the ``_proof`` pattern: each prints "REACHED True" on the line after the attack when
# its guard is off (the control, in a child Python; ``also_off`` where a second layer, the
# read-only module view, would stop it too) and is refused exactly under the real policy.
# Dropped, because plain CPython refuses them by itself: format(search, '{0.__globals__}')
# (function.__format__ takes no spec), a sync asyncio.get_running_loop() (no loop), a
# namedtuple field named '__globals__' (CPython refuses underscores); B03/B03b and
# except* live in test_format_fields.py / test_dunder_routes.py.

HELD = by_id(
    [
        Attack(
            "B01_generator_frame",
            "def gen():\n    fr = g.gi_frame.f_back\n    yield fr\ng = gen()\nfor x in g:\n    "
            'break\nprint("REACHED", x is not None)',
            2,
            "PolicyViolation",
            '"gi_frame" is a restricted attribute (frame, code, traceback and generator internals '
            "are off limits)",
            "attribute",
            "REACHED True",
            compile_time=True,
        ),
        Attack(
            "gi_frame_getattr",
            "def g():\n    yield 1\nx = getattr(g(), 'gi_frame')\nprint(\"REACHED\", x is not "
            "None)",
            3,
            "PolicyViolation",
            "access to attribute 'gi_frame' of 'generator' object is not allowed (frame, code, "
            "traceback and generator internals are ",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "B04_formatter",
            'import string\nx = string.Formatter().get_field("0.__globals__", [search], '
            '{})[0]\nprint("REACHED", x is not None)',
            2,
            "AttributeError",
            "string.Formatter is not available in the sandbox: get_field() walks attributes of "
            "its arguments (GHSA-hp3v-5vw7-fx9w)",
            "module_views",
            "REACHED True",
        ),
        Attack(
            "B07_shadow_write",
            "import math\ndef f(_write_=lambda o: o, /):\n    math.pi = 3\nf()\nx = "
            'math.pi\nprint("REACHED", x is not None)',
            2,
            "PolicyViolation",
            '"_write_" is a reserved name: names that start and end with "_" belong to the sandbox',
            "names",
            "REACHED True",
            compile_time=True,
            also_off=("module_views",),
        ),
        Attack(
            "B07b_module_write",
            'import math\nmath.pi = 3\nx = math.pi\nprint("REACHED", x is not None)',
            2,
            "PolicyViolation",
            "cannot modify module 'math': only functions, classes and objects created by the "
            "snippet can be modified (modules and sha",
            "write",
            "REACHED True",
            also_off=("module_views",),
        ),
        Attack(
            "B08_subclasses",
            'x = ().__class__.__base__.__subclasses__()\nprint("REACHED", x is not None)',
            1,
            "PolicyViolation",
            'access to attribute "__base__" is not allowed (class-hierarchy traversal from '
            "__class__ is off limits)",
            "attribute",
            "REACHED True",
            compile_time=True,
        ),
        Attack(
            "B08b_getattr_dunder",
            'x = getattr(getattr((), "__class__"), "__base__")\nprint("REACHED", x is not None)',
            1,
            "PolicyViolation",
            "access to attribute '__class__' of 'tuple' object is not allowed (only on the "
            "snippet's own objects and exceptions; use ",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "B09_private_module_attr",
            'import random\nx = random._os\nprint("REACHED", x is not None)',
            2,
            "PolicyViolation",
            "access to private attribute '_os' of module 'random' is not allowed; private "
            "attributes are only accessible on the snipp",
            "attribute",
            "REACHED True",
            also_off=("module_views",),
        ),
        Attack(
            "B09b_importlib",
            'import importlib\nx = importlib.import_module("subprocess")\nprint("REACHED", x is '
            "not None)",
            1,
            "ImportError",
            "import of 'importlib' is not allowed in the sandbox: imports any module, bypassing "
            "the allowlist; use an import statemen",
            "import_allowlist",
            "REACHED True",
        ),
        Attack(
            "import_os",
            'import os\nx = os\nprint("REACHED", x is not None)',
            1,
            "ImportError",
            "import of 'os' is not allowed in the sandbox: no access to the host's operating "
            "system (files, processes, environment); ",
            "import_allowlist",
            "REACHED True",
        ),
        Attack(
            "import_gc",
            'import gc\nx = gc\nprint("REACHED", x is not None)',
            1,
            "ImportError",
            "import of 'gc' is not allowed in the sandbox: reaches every object in the process "
            "(gc.get_objects); allowed modules: abc",
            "import_allowlist",
            "REACHED True",
        ),
        Attack(
            "traceback",
            "try:\n    1/0\nexcept Exception as e:\n    x = getattr(e.__traceback__, "
            "'tb_frame')\nprint(\"REACHED\", x is not None)",
            4,
            "PolicyViolation",
            "access to attribute 'tb_frame' of 'traceback' object is not allowed (frame, code, "
            "traceback and generator internals are ",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "exc_context",
            "try:\n    try:\n        1/0\n    except Exception:\n        raise ValueError\nexcept "
            "ValueError as e:\n    x = getattr(e.__context__.__traceback__, 'tb_' + "
            "'frame')\nprint(\"REACHED\", x is not None)",
            7,
            "PolicyViolation",
            "access to attribute 'tb_frame' of 'traceback' object is not allowed (frame, code, "
            "traceback and generator internals are ",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "super_self_class",
            "class A: pass\nx = getattr(super(A, A()), '__self_class__')\nprint(\"REACHED\", x is "
            "not None)",
            2,
            "PolicyViolation",
            "access to attribute '__self_class__' of 'super' object is not allowed (special "
            "attributes are off limits)",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "partial_closure",
            "import functools\nx = getattr(functools.partial(search).func, "
            "'__closure__')\nprint(\"REACHED\", x is not None)",
            2,
            "PolicyViolation",
            "access to attribute '__closure__' of 'function' object is not allowed (special "
            "attributes are off limits)",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "lru_wrapped",
            "import functools\nx = getattr(functools.lru_cache(search), "
            "'__wrapped__')\nprint(\"REACHED\", x is not None)",
            2,
            "PolicyViolation",
            "access to attribute '__wrapped__' of '_lru_cache_wrapper' object is not allowed "
            "(special attributes are off limits)",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "tool_closure",
            "x = getattr(search, '__closure__')\nprint(\"REACHED\", x is not None)",
            1,
            "PolicyViolation",
            "access to attribute '__closure__' of 'function' object is not allowed (special "
            "attributes are off limits)",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "task_get_coro",
            "import asyncio\nasync def m(): return 1\nt = asyncio.create_task(m())\nawait t\nx = "
            "getattr(t, 'get_coro')()\nprint(\"REACHED\", x is not None)",
            5,
            "PolicyViolation",
            "access to attribute 'get_coro' of 'Task' object is not allowed (it leads to the "
            "event loop, coroutines or frames)",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "enum_dunder_member",
            "import enum\nx = enum.Enum('E', {'__del__': 1})\nprint(\"REACHED\", x is not None)",
            2,
            "PolicyViolation",
            "enum member name '__del__' is not allowed (names must be plain str not starting with "
            "'_')",
            "module_views",
            "REACHED True",
        ),
        Attack(
            "random_self",
            "import random\nx = getattr(random.random, '__self__')\nprint(\"REACHED\", x is not "
            "None)",
            2,
            "PolicyViolation",
            "access to attribute '__self__' of 'builtin_function_or_method' object is not allowed "
            "(special attributes are off limits)",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "setattr_module",
            "import math\nsetattr(math, 'pi', 3)\nx = math.pi\nprint(\"REACHED\", x is not None)",
            2,
            "PolicyViolation",
            "cannot set attribute 'pi' of module 'math': only functions, classes and objects "
            "created by the snippet can be modified",
            "owner",
            "REACHED True",
            also_off=("module_views",),
        ),
        Attack(
            "vars",
            'import math\nx = vars(math)\nprint("REACHED", x is not None)',
            2,
            "PolicyViolation",
            "access to attribute '__dict__' of module 'math' is not allowed (only on instances of "
            "the snippet's own classes)",
            "attribute",
            "REACHED True",
            also_off=("module_views",),
        ),
        Attack(
            "metaclass_kw",
            'import abc\nclass A(metaclass=abc.ABCMeta): pass\nx = A\nprint("REACHED", x is not '
            "None)",
            2,
            "PolicyViolation",
            "class keyword arguments metaclass= and ** are not allowed",
            "metaclass",
            "REACHED True",
            compile_time=True,
            also_off=("module_views",),
        ),
        Attack(
            "type_3_args",
            "x = type('X', (), {'__del__': lambda s: None})\nprint(\"REACHED\", x is not None)",
            1,
            "PolicyViolation",
            "type() with 3 arguments is not available in the sandbox; use a class statement "
            "(type(obj) with one argument works)",
            "metaclass",
            "REACHED True",
        ),
        Attack(
            "type_of_enum_class",
            "import enum\nE = enum.Enum('E', 'A')\nx = type(E)\nprint(\"REACHED\", x is not None)",
            3,
            "PolicyViolation",
            "type() of a class whose metaclass is 'EnumType' is not available in the sandbox "
            "(metaclasses can build classes from arbi",
            "metaclass",
            "REACHED True",
        ),
        Attack(
            "forwardref_evaluate",
            "import typing\nr = typing.get_args(typing.List['os'])[0]\nx = "
            'r._evaluate\nprint("REACHED", x is not None)',
            3,
            "PolicyViolation",
            "access to private attribute '_evaluate' of 'ForwardRef' object is not allowed; "
            "private attributes are only accessible on",
            "owner",
            "REACHED True",
        ),
        Attack(
            "typing_get_type_hints",
            'import typing\nx = typing.get_type_hints\nprint("REACHED", x is not None)',
            2,
            "AttributeError",
            "typing.get_type_hints is not available in the sandbox: evaluates strings as code",
            "module_views",
            "REACHED True",
        ),
        Attack(
            "operator_attrgetter",
            "import operator\nx = operator.attrgetter('__globals__')(search)\nprint(\"REACHED\", "
            "x is not None)",
            2,
            "PolicyViolation",
            "access to attribute '__globals__' of 'function' object is not allowed (special "
            "attributes are off limits)",
            "attribute",
            "REACHED True",
        ),
        Attack(
            "setattr_def",
            'class A:\n    def __setattr__(self, n, v): pass\nx = A\nprint("REACHED", x is not '
            "None)",
            2,
            "PolicyViolation",
            '"__setattr__" is a reserved name (special names cannot be bound)',
            "names",
            "REACHED True",
            compile_time=True,
        ),
        Attack(
            "delattr_def",
            'class A:\n    def __delattr__(self, n): pass\nx = A\nprint("REACHED", x is not None)',
            2,
            "PolicyViolation",
            '"__delattr__" is a reserved name (special names cannot be bound)',
            "names",
            "REACHED True",
            compile_time=True,
        ),
        Attack(
            "set_name_def",
            'class D:\n    def __set_name__(self, o, n): pass\nx = D\nprint("REACHED", x is not '
            "None)",
            2,
            "PolicyViolation",
            '"__set_name__" is a reserved name (special names cannot be bound)',
            "names",
            "REACHED True",
            compile_time=True,
        ),
        Attack(
            "match_kw_dunder",
            'match search:\n    case object(__globals__=g):\n        x = g\nprint("REACHED", x is '
            "not None)",
            2,
            "PolicyViolation",
            'attribute "__globals__" is not allowed in a class pattern',
            "attribute",
            "REACHED True",
            compile_time=True,
        ),
    ]
)


@pytest.mark.parametrize("attack", sorted(HELD))
async def test_attack_is_refused(runtime: Any, tools: Any, attack: str) -> None:
    proof = HELD[attack]
    assert_control(proof, HELD.values())
    assert_refused(proof, await run(runtime, tools, proof.code))


B12_EXIT = 'print("before")\nraise SystemExit(3)'


async def test_b12_system_exit_keeps_host_alive(runtime: Any, tools: Any) -> None:
    # control: plain exec in a child Python ends that process with the snippet's status
    script = f"exec({B12_EXIT!r})\nprint('host still here')"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (3, "before\n"), done
    result = await run(runtime, tools, B12_EXIT)
    assert result.return_code == 1 and result.error_type == "SystemExit"
    assert result.stdout == "before\n"
    assert result.error is not None and 'File "<snippet>", line 2' in result.error
    assert result.error.endswith(
        "SystemExit: 3\nthe code exited with status 3 (sys.exit / SystemExit with a non-zero code)"
    )
    again = await run(runtime, tools, "print('next')")  # the runtime (and host) go on
    assert again.ok and again.stdout == "next\n", again

"""Sandbox escapes under the default policy (both runtimes).

Holes found by the attack review are ``xfail(strict=True)`` with their finding id; they
assert the SAFE behaviour, so they start passing (and strict xfail turns red) once fixed.
"""

from __future__ import annotations

from typing import Any

import pytest

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


@pytest.mark.parametrize("code", [GLOBALS_VIA_UPDATE_WRAPPER, GLOBALS_VIA_WRAPS])
async def test_update_wrapper_cannot_merge_host_globals(
    runtime: Any, tools: Any, code: str
) -> None:
    result = await run(runtime, tools, code)
    assert "ESCAPED" not in result.stdout
    assert result.return_code == 1


WRITE_OUTSIDE_WORKDIR = """
import functools
def f(): pass
functools.update_wrapper(f, search, assigned=(), updated=("__globals__",))
os = sys.modules["os"]
d = os.open("{dir}", os.O_RDONLY)
os.close(os.open("{name}", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d))
"""


async def test_subprocess_cannot_write_outside_workdir_via_dir_fd(
    make_runtime: Any, runtime_name: str, tools: Any, tmp_path: Any
) -> None:
    if runtime_name != "subprocess":
        pytest.skip("audit hook is subprocess-only")
    rt = make_runtime()
    await run(rt, tools, WRITE_OUTSIDE_WORKDIR.format(dir=tmp_path, name="pwned"))
    assert not (tmp_path / "pwned").exists()


EVENT_LOOP_VIA_FORGED_PRIVATE_OK = """
import typing, asyncio
def get(self, inst, owner):
    return owner
D = typing.ABCMeta("D", (), {"__get__": get})
Q = typing.ABCMeta("Q", (asyncio.Queue,), {"_ptc_private_ok_": D()})
q = Q()
await asyncio.sleep(0)
print("LOOP", type(q._get_loop()).__name__)
"""


async def test_private_ok_cannot_be_forged(runtime: Any, tools: Any) -> None:
    result = await run(runtime, tools, EVENT_LOOP_VIA_FORGED_PRIVATE_OK)
    assert "LOOP" not in result.stdout
    assert result.return_code == 1


@pytest.mark.parametrize(
    "code",
    [
        "import typing\nX = typing.ABCMeta('X', (), {'__getattr__': lambda s, n: n})\nX().x",
        "import typing\nX = typing.ABCMeta('X', (), {'__del__': lambda s: None})",
    ],
)
async def test_abcmeta_cannot_build_classes_with_arbitrary_dunders(
    runtime: Any, tools: Any, code: str
) -> None:
    result = await run(runtime, tools, code)
    assert result.return_code == 1


async def test_uuid_enum_functional_api_refuses_dunders(runtime: Any, tools: Any) -> None:
    code = "import uuid\nE = uuid.Enum('E', {'A': 1, '__del__': lambda s: None})\nprint('MADE')"
    result = await run(runtime, tools, code)
    assert "MADE" not in result.stdout
    assert result.return_code == 1


@pytest.mark.parametrize(
    "code",
    [
        "class S(str): pass\nprint(S.format('{0.__globals__[__builtins__]}', search)[:40])",
        "class S(str): pass\nprint(S.format_map('{t.__class__}', {'t': search}))",
        "class S(str): pass\ns = S('{0.__globals__}')\nprint(super(S, s).format(search)[:40])",
    ],
)
async def test_str_subclass_format_is_refused(runtime: Any, tools: Any, code: str) -> None:
    result = await run(runtime, tools, code)
    assert result.return_code == 1
    assert "builtins" not in result.stdout and "function" not in result.stdout


# -- attacks that are stopped (regression tests) --------------------------------------

HELD = {
    "B01_generator_frame": "def gen():\n    fr = g.gi_frame.f_back\n    yield fr\ng = gen()\n"
    "for r in g:\n    break",
    "gi_frame_getattr": "def g():\n    yield 1\ngetattr(g(), 'gi_frame')",
    "B03_format": 'print("{0.__globals__}".format(search))',
    "B03b_format_map": 'print("{t.__class__}".format_map({"t": search}))',
    "B04_formatter": 'import string\nprint(string.Formatter().get_field("0.__globals__", '
    "[search], {})[0])",
    "B07_shadow_write": "import math\ndef f(_write_=lambda o: o, /):\n    math.pi = 3\nf()",
    "B07b_module_write": "import math\nmath.pi = 3",
    "B08_subclasses": "().__class__.__base__.__subclasses__()",
    "B08b_getattr_dunder": 'getattr(getattr((), "__class__"), "__base__")',
    "B09_private_module_attr": "import random\nrandom._os",
    "B09b_importlib": 'import importlib\nimportlib.import_module("subprocess")',
    "import_os": "import os",
    "import_gc": "import gc",
    "traceback": "try:\n    1/0\nexcept Exception as e:\n    getattr(e.__traceback__, 'tb_frame')",
    "exc_context": "try:\n    try:\n        1/0\n    except Exception:\n        raise ValueError\n"
    "except ValueError as e:\n    getattr(e.__context__.__traceback__, 'tb_' + 'frame')",
    "super_self_class": "class A: pass\ngetattr(super(A, A()), '__self_class__')",
    "format_builtin_spec": "format(search, '{0.__globals__}')",
    "partial_closure": "import functools\ngetattr(functools.partial(search).func, '__closure__')",
    "lru_wrapped": "import functools\ngetattr(functools.lru_cache(search), '__wrapped__')",
    "tool_closure": "getattr(search, '__closure__')",
    "task_get_coro": "import asyncio\nasync def m(): return 1\nt = asyncio.create_task(m())\n"
    "await t\ngetattr(t, 'get_coro')()",
    "get_running_loop": "import asyncio\nasyncio.get_running_loop()",
    "namedtuple_dunder_field": "import collections\ncollections.namedtuple('P', ['__globals__'])",
    "enum_dunder_member": "import enum\nenum.Enum('E', {'__del__': 1})",
    "random_self": "import random\ngetattr(random.random, '__self__')",
    "setattr_module": "import math\nsetattr(math, 'pi', 3)",
    "vars": "import math\nvars(math)",
    "setattr_def": "class A:\n    def __setattr__(self, n, v): pass",
    "delattr_def": "class A:\n    def __delattr__(self, n): pass",
    "set_name_def": "class D:\n    def __set_name__(self, o, n): pass",
    "metaclass_kw": "class M: pass\nclass A(metaclass=M): pass",
    "type_3_args": "type('X', (), {'__del__': lambda s: None})",
    "type_of_enum_class": "import enum\nE = enum.Enum('E', 'A')\ntype(E)",
    "forwardref_evaluate": "import typing\nr = typing.get_args(typing.List['os'])[0]\nr._evaluate",
    "match_kw_dunder": "match search:\n    case object(__globals__=g):\n        pass",
    "typing_get_type_hints": "import typing\ntyping.get_type_hints",
    "operator_attrgetter": "import operator\noperator.attrgetter('__globals__')(search)",
    "try_star_custom_split": "class G(ExceptionGroup):\n    def split(self, t):\n"
    "        return 1\ntry:\n    raise G('g', [ValueError(1)])\nexcept* ValueError:\n    pass",
}


@pytest.mark.parametrize("code", list(HELD.values()), ids=list(HELD))
async def test_attack_is_refused(runtime: Any, tools: Any, code: str) -> None:
    result = await run(runtime, tools, code)
    assert result.return_code == 1, result.stdout
    assert "__builtins__" not in result.stdout


async def test_b12_system_exit_keeps_host_alive(runtime: Any, tools: Any) -> None:
    result = await run(runtime, tools, 'print("before")\nraise SystemExit(3)')
    assert result.return_code == 1 and result.error_type == "SystemExit"
    assert result.stdout == "before\n"

"""``__version__`` is readable now (``np.__version__``); the dangerous dunders stay refused.

Each still-refused dunder gets a positive control (the trusted policy reads it and reaches
a host path, the import machinery, the real builtins or the class tree) and an exact
refusal under the default policy, both for the compiled attribute (``json.__file__``,
refused by the compiler) and for ``getattr`` (refused by the getattr guard at run time).
``__version__`` itself gets an attack where it holds something other than a version.
"""

from __future__ import annotations

import os
import types
from typing import Any

import pytest

from ptcbox import resolve_tools
from ptcbox.runtimes import ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

from ._proof import Attack, assert_control, assert_refused, by_id
from .conftest import TOOLS

pytestmark = pytest.mark.anyio

_SPECIAL = "is not allowed (special attributes are off limits)"

# id: (setup line, target expression, what the trusted control prints, owner as described)
_FN = "'function' object"
_DEF = "def f():\n    pass"
_TARGETS: dict[str, tuple[str, str, str, str]] = {
    "module_file": ("import json", "json.__file__", "json/__init__.py", "module 'json'"),
    "package_path": ("import json", "json.__path__", "['/", "module 'json'"),
    "module_cached": ("import json", "json.__cached__", ".pyc", "module 'json'"),
    "module_spec": ("import json", "json.__spec__", "SourceFileLoader", "module 'json'"),
    "module_loader": ("import json", "json.__loader__", "SourceFileLoader", "module 'json'"),
    "module_builtins": ("import json", "json.__builtins__", "'exec'", "module 'json'"),
    "builtin_self": ("x = 1", "len.__self__", "<module 'builtins'",
                     "'builtin_function_or_method' object"),
    "function_globals": (_DEF, "f.__globals__", "'__builtins__'", _FN),
    "function_code": (_DEF, "f.__code__", "<code object", _FN),
    "function_closure": ("def f():\n    y = 1\n    return lambda: y\ng = f()",
                         "g.__closure__", "<cell", _FN),
    "class_subclasses": ("x = 1", "int.__subclasses__()", "<class 'bool'>", "class 'int'"),
    "class_bases": ("x = 1", "bool.__bases__", "<class 'int'>", "class 'bool'"),
}  # fmt: skip


def _attacks() -> dict[str, Attack]:
    out: list[Attack] = []
    for name, (setup, target, marker, owner) in _TARGETS.items():
        line = setup.count("\n") + 2
        attr = target.split(".")[-1].removesuffix("()")
        call = "()" if target.endswith("()") else ""
        out.append(
            Attack(
                id=f"{name}_compiled",
                code=f"{setup}\nprint({target})",
                line=line,
                error_type="PolicyViolation",
                message=f'access to attribute "{attr}" is not allowed',
                guard="attribute",
                marker=marker,
                control="trusted",
                compile_time=True,
            )
        )
        obj = target.split(".")[0]
        out.append(
            Attack(
                id=f"{name}_getattr",
                code=f"{setup}\nprint(getattr({obj}, {attr!r}){call})",
                line=line,
                error_type="PolicyViolation",
                message=f"access to attribute {attr!r} of {owner} {_SPECIAL}",
                guard="attribute",
                marker=marker,
                control="trusted",
            )
        )
    return by_id(out)


ATTACKS = _attacks()


@pytest.mark.parametrize("attack", sorted(ATTACKS))
async def test_dangerous_dunders_stay_refused(runtime: Any, attack: str) -> None:
    proof = ATTACKS[attack]
    assert_control(proof, ATTACKS.values())
    result = await runtime.execute(proof.code, TOOLS, timeout=30)
    assert_refused(proof, result)
    assert result.stdout == ""


async def test_a_version_that_is_not_data_is_refused() -> None:
    """A host object whose ``__version__`` is a function (ThreadRuntime: host objects
    reach the snippet as extra globals) is refused; a version string passes."""
    code = "print(pkg.__version__)\nprint(getattr(pkg, '__version__'))"
    extra = {"pkg": types.SimpleNamespace(__version__=os.getcwd)}
    async with ThreadRuntime(SandboxPolicy.trusted()) as trusted:
        shown = await trusted.execute(code, resolve_tools([]), extra_globals=extra)
    assert "<built-in function getcwd>" in shown.stdout, shown  # the route is real
    async with ThreadRuntime() as runtime:
        result = await runtime.execute(code, resolve_tools([]), extra_globals=extra)
        fine = await runtime.execute(
            code, resolve_tools([]), extra_globals={"pkg": types.SimpleNamespace(__version__="1.2")}
        )
    assert result.error_type == "PolicyViolation", result
    assert result.stdout == ""
    assert result.error is not None and 'File "<snippet>", line 1' in result.error
    assert result.error.rstrip().endswith(
        "PolicyViolation: access to attribute '__version__' of 'SimpleNamespace' object is "
        "not allowed (only a version string or tuple is handed out)"
    )
    assert fine.stdout == "1.2\n1.2\n", fine

"""Module views vetted by identity (F4) and free of metaclasses (F2): a re-export gets the
same treatment as the object where it comes from."""

from __future__ import annotations

import builtins
import enum
import io
import operator
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

from ptcbox.sandbox import DEFAULT_ALLOWED_IMPORTS, EXCLUDED_BUILTINS, SandboxPolicy, build_globals
from ptcbox.sandbox._policy import _STRICT_IMPORTS

EXTRA = frozenset({"abc", "collections.abc", "numbers", "contextlib"})
POLICY = SandboxPolicy(allowed_imports=DEFAULT_ALLOWED_IMPORTS | _STRICT_IMPORTS | EXTRA)


def _views() -> tuple[dict[str, Any], dict[str, Any]]:
    g = build_globals(POLICY, tools={}, stdout=io.StringIO(), stderr=io.StringIO())
    hook = g["__builtins__"]["__import__"]
    views = {}
    for name in sorted(POLICY.allowed_imports):
        top = hook(name)
        proxy = top
        for part in name.split(".")[1:]:
            proxy = getattr(proxy, part)
        views[name] = proxy
    return views, g["__builtins__"]


def _public(proxy: Any) -> dict[str, Any]:
    return {k: getattr(proxy, k) for k in dir(type(proxy)) if not k.startswith("_")}


def test_no_view_holds_a_metaclass() -> None:
    views, _ = _views()
    for name, proxy in views.items():
        for attr, value in _public(proxy).items():
            assert not (isinstance(value, type) and issubclass(value, type)), (name, attr)


def test_no_view_holds_a_real_builtin_the_sandbox_replaces_or_leaves_out() -> None:
    views, sandbox = _views()
    replaced = {
        id(v): k for k, v in vars(builtins).items() if callable(v) and sandbox.get(k) is not v
    }
    for name, proxy in views.items():
        for attr, value in _public(proxy).items():
            assert id(value) not in replaced, (name, attr, replaced.get(id(value)))


def test_no_view_holds_interpreter_types_or_objects_of_excluded_modules() -> None:
    views, _ = _views()
    banned = {id(v): "types" for v in vars(types).values() if callable(v)}
    for mod in ("os", "sys", "inspect", "weakref", "threading", "io", "gc"):
        if mod in sys.modules:
            banned |= {
                id(v): mod
                for v in vars(sys.modules[mod]).values()
                if callable(v) and getattr(v, "__module__", None) in (mod, f"_{mod}")
            }
    for name, proxy in views.items():
        for attr, value in _public(proxy).items():
            # a confined module's own view (sys, io, types) hands out what its spec lists
            assert banned.get(id(value), name) == name, (name, attr)


def test_re_exports_get_the_home_modules_replacement() -> None:
    views, sandbox = _views()
    assert views["uuid"].Enum is views["enum"].Enum is not enum.Enum
    assert views["statistics"].mul is views["operator"].mul is not operator.mul
    assert views["uuid"].bytes_ is sandbox["bytes"]
    assert views["typing"].abstractmethod is views["abc"].abstractmethod
    assert views["functools"].namedtuple is views["collections"].namedtuple  # unchanged re-export
    for name, attr in [("dataclasses", "FunctionType"), ("enum", "MappingProxyType"),
                       ("typing", "GenericAlias"), ("typing", "ABCMeta")]:  # fmt: skip
        with pytest.raises(AttributeError, match="not available"):
            getattr(views[name], attr)


def test_every_excluded_builtin_stays_out_of_every_view() -> None:
    views, _ = _views()
    excluded = {id(getattr(builtins, n)) for n in EXCLUDED_BUILTINS if hasattr(builtins, n)}
    for name, proxy in views.items():
        for attr, value in _public(proxy).items():
            assert id(value) not in excluded, (name, attr)


@pytest.mark.parametrize(
    "code",
    [
        "import uuid\nuuid.Enum('E', {'__del__': print})",
        "import uuid\nuuid.Enum('E', {'A': 1, '__init_subclass__': print})",
        "import uuid\nclass B(uuid.Enum):\n    pass\nB('E', {'__del__': print})",
        "import statistics\nstatistics.mul('a', 10**10)",
        "import uuid\nuuid.bytes_(10**10)",
        "import dataclasses\ndataclasses.FunctionType",
        "import typing\ntyping.abstractmethod(search)",
    ],
)
def test_re_export_routes_are_closed(sandbox_run: Callable, code: str) -> None:
    from ptcbox.errors import ArithmeticLimitExceeded, PolicyViolation

    with pytest.raises((PolicyViolation, ArithmeticLimitExceeded, AttributeError)):
        sandbox_run(code)

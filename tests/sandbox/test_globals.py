"""build_globals: the namespace, print, tools, extra globals, trusted mode."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable

import pytest

from ptcbox.errors import ToolError
from ptcbox.sandbox import VALUE_NAME, SandboxPolicy, build_globals, compile_snippet
from ptcbox.sandbox._globals import add_globals


def test_namespace_basics(sandbox_run: Callable) -> None:
    ran = sandbox_run("(__name__, ToolError.__name__, type(print).__name__)")
    assert ran.value == ("__main__", "ToolError", "function")
    assert ran.globals["__builtins__"]["ToolError"] is ToolError


def test_tools_win_over_extra_globals(sandbox_run: Callable) -> None:
    ran = sandbox_run(
        "(lookup(), data)", tools={"lookup": lambda: "tool"}, extra_globals={"lookup": 1, "data": 2}
    )
    assert ran.value == ("tool", 2)


@pytest.mark.parametrize("name", ["_getattr_", "_write_", "__builtins__", "__import__", VALUE_NAME])
def test_reserved_names_are_refused_for_tools_and_globals(name: str) -> None:
    for kwargs in ({"tools": {name: print}}, {"tools": {}, "extra_globals": {name: 1}}):
        with pytest.raises(ValueError, match="reserved"):
            build_globals(SandboxPolicy(), stdout=io.StringIO(), stderr=io.StringIO(), **kwargs)


def test_tool_calls_pass_arguments_and_results_through(sandbox_run: Callable) -> None:
    calls: list[tuple[tuple[object, ...], dict[str, object]]] = []

    def record(*args: object, **kwargs: object) -> str:
        """Record the call."""
        calls.append((args, kwargs))
        return "ok"

    ran = sandbox_run("(record(1, b=2), record.__name__, record.__doc__)", tools={"record": record})
    assert ran.value == ("ok", "record", "Record the call.")
    assert calls == [((1,), {"b": 2})]


def test_each_execution_gets_fresh_globals_and_sessions_can_reuse_them() -> None:
    policy = SandboxPolicy()
    out = io.StringIO()
    g = build_globals(policy, tools={}, stdout=out, stderr=out)
    exec(compile_snippet("counter = 1", policy).code, g)
    exec(compile_snippet("counter += 1\ncounter", policy).code, g)
    assert g[VALUE_NAME] == 2
    fresh = build_globals(policy, tools={}, stdout=out, stderr=out)
    assert "counter" not in fresh
    assert fresh["__builtins__"] is not g["__builtins__"]


def test_print_goes_to_the_execution_sink_only() -> None:
    policy = SandboxPolicy()
    a, b = io.StringIO(), io.StringIO()
    ga = build_globals(policy, tools={}, stdout=a, stderr=a)
    gb = build_globals(policy, tools={}, stdout=b, stderr=b)
    code = compile_snippet("print('x')", policy).code
    exec(code, ga)
    exec(code, gb)
    exec(code, gb)
    assert (a.getvalue(), b.getvalue()) == ("x\n", "x\nx\n")


def test_trusted_print_honours_sys_stdout_and_stderr(sandbox_run: Callable) -> None:
    code = "import sys\nprint('out', file=sys.stdout)\nprint('err', file=sys.stderr)\nprint('x')"
    ran = sandbox_run(code, SandboxPolicy.trusted())
    assert (ran.stdout, ran.stderr) == ("out\nx\n", "err\n")


def test_trusted_globals_use_real_builtins_and_modules(sandbox_run: Callable) -> None:
    ran = sandbox_run(
        "import os, builtins\n(os.sep, builtins.len is len, getattr((), '__class__'))",
        SandboxPolicy.trusted(),
        tools={"t": len},
    )
    assert ran.value == ("/", True, tuple)
    assert ran.globals["t"] is len  # trusted: tools are passed as they are


def test_lone_surrogates_reach_the_sink_unchanged(sandbox_run: Callable) -> None:
    ran = sandbox_run('print("ok \\ud800")')
    assert ran.stdout == "ok \ud800\n"  # the runtime decides how to encode (B29)


def test_tools_are_wrapped_unless_they_already_are_plain_stubs() -> None:
    """A tool is hidden behind a plain closure (the snippet sees no ``func`` of a
    partial); ``plain_tools`` (a subprocess worker's own stubs) adds them as they are."""
    policy = SandboxPolicy()
    tool = functools.partial(print, "x")
    wrapped: dict[str, object] = {}
    add_globals(wrapped, policy, tools={"t": tool})
    assert wrapped["t"] is not tool and not hasattr(wrapped["t"], "func")
    plain: dict[str, object] = {}
    add_globals(plain, policy, tools={"t": tool}, plain_tools=True)
    assert plain["t"] is tool

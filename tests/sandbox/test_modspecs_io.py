"""The sys, io, pprint, contextlib, traceback and types views (in-process)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ptcbox.errors import ArithmeticLimitExceeded, PolicyViolation
from ptcbox.sandbox import SandboxPolicy

SMALL = SandboxPolicy().replace(max_repeat_bytes=1 << 16)


def test_sys_argv_is_a_fresh_list_per_execution(sandbox_run: Callable) -> None:
    first = sandbox_run("import sys\nsys.argv.append('--flag')\nsys.argv")
    assert first.value == ["<snippet>", "--flag"]
    assert sandbox_run("import sys\nsys.argv").value == ["<snippet>"]


def test_redirect_stdout_makes_sys_stdout_the_target(sandbox_run: Callable) -> None:
    code = "import contextlib, io, sys\nbuf = io.StringIO()\nbefore = sys.stdout\n"
    code += (
        "with contextlib.redirect_stdout(buf):\n    inside = sys.stdout is buf\n    print('x')\n"
    )
    code += "with contextlib.redirect_stderr(None):\n    print('gone', file=sys.stderr)\n"
    code += "(inside, sys.stdout is before, buf.getvalue())"
    ran = sandbox_run(code)
    assert ran.value == (True, True, "x\n")
    assert (ran.stdout, ran.stderr) == ("gone\n", "")  # print(file=None): stdout, as CPython


def test_sys_stdout_write_checks_its_argument(sandbox_run: Callable) -> None:
    with pytest.raises(TypeError, match="write\\(\\) argument must be str, not int"):
        sandbox_run("import sys\nsys.stdout.write(1)")
    assert sandbox_run("import sys\nsys.stdout.write('abc')").value == 3


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("import sys\nsys.modules", "every module of the process"),
        ("import sys\nsys.stdin", "there is no stdin"),
        ("import sys\nsys.path", "where the process imports from"),
        ("import io\nio.open", "files and file descriptors"),
        ("import types\ntypes.FunctionType", "build functions, classes and modules"),
        ("import contextlib\ncontextlib.chdir", "working directory"),
        ("import traceback\ntraceback.walk_tb", "frame objects"),
    ],
)
def test_left_out_names_say_why(sandbox_run: Callable, code: str, reason: str) -> None:
    with pytest.raises(AttributeError, match=reason):
        sandbox_run(code)


def test_memory_files_cannot_seek_past_the_size_limit(sandbox_run: Callable) -> None:
    for kind in ("StringIO", "BytesIO"):
        with pytest.raises(ArithmeticLimitExceeded):
            sandbox_run(f"import io\nb = io.{kind}()\nb.seek(1 << 20)", SMALL)
    ran = sandbox_run("import io\nb = io.BytesIO(b'abc')\nb.seek(0, 2)\nb.tell()", SMALL)
    assert ran.value == 3


def test_pprint_indent_is_size_checked(sandbox_run: Callable) -> None:
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run("import pprint\npprint.pformat([[1]], indent=10**6)", SMALL)


def test_simple_namespace_instances_are_writable_but_not_the_class(sandbox_run: Callable) -> None:
    ran = sandbox_run("import types\nns = types.SimpleNamespace()\nns.x = 1\nns.x")
    assert ran.value == 1
    with pytest.raises(PolicyViolation):
        sandbox_run("import types\ntypes.SimpleNamespace.x = 1")


def test_traceback_of_a_tool_failure_has_snippet_frames_only(sandbox_run: Callable) -> None:
    def failing() -> None:
        raise ValueError("inside the host")

    code = "import sys, traceback\ntry:\n    failing()\nexcept ValueError as e:\n"
    code += (
        "    out = traceback.format_exception(e)\n    tb = traceback.format_tb(sys.exc_info()[2])\n"
    )
    code += "(out, tb)"
    ran = sandbox_run(code, tools={"failing": failing})
    text, tb = ran.value
    assert text == [
        "Traceback (most recent call last):\n",
        '  File "<snippet>", line 3, in <module>\n',
        "ValueError: inside the host\n",
    ]
    assert tb == ['  File "<snippet>", line 3, in <module>\n']

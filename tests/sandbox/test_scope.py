"""``dir()`` without an argument lists what CPython's lists: no sandbox internals.

Each snippet prints ``dir()`` in some scope; the same snippet under plain ``exec`` (with
the same ``__name__`` and the same tool bound) prints the expected lines. Before, the
module scope listed ``_alive_`` and ``_ptc_sandbox_``, an ``except*`` handler's
function ``_exc_star_``, and ``dir()`` of a snippet class or instance ``_ptc_owned_``.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from typing import Any

import pytest

import ptcbox
from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._scope import snippet_dir, visible_name


def search(q: str) -> str:
    """Search for q."""
    return "r:" + q


SNIPPETS = {
    "module": "x = 1\nimport json\nprint(dir())",
    "function": "def f(a):\n    b = 2\n    return dir()\nprint(f(1))",
    "except_star": (
        "def f():\n    try:\n        raise ValueError(1)\n    except* ValueError as eg:\n"
        "        n = len(eg.exceptions)\n    return dir()\nprint(f())"
    ),
    "class_body": "class C:\n    y = 2\n    print(dir())",
    "comprehension": "print([dir() for i in range(1)])",
    "nested": (
        "def outer():\n    k = 1\n    def inner():\n        return k, dir()\n"
        "    return inner()\nprint(outer())"
    ),
    "after_del": "x = 1\ny = 2\ndel x\nprint(dir())",
    "trailing_value": "z = 3\ndir()",
    "with_argument": (
        "class P:\n    a = 1\n    def m(self): pass\nprint(dir(P()), dir(P), dir([]) == dir(list))"
    ),
}


def _plain(code: str) -> tuple[str, Any]:
    namespace: dict[str, Any] = {"__name__": "__main__", "search": search}
    lines = code.splitlines()
    trailing = None
    if lines and lines[-1] == "dir()":  # the REPL-like trailing value
        code = "\n".join(lines[:-1])
        trailing = True
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "<plain>", "exec"), namespace)
    value = sorted(namespace) if trailing else None
    return out.getvalue(), value


@pytest.mark.parametrize("runtime", ["thread", "subprocess"])
@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_dir_without_arguments_matches_plain_cpython(runtime: str, name: str) -> None:
    code = SNIPPETS[name]
    expected_out, expected_value = _plain(code)
    result = ptcbox.execute(code, tools=[search], runtime=runtime)
    assert result.ok, result.error
    assert result.stdout == expected_out
    assert result.value == expected_value
    assert "_alive_" not in result.stdout + str(result.value)


def test_sandbox_names_are_hidden_and_dunders_kept() -> None:
    assert not visible_name("_alive_") and not visible_name("_ptc_sandbox_")
    assert not visible_name("_exc_star_") and not visible_name("_")
    assert visible_name("__builtins__") and visible_name("__name__") and visible_name(".0")
    assert visible_name("x") and not visible_name("___")  # neither dunder nor a snippet's


def test_dir_keeps_cpython_errors_and_argument_form() -> None:
    with pytest.raises(TypeError, match="dir expected at most 1 argument, got 2"):
        snippet_dir(1, 2)
    assert snippet_dir(str) == dir(str)

    def scope(a: int, b: int) -> list[str]:
        return snippet_dir()

    with pytest.raises(PolicyViolation, match=r"dir\(\) can be called only from the snippet"):
        scope(1, 2)  # host code: its frame is not the snippet's


GLOBALS_IDIOMS = """\
def handler_a():
    return "a"
config = {"k": 1}
print("config" in globals(), "missing" in globals(), globals().get("missing", "-"))
print(globals()["handler_a"](), globals().get("config"), globals()["__name__"])
print([n for n in globals() if n.startswith("handler_")])
print(sorted(k for k in globals() if not k.startswith("__")))
"""


@pytest.mark.parametrize("runtime", ["thread", "subprocess"])
def test_globals_idioms_match_plain_cpython(runtime: str) -> None:
    """What models do with ``globals()``: look their own names up, dispatch by name."""
    expected, _ = _plain(GLOBALS_IDIOMS)
    result = ptcbox.execute(GLOBALS_IDIOMS, tools=[search], runtime=runtime)
    assert result.ok, result.error
    assert result.stdout == expected


@pytest.mark.parametrize("runtime", ["thread", "subprocess"])
def test_globals_has_no_builtins_and_says_why(runtime: str) -> None:
    """The sandbox's builtins dict holds the guards: never handed out, not even filtered.
    Control: plain CPython's ``globals()`` has it (what the note explains)."""
    plain, _ = _plain("print('__builtins__' in globals())")
    assert plain == "True\n"
    code = "print('__builtins__' in globals(), globals().get('__builtins__'))\n" + (
        "globals()['__builtins__']"
    )
    result = ptcbox.execute(code, runtime=runtime)
    assert result.stdout == "False None\n"
    assert result.error_type == "KeyError"
    assert result.error is not None and 'File "<snippet>", line 2' in result.error
    assert result.error.rstrip().endswith(
        "KeyError: '__builtins__'\nthe sandbox does not expose its builtins namespace "
        "(CPython's globals() has it): call builtins by name (len, print, getattr ...); "
        "'import builtins' is not allowed"
    )

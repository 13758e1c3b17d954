"""The pre-flight check of tool calls (``runtimes/_shared/_preflight.py``), both runtimes.

A direct call that cannot bind fails the execution before any tool runs, when another
tool could have run first; everything else runs exactly as CPython runs it.
"""

from __future__ import annotations

from typing import Any

import pytest

from ptcbox import DirectProjection

pytestmark = pytest.mark.anyio


def make_tools(sent: list[str]) -> dict[str, DirectProjection]:
    def send_email(to: str, subject: str, body: str = "") -> str:
        """Sends an email (a side effect the check must prevent)."""
        sent.append(to)
        return "sent"

    def get_weather(city: str, unit: str = "C") -> dict[str, Any]:
        """Weather in a city."""
        return {"city": city, "temp": 3.5}

    return {f.__name__: DirectProjection(f.__name__, f) for f in (send_email, get_weather)}


async def test_a_bad_call_fails_before_any_tool_runs(runtime: Any) -> None:
    sent: list[str] = []
    code = (
        'print("start")\n'
        'send_email(to="ops@example.com", subject="hi")\n'
        "def report():\n"
        '    return get_weather(town="Oslo")\n'
        "report()\n"
    )
    result = await runtime.execute(code, make_tools(sent))
    assert sent == [] and result.tool_calls == () and result.stdout == ""
    assert result.error_type == "TypeError"
    assert result.error is not None
    assert 'File "<snippet>", line 4, in report' in result.error
    assert "TypeError: get_weather() got an unexpected keyword argument 'town'" in result.error
    assert "tool signature: get_weather(city: str, unit: str = 'C')" in result.error
    assert result.error.endswith(
        "(found by a check of the code: no tool was called and nothing it did was kept)"
    )


@pytest.mark.parametrize(
    "code",
    [
        # the only tool reference: CPython's own failure, output kept
        'print("start")\nget_weather(town="Oslo")\n',
        # guarded: the snippet handles it
        'send_email(to="a@b", subject="s")\ntry:\n    get_weather(town="x")\n'
        "except TypeError as e:\n    print(e)\n",
        'send_email(to="a@b", subject="s")\ntry:\n    get_weather()\nexcept Exception:\n'
        '    print("handled")\n',
        # a function, and a try somewhere that may call it
        'def w():\n    return get_weather(town="x")\nsend_email(to="a@b", subject="s")\n'
        "try:\n    w()\nexcept TypeError:\n    print('handled')\n",
        # the tool name rebound in the snippet: not the tool any more
        "def get_weather(**kw):\n    return kw\nsend_email(to='a@b', subject='s')\n"
        "print(get_weather(town='x'))\n",
        # splats and aliases are not seen
        "kw = {'town': 'x'}\nsend_email(to='a@b', subject='s')\ntry:\n"
        "    get_weather(**kw)\nexcept TypeError as e:\n    print(e)\n",
    ],
)
async def test_what_the_check_leaves_to_run_time(runtime: Any, code: str) -> None:
    sent: list[str] = []
    result = await runtime.execute(code, make_tools(sent))
    assert "found by a check of the code" not in (result.error or "")
    assert result.stdout or result.error_type == "TypeError"


async def test_the_only_bad_call_fails_as_in_cpython(runtime: Any) -> None:
    result = await runtime.execute('print("start")\nget_weather(town="Oslo")\n', make_tools([]))
    assert result.stdout == "start\n" and result.error_type == "TypeError"
    assert result.error is not None and "found by a check of the code" not in result.error


async def test_an_unknown_name_lists_the_closest_tools(runtime: Any) -> None:
    sent: list[str] = []
    code = 'send_email(to="a@b", subject="s")\nw = get_wether("Oslo")\n'
    result = await runtime.execute(code, make_tools(sent))
    assert sent == [] and result.error_type == "NameError"
    assert result.error is not None
    assert "NameError: name 'get_wether' is not defined" in result.error
    assert "no tool is named 'get_wether'; did you mean: get_weather?" in result.error
    # known names are not unknown: extra globals, builtins, imports, own definitions
    fine = (
        "import math\nfrom json import dumps\ndef helper():\n    return 1\n"
        "send_email(to='a@b', subject='s')\n"
        "print(helper(), len([1]), math.floor(2.5), dumps(1), given)\n"
        "given()\n"  # an extra global (here not callable): left to run time
    )
    ok = await runtime.execute(fine, make_tools(sent), extra_globals={"given": 5})
    assert ok.stdout == "1 1 2 1 5\n" and ok.error_type == "TypeError"
    assert ok.error is not None and "found by a check of the code" not in ok.error


async def test_a_caught_name_error_keeps_cpythons_words(runtime: Any) -> None:
    code = (
        "send_email(to='a@b', subject='s')\n"
        "try:\n    get_forecast('Oslo')\nexcept NameError as e:\n    print(e)\n"
    )
    result = await runtime.execute(code, make_tools([]))
    assert result.ok, result.error
    assert result.stdout == "name 'get_forecast' is not defined\n"


async def test_a_thread_session_knows_its_earlier_names(make_runtime: Any) -> None:
    runtime = make_runtime()
    async with runtime.session() as session:
        first = await session.execute("def helper():\n    return 2\n", make_tools([]))
        assert first.ok, first.error
        second = await session.execute(
            "send_email(to='a@b', subject='s')\nprint(helper())\n", make_tools([])
        )
        assert second.ok, second.error
        assert second.stdout == "2\n"

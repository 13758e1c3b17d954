"""Error text for the model: snippet tracebacks, timeout text and the snippet's location."""

from __future__ import annotations

import threading
import time
from typing import Any

from ptcbox.runtimes._shared._error_text import (
    SNIPPET_FILENAME,
    describe_exception,
    error_type_name,
    format_snippet_error,
    snippet_location,
    timeout_error_text,
)


def _raise_from_snippet(source: str, namespace: dict[str, Any] | None = None) -> BaseException:
    try:
        exec(compile(source, SNIPPET_FILENAME, "exec"), namespace or {})
    except BaseException as exc:
        return exc
    raise AssertionError("the snippet did not raise")


def host_helper() -> None:
    raise KeyError("from the host")


def test_traceback_keeps_snippet_frames_and_drops_host_frames() -> None:
    source = "def f():\n    helper()\nf()"
    exc = _raise_from_snippet(source, {"helper": host_helper})
    text, cut = format_snippet_error(exc, source, 10_000)
    assert not cut
    assert text == (
        "Traceback (most recent call last):\n"
        '  File "<snippet>", line 3, in <module>\n'
        "    f()\n"
        '  File "<snippet>", line 2, in f\n'
        "    helper()\n"
        "KeyError: 'from the host'"
    )
    assert __file__ not in text


def test_exception_chain_is_shown_root_cause_first() -> None:
    source = "try:\n    1 / 0\nexcept ZeroDivisionError:\n    raise ValueError('bad')"
    text, _ = format_snippet_error(_raise_from_snippet(source), source, 10_000)
    assert text.index("ZeroDivisionError") < text.index("During handling") < text.index("bad")


def test_repeated_frames_are_folded() -> None:
    source = "def f(n):\n    return f(n + 1)\nf(0)"
    text, _ = format_snippet_error(_raise_from_snippet(source), source, 1_000_000)
    assert "[Previous line repeated" in text
    assert text.count("in f") == 3


def test_syntax_error_is_formatted_like_python() -> None:
    source = "x = (1,\n"
    try:
        compile(source, SNIPPET_FILENAME, "exec")
    except SyntaxError as exc:
        text, _ = format_snippet_error(exc, source, 10_000)
    assert text.startswith('  File "<snippet>", line 1')
    assert "SyntaxError" in text


def test_huge_messages_are_cut_head_and_tail() -> None:
    exc = ValueError("a" * 10_000_000 + "END")
    text, cut = format_snippet_error(exc, "", 1000)
    assert cut
    assert len(text.encode()) <= 1000 + 40
    assert text.startswith("ValueError: aaa") and text.endswith("END")


def test_unprintable_exception() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert describe_exception(Broken()) == "Broken: <the exception's message could not be read>"
    assert describe_exception(KeyError()) == "KeyError"
    assert error_type_name(SystemExit(3)) == "SystemExit"


def test_exception_groups_list_their_members() -> None:
    group = ExceptionGroup("several", [ValueError("one"), TypeError("two")])
    text, _ = format_snippet_error(group, "", 10_000)
    assert "ValueError: one" in text and "TypeError: two" in text


def test_timeout_text_and_location() -> None:
    assert timeout_error_text(1) == "TimeoutError: the code did not finish within 1 second"
    assert timeout_error_text(2.5, "line 3: x") == (
        "TimeoutError: the code did not finish within 2.5 seconds (it was running line 3: x)"
    )
    assert timeout_error_text(1, "line 2: y", paused=2.04) == (
        "TimeoutError: the code did not finish within its time limit of 1 second (the 2.0 "
        "seconds it waited for tool-call approvals were not counted: 3.0 seconds passed in "
        "all) (it was running line 2: y)"
    )
    assert timeout_error_text(1, paused=0.01) == timeout_error_text(1)  # nothing to say
    stop = threading.Event()
    source = "while not stop.is_set():\n    pass"
    thread = threading.Thread(
        target=exec, args=(compile(source, SNIPPET_FILENAME, "exec"), {"stop": stop})
    )
    thread.start()
    try:
        time.sleep(0.05)
        assert thread.ident is not None
        assert snippet_location(thread.ident, source).startswith("line ")
    finally:
        stop.set()
        thread.join()
    assert snippet_location(threading.get_ident(), source) == ""

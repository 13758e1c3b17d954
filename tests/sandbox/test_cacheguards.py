"""The stdlib cache guards change nothing for the host and key snippets' entries by value."""

from __future__ import annotations

import datetime
import fnmatch
import threading
import urllib.parse
from typing import Any

from ptcbox.sandbox._cacheguards import exact, install_cache_guards
from ptcbox.sandbox._caches import snippet_thread


class S(str):
    def __hash__(self) -> int:
        return 1

    def __eq__(self, other: object) -> bool:
        return True


def test_exact_makes_builtin_values_of_subclasses() -> None:
    class I(int):  # noqa: E742
        pass

    assert type(exact(S("ab"))) is str and exact(S("ab")) == "ab"
    assert type(exact(I(3))) is int and exact(I(3)) == 3
    assert exact(True) is True
    other = object()
    assert exact(other) is other


def _in_snippet_thread(fn: Any) -> Any:
    out: list[Any] = []

    def body() -> None:
        snippet_thread(True)
        try:
            out.append(fn())
        finally:
            snippet_thread(False)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(10)
    return out[0]


def test_host_calls_keep_their_caches_and_snippet_keys_are_values() -> None:
    install_cache_guards()
    fnmatch._compile_pattern.cache_clear()  # type: ignore[attr-defined]
    assert fnmatch.fnmatch("a.py", "*.py")
    assert fnmatch._compile_pattern.cache_info().currsize == 1  # type: ignore[attr-defined]
    # a snippet thread's subclass key is looked up by its value: a hit, nothing added
    assert _in_snippet_thread(lambda: fnmatch.fnmatch("b.py", S("*.py")))
    assert fnmatch._compile_pattern.cache_info().currsize == 1  # type: ignore[attr-defined]
    assert urllib.parse.urlsplit("http://x/").netloc == "x"
    got = _in_snippet_thread(lambda: datetime.datetime.strptime("02-2024", S("%m-%Y")))
    assert got == datetime.datetime(2024, 2, 1)
    assert datetime.datetime.strptime("2024-03", "%Y-%m") == datetime.datetime(2024, 3, 1)

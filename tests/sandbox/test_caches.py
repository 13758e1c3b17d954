"""typing's subscription caches are bypassed in snippet threads (issue 12)."""
# ruff: noqa: UP006, UP045 - typing.List/Optional are what the test is about

from __future__ import annotations

import threading
import typing

from ptcbox.sandbox._caches import install_typing_bypass, snippet_thread


def test_every_typing_cache_is_wrapped() -> None:
    assert install_typing_bypass() == 0
    assert install_typing_bypass() == 0  # idempotent
    holders = [clear.__self__ for clear in typing._cleanups]  # type: ignore[attr-defined]
    assert holders  # typing still has its caches to wrap


def test_a_snippet_thread_neither_reads_nor_fills_the_caches() -> None:
    install_typing_bypass()
    host = typing.List[bytearray]
    assert typing.List[bytearray] is host  # cached for the host
    seen: list[object] = []

    def snippet() -> None:
        snippet_thread(True)
        try:
            seen.append(typing.List[bytearray])
            seen.append(typing.Optional[memoryview])
        finally:
            snippet_thread(False)

    thread = threading.Thread(target=snippet)
    thread.start()
    thread.join()
    assert seen[0] == host and seen[0] is not host  # a fresh, equal alias
    assert typing.Optional[memoryview] is not seen[1]  # the snippet's was not cached
    assert typing.Optional[memoryview] is typing.Optional[memoryview]

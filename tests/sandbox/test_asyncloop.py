"""sandbox/_asyncloop.py: the running-loop view."""

from __future__ import annotations

import asyncio

import pytest

from ptcbox.sandbox._asyncloop import LOOP_METHODS, get_running_loop


def test_the_view_answers_the_harmless_methods_only() -> None:
    async def main() -> tuple[bool, bool, int]:
        loop = get_running_loop()
        task = loop.create_task(asyncio.sleep(0, result=7))
        assert abs(loop.time() - asyncio.get_running_loop().time()) < 60
        with pytest.raises(AttributeError, match=r"loop\.run_in_executor is not available"):
            loop.run_in_executor  # noqa: B018
        with pytest.raises(AttributeError, match="read-only"):
            loop.time = None  # type: ignore[method-assign]
        return loop.is_running(), loop.is_closed(), await task

    assert asyncio.run(main()) == (True, False, 7)
    assert LOOP_METHODS == ("time", "is_running", "is_closed", "create_task")


def test_without_a_running_loop_it_raises_like_asyncio() -> None:
    with pytest.raises(RuntimeError, match="no running event loop"):
        get_running_loop()

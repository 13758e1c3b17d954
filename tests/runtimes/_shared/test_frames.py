"""``thread_frame`` never deadlocks where ``sys._current_frames`` does (CPython < 3.13)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from ptcbox.runtimes._shared._frames import thread_frame

# A collection that frees a threading.local while sys._current_frames() builds the
# frame objects of the other threads: the second acquisition of the thread-list lock
# hangs the process (gh-106883).
CHILD = textwrap.dedent(
    """
    import gc, sys, threading
    from ptcbox.runtimes._shared._frames import thread_frame
    plain = sys.argv[1] == "plain"
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    class Holder:
        __slots__ = ("local", "me")
    for _ in range(2000):
        holder = Holder()
        holder.local = threading.local()
        holder.me = holder  # garbage only the collector frees
        del holder
        gc.set_threshold(1)  # the next allocation collects
        if plain:
            sys._current_frames()
        else:
            assert thread_frame(other.ident) is not None
    stop.set()
    other.join()
    print("done", gc.isenabled())
    """
)


def _run(mode: str) -> str:
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, mode],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "hung"
    return done.stdout.strip() or done.stderr[-2000:]


def test_thread_frame_returns_where_sys_current_frames_deadlocks() -> None:
    if sys.version_info < (3, 13):  # the positive control: fixed in CPython 3.13
        assert _run("plain") == "hung"
    assert _run("paused") == "done True"  # and the collector is on again


def test_thread_frame_finds_a_live_thread_and_none_for_an_ended_one() -> None:
    started, stop = threading.Event(), threading.Event()

    def wait() -> None:
        started.set()
        stop.wait()

    thread = threading.Thread(target=wait)
    thread.start()
    started.wait()
    frame = thread_frame(thread.ident or 0)
    assert frame is not None
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    assert "wait" in names
    stop.set()
    thread.join()
    assert thread_frame(thread.ident or 0) is None


@pytest.mark.parametrize("enabled", [True, False])
def test_thread_frame_leaves_the_collector_as_it_found_it(enabled: bool) -> None:
    import gc

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        thread_frame(threading.get_ident())
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()

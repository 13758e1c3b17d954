"""The opt-in execution timestamps (worker/_timing.py): off unless asked, untrusted input
checked. ``tests/benchmarks/test_bench_fresh_breakdown.py`` runs them end to end."""

from __future__ import annotations

import asyncio
import os

from ptcbox.runtimes import SubprocessRuntime
from ptcbox.runtimes.subprocess.worker import _timing


def test_off_unless_the_environment_asked_for_it_at_import() -> None:
    assert os.environ.get(_timing.ENV_VAR) != "1"
    assert _timing.ON is False

    async def run() -> str:
        async with SubprocessRuntime() as runtime:
            return (await runtime.execute("print(1)", {})).stdout

    assert asyncio.run(run()) == "1\n"
    assert _timing.HOST == {}  # nothing recorded, nothing kept


def test_marks_from_another_process_are_checked_before_use() -> None:
    good = [["fork", 10, 3], ["child", 20, 4]]
    assert _timing.clean(good, "w.") == [
        ("w.fork", 10), ("w.fork#cpu", 3), ("w.child", 20), ("w.child#cpu", 4)
    ]  # fmt: skip
    assert _timing.clean([["fork", 10, 3, 7]], "t.") == [
        ("t.fork", 10), ("t.fork#cpu", 3), ("t.fork#flt", 7)
    ]  # fmt: skip
    bad = [["x", 1], ["y", "2", 3], [3, 1, 1], ["z" * 41, 1, 1], ["b", True, 1], "s", None]
    bad += [["f", 1, 1, 1.5], ["g", 1, 1, 1, 1]]
    assert _timing.clean(bad, "w.") == []
    assert _timing.clean({"not": "a list"}, "w.") == []
    assert len(_timing.clean([["s", 1, 1]] * 10_000, "w.")) == 2 * 64  # bounded


def test_a_report_without_a_pid_records_nothing() -> None:
    _timing.note_report({"t": "exit", "pid": "1", "tm": [["reaped", 1, 1]]})
    _timing.note_report({"t": "other", "pid": 5, "tm": [["reaped", 1, 1]]})
    assert _timing.HOST == {}

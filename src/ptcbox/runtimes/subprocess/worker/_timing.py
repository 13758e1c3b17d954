"""Opt-in timestamps of one SubprocessRuntime execution, on every side (a benchmark aid).

``PTCBOX_TIMING=1`` in the host's environment, before ptcbox is imported, turns it on
(``benchmarks/fresh_breakdown.py`` does; never needed otherwise). The variable is read
once, at import, into :data:`ON`; every mark site is ``if timing.ON: timing.mark(...)``,
so unset it costs one constant test per site and records nothing. The host passes the
variable to its template and workers through their configured environment, as the
ablation switches are passed (see ``SubprocessRuntime``).

Each process keeps its own marks, ``(step, CLOCK_MONOTONIC ns, its own CPU ns, its minor
page faults)`` (one monotonic clock for every process of the machine; the CPU time tells
a step's own cost from the time the process waited for a CPU on a loaded machine; the
faults count the copy-on-write copies of pages shared with the template since the fork,
the main cost of a forked worker):

- a worker marks its set-up steps after the fork, its wait and its run, and sends them
  with ``done`` as ``"tm"``;
- the template marks each fork in its ``worker`` message and each reap in ``exit``;
- the host marks the execution's own steps (request, hand-out, send, result, release,
  exit report, refill) in :data:`HOST` under the worker's pid.

What a worker sends is data from an untrusted process: the host keeps it only while the
instrument is on, checks its shape (:func:`clean`) and uses it for nothing but the
breakdown table.
"""

from __future__ import annotations

import os
import resource
import time
from typing import Any, Final

__all__ = ["ENV_VAR", "HOST", "ON", "clean", "mark", "note", "note_report", "take"]

ENV_VAR: Final = "PTCBOX_TIMING"
ON: Final[bool] = os.environ.get(ENV_VAR) == "1"
"""Whether this process records marks (fixed at import)."""

_MAX_MARKS = 64
_marks: list[tuple[str, int, int, int]] = []

HOST: dict[int, dict[str, int]] = {}
"""The host's marks by worker pid (steps of the template and the worker merged in)."""


def mark(step: str) -> None:
    """Record ``step`` at this instant (call only under ``if ON``)."""
    if len(_marks) < _MAX_MARKS:
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        _marks.append((step, time.monotonic_ns(), time.process_time_ns(), faults))


def take() -> list[list[Any]]:
    """This process's marks so far, as JSON data; the list is emptied."""
    out = [list(item) for item in _marks]
    _marks.clear()
    return out


def note(pid: int, step: str, ns: int | None = None) -> None:
    """Record a host-side ``step`` of worker ``pid`` (now, or at ``ns``); the last one wins
    (a worker's rehearsal marks its run's steps too, before the real run does)."""
    HOST.setdefault(pid, {})[step] = time.monotonic_ns() if ns is None else ns


def clean(marks: Any, prefix: str) -> list[tuple[str, int]]:
    """The well-formed ``[step, ns, cpu_ns]`` or ``[step, ns, cpu_ns, faults]`` marks (from
    another process) as prefixed ``(step, ns)``, ``(step + "#cpu", cpu_ns)`` and
    ``(step + "#flt", faults)`` pairs."""
    out: list[tuple[str, int]] = []
    if isinstance(marks, list):
        for item in marks[:_MAX_MARKS]:
            if (
                isinstance(item, list)
                and len(item) in (3, 4)
                and isinstance(item[0], str)
                and len(item[0]) <= 40
                and all(type(number) is int for number in item[1:])
            ):
                out += [(prefix + item[0], item[1]), (f"{prefix}{item[0]}#cpu", item[2])]
                if len(item) == 4:
                    out.append((f"{prefix}{item[0]}#flt", item[3]))
    return out


def note_report(message: dict[str, Any]) -> None:
    """Record the template's ``worker`` or ``exit`` report (host side), with its marks."""
    pid, kind = message.get("pid"), message.get("t")
    if type(pid) is int and kind in ("worker", "exit"):
        for step, ns in clean(message.get("tm"), "t."):
            note(pid, step, ns)
        note(pid, "worker_recv" if kind == "worker" else "exit_report")
        cpu = message.get("cpu")
        if type(cpu) is float:
            note(pid, "=cpu", int(cpu * 1e9))  # not a time: the worker's CPU, ns

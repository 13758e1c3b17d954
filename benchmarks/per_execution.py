"""Where one execution's time goes once a worker (or thread) is ready (issue 16).

Timestamps on both sides of one execution, in microseconds, median over many runs:
the host's steps (preparing the ``run`` frame, the hand-over, reading ``done``, building
the :class:`~ptcbox.CodeResult`, giving the worker back) and, for SubprocessRuntime, the
worker's (decoding, stubs and globals, re-arming the CPU limit, compile, ``exec``, tool
calls, and in reuse mode the reset: the collection loop, memory check, working
directory and environment, the next run's globals). Host and worker read the same
clock (``CLOCK_MONOTONIC``), so the gaps between them (the wake-ups) are measured too.

The worker side is measured by wrapping worker functions in the template process
before it forks (the bootstrap of the template is patched to import this module); the
wrapped worker attaches its timestamps to its ``done`` message. Nothing of this is
installed outside this script. Wrapping costs about a microsecond per wrapped call.

Cases: ``print(1)`` and the 10-tool-call loop (sources repeat, back to back: the
throughput benchmark's cells with 1 in flight) and the 13-line / 9-call snippet with a
new source each time, paced 20 ms (the latency benchmark's row).

Run::

    PYTHONPATH=$PWD/src python benchmarks/per_execution.py                 # all
    PYTHONPATH=$PWD/src python benchmarks/per_execution.py --only reuse -n 300
    PYTHONPATH=$PWD/src python benchmarks/per_execution.py --only thread --json
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import inspect
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

_ns = time.perf_counter_ns
EVENTS: list[tuple[str, int, int]] = []


def _wrap(owner: Any, attr: str, label: str) -> None:
    """Replace ``owner.attr`` with a wrapper that records ``(label, start, end)``
    (nothing when it has no such attribute: an older tree, for a before/after run)."""
    inner = getattr(owner, attr, None)
    if inner is None:
        return
    record = EVENTS.append

    if inspect.iscoroutinefunction(inner):

        @functools.wraps(inner)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            start = _ns()
            try:
                return await inner(*args, **kwargs)
            finally:
                record((label, start, _ns()))

        setattr(owner, attr, timed_async)
        return

    @functools.wraps(inner)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = _ns()
        try:
            return inner(*args, **kwargs)
        finally:
            record((label, start, _ns()))

    setattr(owner, attr, timed)


# -- the worker's side (installed in the template process, before it forks) ------------


def install_worker_probe() -> None:
    """Wrap the worker's per-execution steps; ``done`` carries their timestamps."""
    from ptcbox.runtimes.subprocess.worker import _io, _main, _reuse

    for owner, attr, label in (
        (_io, "parse_message", "w.decode"),
        (_main, "_run", "w.run"),
        (_main, "apply_run_limits", "w.rlimit"),
        (_main, "add_globals", "w.add_globals"),
        (_io.WorkerChannel, "make_stub", "w.stub"),
        (_main, "decode_compiled_cached", "w.decode_compiled"),
        (_main, "decode_compiled", "w.decode_compiled"),
        (_main, "compile_snippet", "w.compile"),
        (_main, "capped_value", "w.value"),
        (_io.WorkerChannel, "call_tool", "w.tool_call"),
        (_reuse, "_collect", "w.collect"),
        (_reuse, "_memory_bytes", "w.memory"),
        (_reuse.Reuse, "_reset", "w.reset"),  # before done (older trees)
        (_reuse.Reuse, "reset", "w.reset"),  # after done: counted with the next execution
        (_main, "_build", "w.build_globals"),
        (_main, "_orjson_safe", "w.orjson_safe"),
        (_reuse.os, "chdir", "w.reset.chdir"),
        (_reuse.os, "scandir", "w.reset.scandir"),
        (_reuse, "_environ_data", "w.reset.environ"),
    ):
        _wrap(owner, attr, label)
    send = _io.WorkerChannel.send

    def timed_send(self: Any, message: dict[str, Any], **kwargs: Any) -> None:
        if message.get("t") == "done":
            now = _ns()
            EVENTS.append(("w.send_done", now, now))
            message["_ev"] = [list(e) for e in EVENTS]
            EVENTS.clear()
        send(self, message, **kwargs)

    _io.WorkerChannel.send = timed_send  # type: ignore[method-assign]


def _patch_bootstrap() -> None:
    """Make the runtime's template import this module and install the probe first."""
    from ptcbox.runtimes.subprocess import _launch

    here = os.path.dirname(os.path.abspath(__file__))
    _launch._BOOTSTRAP = (  # type: ignore[attr-defined]
        f"import sys; sys.path[:0] = [sys.argv[1], {here!r}]; "
        "import per_execution; per_execution.install_worker_probe(); "
        "from ptcbox.runtimes.subprocess.worker._template import main; main(sys.argv[2:])"
    )


# -- the host's side ---------------------------------------------------------------------

_DONE: list[dict[str, Any]] = []


def install_host_probe() -> None:
    """Wrap the host's per-execution steps of both runtimes (in this process)."""
    from ptcbox.runtimes.subprocess import _execution, _pool, _recycle, _runtime
    from ptcbox.runtimes.thread import _job, _tools
    from ptcbox.runtimes.thread import _runtime as thread_runtime

    check_done = _execution.check_done

    def timed_check_done(message: dict[str, Any], *args: Any) -> None:
        now = _ns()
        EVENTS.append(("h.done_read", now, now))
        _DONE.append(message)
        check_done(message, *args)

    _execution.check_done = timed_check_done
    for owner, attr, label in (
        (_runtime.SubprocessRuntime, "execute", "h.total"),
        (_runtime.SubprocessRuntime, "_prepare", "h.prepare"),
        (_runtime.SubprocessRuntime, "_run", "h.run"),
        (_execution.HostExecution, "__init__", "h.execution_init"),
        (_execution.HostExecution, "run", "h.exec_run"),
        (_execution.HostExecution, "_on_readable", "h.on_readable"),
        (_execution.HostExecution, "_serve", "h.channel_thread"),
        (_execution.HostExecution, "_run_inline", "h.tool_inline"),
        (_runtime, "build_result", "h.build_result"),
        (_pool.WorkerPool, "take_idle_now", "h.take_idle_now"),
        (_execution.HostExecution, "_serve_from_thread", "h.serve_from_thread"),
        (_runtime.ScopedExecutor, "__init__", "h.scoped_executor"),
        (_recycle.Recycler, "give_back", "h.give_back"),
        # ThreadRuntime
        (thread_runtime.ThreadRuntime, "execute", "t.total"),
        (thread_runtime, "preflight", "t.preflight"),
        (thread_runtime, "submit", "t.submit"),
        (thread_runtime.ThreadRuntime, "_result", "t.result"),
        (thread_runtime, "_resolve", "t.resolve"),
        (_job.Job, "_body", "t.body"),
        (_job, "compile_snippet", "t.compile"),
        (_job.Job, "_globals", "t.globals"),
        (_job, "capped_value", "t.value"),
        (_tools.Run, "call", "t.tool_call"),
    ):
        _wrap(owner, attr, label)


# -- cases -------------------------------------------------------------------------------

TRIVIAL = "print(1)\n"
TOOLS10 = "for i in range(10):\n    ping(i=i)\n"


def _cases() -> list[tuple[str, Callable[[int], str], float]]:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from throughput import REALISTIC

    return [
        ("print(1) repeated, back to back", lambda k: TRIVIAL, 0.0),
        ("10 tool calls repeated, back to back", lambda k: TOOLS10, 0.0),
        (
            "13 lines / 9 calls, new source, paced 20 ms",
            lambda k: REALISTIC.format(n=k, n1=k + 1, n2=k + 2),
            0.02,
        ),
        ("print(k) new source, paced 20 ms", lambda k: f"print({k})\n", 0.02),
    ]


def _sum(events: list[tuple[str, int, int]], label: str) -> float | None:
    spans = [end - start for name, start, end in events if name == label]
    return sum(spans) / 1e3 if spans else None


def _first(events: list[tuple[str, int, int]], label: str) -> tuple[int, int] | None:
    for name, start, end in events:
        if name == label:
            return start, end
    return None


def _last(events: list[tuple[str, int, int]], label: str) -> tuple[int, int] | None:
    found = None
    for name, start, end in events:
        if name == label:
            found = (start, end)
    return found


def _subprocess_steps(host: list[tuple[str, int, int]], worker: list[Any]) -> dict[str, float]:
    w = [(str(n), int(s), int(e)) for n, s, e in worker]
    steps: dict[str, float] = {}
    for label in (
        "h.prepare",
        "h.take_idle_now",
        "h.scoped_executor",
        "h.serve_from_thread",
        "h.execution_init",
        "h.build_result",
        "h.give_back",
        "h.tool_inline",
    ):
        value = _sum(host, label)
        if value is not None:
            steps[label] = value
    for label in (
        "w.decode",
        "w.rlimit",
        "w.stub",
        "w.add_globals",
        "w.decode_compiled",
        "w.compile",
        "w.value",
        "w.tool_call",
        "w.collect",
        "w.memory",
        "w.reset",
        "w.reset.chdir",
        "w.reset.scandir",
        "w.reset.environ",
        "w.build_globals",
        "w.orjson_safe",
    ):
        value = _sum(w, label)
        if value is not None:
            steps[label] = value
    total = _first(host, "h.total")
    run = _first(host, "h.exec_run")
    wrun = _first(w, "w.run")
    sent = _first(w, "w.send_done")
    done = _first(host, "h.done_read")
    decode = _first(w, "w.decode")
    if total and run:
        steps["h.before_send (execute -> run frame sent)"] = (run[0] - total[0]) / 1e3
    if run and decode:
        steps["gap: run frame sent -> worker decodes it"] = (decode[0] - run[0]) / 1e3
    if wrun:
        inner = sum(
            steps.get(k, 0.0)
            for k in ("w.rlimit", "w.stub", "w.add_globals", "w.decode_compiled", "w.compile")
        )
        exec_s = (wrun[1] - wrun[0]) / 1e3 - inner - steps.get("w.value", 0.0)
        steps["w.exec (without tool calls)"] = exec_s - steps.get("w.tool_call", 0.0)
        if sent:
            steps["w.after_run -> done sent (reset etc.)"] = (sent[0] - wrun[1]) / 1e3
    if decode and sent:
        steps["worker: decode start -> done sent"] = (sent[0] - decode[0]) / 1e3
    if sent and done:
        steps["gap: done sent -> host decoded it"] = (done[0] - sent[0]) / 1e3
    if done and total:
        steps["h.after_done (done decoded -> result returned)"] = (total[1] - done[0]) / 1e3
    if total:
        steps["TOTAL execute()"] = (total[1] - total[0]) / 1e3
    return steps


def _thread_steps(host: list[tuple[str, int, int]]) -> dict[str, float]:
    steps: dict[str, float] = {}
    for label in ("t.preflight", "t.compile", "t.globals", "t.value", "t.tool_call", "t.result"):
        value = _sum(host, label)
        if value is not None:
            steps[label] = value
    total = _first(host, "t.total")
    submit = _first(host, "t.submit")
    body = _first(host, "t.body")
    resolve = _last(host, "t.resolve")
    if total and submit:
        steps["t.before_submit"] = (submit[0] - total[0]) / 1e3
    if submit and body:
        steps["gap: submit -> snippet thread runs"] = (body[0] - submit[1]) / 1e3
    if body:
        inner = sum(steps.get(k, 0.0) for k in ("t.compile", "t.globals", "t.value"))
        steps["t.body rest (exec, finish) without tool calls"] = (
            (body[1] - body[0]) / 1e3 - inner - steps.get("t.tool_call", 0.0)
        )
    if body and resolve:
        steps["gap: thread done -> loop resolves the future"] = (resolve[0] - body[1]) / 1e3
    if resolve and total:
        steps["t.after_resolve (-> result returned)"] = (total[1] - resolve[1]) / 1e3
    if total:
        steps["TOTAL execute()"] = (total[1] - total[0]) / 1e3
    return steps


async def _measure(kind: str, n: int, warmup: int) -> dict[str, dict[str, list[float]]]:
    from ptcbox import DirectProjection
    from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from throughput import TOOLS

    namespace = {name: DirectProjection(name=name, fn=fn) for name, fn in TOOLS.items()}
    if kind == "thread":
        runtime: Any = ThreadRuntime()
    elif kind == "reuse":
        runtime = SubprocessRuntime(max_executions_per_worker=1000)
    else:
        runtime = SubprocessRuntime()
    out: dict[str, dict[str, list[float]]] = {}
    async with runtime:
        for label, source, pace in _cases():
            cells: dict[str, list[float]] = defaultdict(list)
            for k in range(warmup + n):
                if pace:
                    await asyncio.sleep(pace)
                EVENTS.clear()
                _DONE.clear()
                result = await runtime.execute(source(100_000 + k), namespace)
                if not result.ok:
                    raise RuntimeError(f"{result.error_type}: {result.error}")
                if k < warmup:
                    continue
                host = list(EVENTS)
                if kind == "thread":
                    steps = _thread_steps(host)
                else:
                    worker = _DONE[-1].get("_ev", []) if _DONE else []
                    steps = _subprocess_steps(host, worker)
                for key, value in steps.items():
                    cells[key].append(value)
            out[label] = dict(cells)
    return out


def render(kind: str, data: dict[str, dict[str, list[float]]]) -> str:
    lines = [f"## {kind}: median µs per execution (sum over an execution's calls)"]
    for label, cells in data.items():
        lines.append(f"\n### {label}")
        for key, values in cells.items():
            lines.append(f"  {key:<52} {statistics.median(values):9.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", default=[], choices=["thread", "fresh", "reuse"])
    parser.add_argument("-n", type=int, default=200, help="executions per case (200)")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    _patch_bootstrap()
    install_host_probe()
    kinds = args.only or ["thread", "fresh", "reuse"]
    results = {kind: asyncio.run(_measure(kind, args.n, args.warmup)) for kind in kinds}
    if args.json:
        print(json.dumps(results))
    else:
        for kind, data in results.items():
            print(render(kind, data))
        print(f"\nload average {os.getloadavg()[0]:.1f} (a shared 2-CPU machine: compare runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

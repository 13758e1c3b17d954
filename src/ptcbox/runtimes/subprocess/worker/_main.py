"""The SubprocessRuntime worker: set up a freshly forked process, then run snippets.

A worker is forked by the template process (:mod:`ptcbox.runtimes.subprocess.worker._template`)
and runs :func:`worker_main`, which never returns. It sets itself up and walls itself in
(:mod:`ptcbox.runtimes.subprocess.worker._setup`: session, descriptors, directory,
environment, namespaces, rlimits, Landlock, seccomp, the audit hook), then rehearses
one whole execution against a loopback socket pair (:func:`rehearse`), which takes
the copy-on-write page faults of that path before the worker is handed out, unless a
``run`` already waits (the host took the worker before it was ready, under sustained
load: the run then takes only the faults it needs), and seeds numpy's global generator
afresh (not the state every worker of the template starts with). Then it waits for a ``run``
message (its globals already built while it waited), applies the policy's memory and
CPU limits, compiles the snippet with the sandbox (``os_enforced_limits=True``: the
OS enforces what the arithmetic guards would) unless the host sent it compiled (see
:mod:`ptcbox.runtimes.subprocess._compile`), runs it, and sends ``done``. A single-use
worker exits after one run; a session worker keeps its globals and waits for the next.
"""

from __future__ import annotations

import os
import select
import socket
from collections.abc import Callable
from typing import Any, NoReturn

from ptcbox._jsonable import scrub_text
from ptcbox.errors import WireProtocolError
from ptcbox.runtimes._shared._awaitable import AwaitableToolCall
from ptcbox.runtimes._shared._error_text import (
    SNIPPET_FILENAME,
    error_type_name,
    format_snippet_error,
)
from ptcbox.runtimes._shared._exit import exit_note, exit_status
from ptcbox.runtimes._shared._name_hint import add_name_hint
from ptcbox.runtimes._shared._value import capped_value
from ptcbox.runtimes._wire import encode_message
from ptcbox.runtimes.subprocess.worker import _timing as timing
from ptcbox.runtimes.subprocess.worker._audit import AuditGate
from ptcbox.runtimes.subprocess.worker._config import (
    WorkerConfig,
    decode_compiled_cached,
    encode_compiled,
)
from ptcbox.runtimes.subprocess.worker._io import WorkerChannel, run_coroutine
from ptcbox.runtimes.subprocess.worker._reuse import EXIT_RESET_FAILED, Reuse
from ptcbox.runtimes.subprocess.worker._rlimits import apply_run_limits
from ptcbox.runtimes.subprocess.worker._setup import EXIT_SETUP_FAILED, setup_worker
from ptcbox.sandbox import VALUE_NAME, SandboxPolicy, build_globals, compile_snippet
from ptcbox.sandbox._datastate import fresh_numpy_random
from ptcbox.sandbox._globals import add_globals

__all__ = ["EXIT_SETUP_FAILED", "warm_up", "worker_main"]

_EXIT_PROTOCOL = 72
_LATE_REHEARSAL_S = 0.05
"""How long a worker forked under sustained demand (no rehearsal first) waits for its
run before it rehearses all the same (the demand has passed: it is idle)."""


def worker_main(
    sock: socket.socket,
    workdir: str,
    config: WorkerConfig,
    template_pid: int,
    close_inherited: Callable[[], None],
    *,
    rehearse_first: bool = True,
    ruleset: int = -1,
) -> NoReturn:
    """Set the process up as a worker and serve ``run`` messages; never returns.

    Args:
        sock: The worker's end of its socket to the host.
        workdir: Its private, empty working directory (the template removes it).
        config: The runtime's worker settings.
        template_pid: The parent's pid (the worker exits if it is already gone).
        close_inherited: Closes the template's own descriptors in this process.
        rehearse_first: ``False``: no rehearsal at once (the host asks so under sustained
            demand, see :mod:`~ptcbox.runtimes.subprocess._demand`); the worker still
            rehearses if no run has come within 50 ms (the demand has passed).
        ruleset: The Landlock ruleset the template made for this worker (see
            :func:`~ptcbox.runtimes.subprocess.worker._landlock.ruleset_for`), or -1.
    """
    status = EXIT_SETUP_FAILED
    try:
        channel, gate, policy, rehearsal = setup_worker(
            sock, workdir, config, template_pid, close_inherited, ruleset=ruleset
        )
        idle_first = 0.0 if rehearse_first else _LATE_REHEARSAL_S
        if select.select([sock], [], [], idle_first)[0]:  # a run waits, or came meanwhile
            for end in rehearsal:
                end.close()
        else:
            rehearse(rehearsal, gate, policy, lambda: bool(select.select([sock], [], [], 0)[0]))
        fresh_numpy_random()  # not the state every worker of the template starts with
        if timing.ON:
            timing.mark("rehearsal")
        status = 0
        reuse = Reuse(workdir, config.max_executions) if config.max_executions > 1 else None
        status = _serve(channel, gate, policy, reuse)
    finally:
        os._exit(status)


class _NullSink:
    def write(self, text: str) -> int:
        return len(text)


_WARM_UP_SNIPPET = """\
import json
import copy, csv, io, struct, zlib, difflib  # shared views, built once in the template
data = {"a": [1, 2, 3], "b": "text"}
total = 0
for key, value in data.items():
    if isinstance(value, list):
        total += sum(v * 2 for v in value)
print(f"{total} {json.dumps(data)}", sep="")
result = [x for x in range(5)]
{"total": total, "n": len(result)}
"""


def warm_up(tag: str, modes: tuple[bool, ...] = (True, False)) -> None:
    """Run a representative snippet once per mode, discarding its output.

    The template does this once, so that what snippets use is loaded and initialised
    before it forks any worker (each worker then rehearses a whole execution, see
    :func:`rehearse`). ``tag`` makes the source unique (a compile-cache miss);
    ``modes`` are the ``restricted`` values to warm.
    """
    sink = _NullSink()
    for restricted in modes:
        policy = SandboxPolicy() if restricted else SandboxPolicy.trusted()
        compiled = compile_snippet(
            _WARM_UP_SNIPPET + tag, policy, filename=SNIPPET_FILENAME, os_enforced_limits=True
        )
        namespace = build_globals(policy, tools={}, stdout=sink, stderr=sink)
        exec(compiled.code, namespace)
        value, _ = capped_value(namespace.get(VALUE_NAME), policy.max_output_bytes)
        encode_message({"t": "done", "value": value, "error": None}, stdlib=True)


_REHEARSAL_SNIPPET = """\
rows = tool("orders", limit=3)
total = sum(row["amount"] for row in rows)
print(f"{len(rows)} rows, total {total}")
{"total": total, "ids": [row["id"] for row in rows]}
"""
_WIDE_REHEARSAL_SNIPPET = """\
rows = tool("orders", limit=3)
info = tool(kind="customer", key=rows[0]["id"])
by_name = {}
for row in rows:
    name = row["name"]
    by_name[name] = by_name.get(name, 0) + row["amount"]
total = round(sum(row["amount"] for row in rows) * 1.5, 2)
names = sorted(n for n, v in by_name.items() if v > 0)
best = max(by_name, key=lambda n: by_name[n])
ids = [row["id"] for row in rows if row["id"] >= 0]
seen = {row["id"]: row for row in rows}
text = ", ".join(f"{n}={v:.1f}" for n, v in by_name.items())
count = 0
while count < 2:
    count += 1
try:
    ratio = int("3") / len(ids)
except (ValueError, ZeroDivisionError) as exc:
    ratio = 0
def helper(a, b=2, *rest, **more):
    return a * b
if total and not names or len(ids) == 3:
    print(f"{len(rows)} rows, total {total}, best {best}: {text[:40]} {info['name']}")
{"total": total, "ids": ids, "names": names, "n": helper(2), "seen": len(seen), "r": ratio}
"""
"""The second rehearsal's snippet: the constructs model-written snippets use most (tool
calls with positional and keyword arguments, loops, comprehensions and a generator, a
lambda, f-strings, dict and str methods, ``try``, a function, a trailing value), sent
as source like a new snippet, so that the transform's and the guards' paths for them
are faulted in before the first real run (a fresh worker compiled a 13-line, 9-call
snippet in ~2x the time without them)."""
_ROWS = [{"id": i, "amount": 1.5 * i, "name": f"row {i}"} for i in range(3)]
_REHEARSALS = (  # (snippet, whether the run carries it compiled, the replies to its calls)
    (_REHEARSAL_SNIPPET, True, (_ROWS,)),
    (_WIDE_REHEARSAL_SNIPPET, False, (_ROWS, {"name": "Ada", "currency": "EUR"})),
)


def rehearse(
    pair: tuple[socket.socket, socket.socket],
    gate: AuditGate,
    policy: SandboxPolicy,
    run_waits: Callable[[], bool] = lambda: False,
) -> list[dict[str, Any]]:
    """Run whole executions against a loopback socket pair, then close it.

    A freshly forked worker shares its memory with the template until it writes to it;
    the first write of each page costs a copy-on-write page fault (several microseconds
    in a virtual machine), and CPython writes to every object it uses (reference
    counts). Running the whole path of an execution here (decoding a ``run`` message,
    the tool stubs, the globals, compiling and running snippets that call tools,
    encoding output and ``done``), behind every wall and the audit hook, takes those
    faults before a worker is handed out, off the critical path. Two executions: a short
    one the host sends compiled, then a wider one the worker compiles, skipped when
    ``run_waits()`` says a real run has come meanwhile (it would wait for it). The
    replies to the tool calls are queued in the socket beforehand, so no host is
    involved; what the rehearsal sends is discarded with the socket.

    Returns:
        The ``done`` message of each rehearsal that ran (fewer when one failed: a
        worker serves all the same).
    """
    ours, peer = pair
    dones: list[dict[str, Any]] = []
    try:
        channel = WorkerChannel(ours)
        call_id = 0
        for step, (snippet, send_compiled, values) in enumerate(_REHEARSALS):
            if step and run_waits():
                break
            code = f"{snippet}# rehearsal {step} {os.getpid()}\n"
            compiled = None
            if send_compiled:  # as the host sends a repeated snippet, see subprocess._compile
                compiled = encode_compiled(
                    compile_snippet(
                        code, policy, filename=SNIPPET_FILENAME, os_enforced_limits=True
                    )
                )
            run: dict[str, Any] = {
                "t": "run",
                "code": code,
                "compiled": compiled,
                "tools": [["tool", "Look rows up."]],
                "globals": {},
                "session": False,
            }
            frames = [encode_message(run)]
            for value in values:  # call ids go on across the runs of a channel
                call_id += 1
                frames.append(encode_message({"t": "result", "id": call_id, "value": value}))
            peer.sendall(b"".join(frames))
            if step == len(_REHEARSALS) - 1:  # a call beyond the replies reads the end
                peer.shutdown(socket.SHUT_WR)
            done = _run(channel.receive(), channel, gate, _State(policy))
            channel.send(done, orjson_safe=_orjson_safe(done))
            dones.append(done)
    except Exception:  # a rehearsal never stops a worker from serving
        pass
    finally:
        ours.close()
        peer.close()
    return dones


class _State:
    __slots__ = ("globals", "injected", "policy", "prebuilt")

    def __init__(self, policy: SandboxPolicy) -> None:
        self.policy = policy
        self.globals: dict[str, Any] | None = None
        self.injected: dict[str, Any] = {}
        self.prebuilt: dict[str, Any] | None = None  # globals without tools, made while idle


def _serve(
    channel: WorkerChannel, gate: AuditGate, policy: SandboxPolicy, reuse: Reuse | None = None
) -> int:
    state = _State(policy)
    # made now, off the critical path (the worker waits for its snippet anyway)
    state.prebuilt = _build(policy, channel)
    if timing.ON:
        timing.mark("globals")
    while True:
        try:
            message = channel.receive()
            if timing.ON:
                timing.mark("run_recv")
            nonce = None
            if message["t"] == "id":  # a session's execute: its done answers with it
                nonce = message.get("n")
                message = channel.receive()
        except (EOFError, OSError):
            return 0
        except WireProtocolError:
            return _EXIT_PROTOCOL
        if message["t"] != "run":
            return _EXIT_PROTOCOL
        single = not message.get("session")
        if single and reuse is not None:  # a fresh context; reset afterwards (see _reuse)
            done = reuse.run(_run, message, channel, gate, state)
        else:
            done = _run(message, channel, gate, state)
        if isinstance(nonce, str):
            done["n"] = nonce
        if timing.ON:
            timing.mark("done_send")
            done["tm"] = timing.take()
        try:
            channel.send(done, orjson_safe=_orjson_safe(done))
        except (WireProtocolError, MemoryError) as exc:
            reason = "out of memory" if isinstance(exc, MemoryError) else str(exc)
            done["value"] = None
            done["truncated"] = True
            done["reuse"] = False
            channel.stderr.write(f"[value omitted: the result could not be sent: {reason}]\n")
            channel.send(done)
        if single and not done.get("reuse"):
            return 0
        if channel.timer_armed:  # its output went with the done: no alarm 2 ms from now
            channel.arm_timer(0)  # (idle, or in the middle of the next execution)
        if single:  # the reset and the next run's globals, while the host reads the result
            if reuse is not None and not reuse.reset():
                return EXIT_RESET_FAILED  # before reading a run sent meanwhile: see _reuse
            if timing.ON:
                timing.mark("reset")
            state.prebuilt = _build(policy, channel)
            if timing.ON:
                timing.mark("globals")


def _build(policy: SandboxPolicy, channel: WorkerChannel) -> dict[str, Any]:
    """The globals of a run: the worker process is the execution's own."""
    return build_globals(
        policy, tools={}, stdout=channel.stdout, stderr=channel.stderr, own_process=True
    )


def _orjson_safe(done: dict[str, Any]) -> bool:
    """``done`` carries no int beyond 64 bits and no lone surrogate (cheap cases only)."""
    value, error = done["value"], done["error"]
    kind = type(value)
    plain = (
        value is None
        or kind is bool
        or kind is float
        or (kind is int and -(1 << 63) <= value < 1 << 63)
        or (kind is str and value.isascii())
    )
    return plain and (error is None or error.isascii())


def _run(
    message: dict[str, Any],
    channel: WorkerChannel,
    gate: AuditGate,
    state: _State,
) -> dict[str, Any]:
    policy = state.policy
    code: str = message["code"]
    tools = {name: channel.make_stub(name, doc) for name, doc in message["tools"]}
    channel.tool_names = frozenset(tools)
    extra: dict[str, Any] = message.get("globals") or {}
    if policy.max_cpu_seconds is not None:
        with gate.permit_limits():
            apply_run_limits(
                max_memory_bytes=None, max_cpu_seconds=policy.max_cpu_seconds, baseline_bytes=0
            )
    value: Any = None
    error: str | None = None
    error_type: str | None = None
    truncated = False
    try:
        built = state.prebuilt
        state.prebuilt = None
        if built is None:
            built = _build(policy, channel)
        add_globals(built, policy, tools=tools, extra_globals=extra, plain_tools=True)
        namespace = state.globals
        if namespace is None:
            namespace = built
            if message.get("session"):
                state.globals = namespace
                state.injected = {name: built[name] for name in (*extra, *tools)}
        else:  # a session: refresh tools and extra globals, drop the ones now absent
            fresh = {name: built[name] for name in (*extra, *tools)}
            for name, injected in state.injected.items():
                if name not in fresh and namespace.get(name) is injected:
                    del namespace[name]
            namespace.update(fresh)
            namespace.pop(VALUE_NAME, None)
            state.injected = fresh
        if timing.ON:
            timing.mark("globals_ready")
        compiled = decode_compiled_cached(message.get("compiled")) or compile_snippet(
            code, policy, filename=SNIPPET_FILENAME, os_enforced_limits=True
        )
        if timing.ON:
            timing.mark("exec_start")
        try:
            if compiled.is_async:
                run_coroutine(channel, eval(compiled.code, namespace))
            else:
                exec(compiled.code, namespace)
            raw = namespace.pop(VALUE_NAME, None) if compiled.has_value else None
            if type(raw) is AwaitableToolCall:
                raw._ptc_misuse("using it as the value")
        finally:
            channel.settle(channel.stderr)  # calls started without await, see _awaitable
            if timing.ON:
                timing.mark("exec_end")
        if raw is not None:
            value, note = capped_value(raw, policy.max_output_bytes)
            del raw
            if note is not None:
                channel.stderr.write(note)
                truncated = True
    except SystemExit as exc:  # sys.exit(0) / exit() is a success, as for a script
        status, text = exit_status(exc)
        if text is not None:
            channel.stderr.write(text)
        if status != 0:
            error, truncated = format_snippet_error(exc, code, policy.max_output_bytes)
            error_type = error_type_name(exc)
            if text is None:
                error += "\n" + exit_note(status)
        del exc
    except BaseException as exc:
        add_name_hint(exc, tools)
        error, truncated = format_snippet_error(exc, code, policy.max_output_bytes)
        error_type = error_type_name(exc)
        if isinstance(exc, MemoryError) and policy.max_memory_bytes is not None:
            error_type = "MemoryLimitExceeded"
            error += (
                f"\nMemoryLimitExceeded: the code tried to use more than max_memory_bytes="
                f"{policy.max_memory_bytes:,} bytes"
            )
        del exc
    return {
        "t": "done",
        "value": value,
        "error": None if error is None else scrub_text(error),
        "error_type": error_type,
        "truncated": truncated,
    }

"""Second red-team pass: the walls, the wire and the pool as they stand after today's work.

Attacks on the rehearsal (``_worker.rehearse``), the idle-worker check through an open
``/proc/<pid>/stat``, ``recv_soon``, ``release`` on the loop's next iteration, hostile
frames from a trusted snippet, and classic escapes. A blocked attack is a passing test;
a finding is ``xfail(strict=True)`` with its id (G1, G2, ...) and asserts the SAFE
behaviour, so it starts passing (and strict xfail turns red) once fixed.

Attacks on a guard or wall follow ``_proof``: a positive control with that guard off (in
a child Python) and the exact refusal on the targeted line. The wire and pool tests have
no switch; their controls are the well-formed twin of the hostile input.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from typing import Any

import psutil
import pytest

from attacks._child import child_output
from attacks._proof import Attack, assert_control, assert_refused, by_id
from ptcbox import resolve_tools
from ptcbox.runtimes import SubprocessRuntime
from ptcbox.runtimes.subprocess.worker._landlock import landlock_abi
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio

MARK = "ESCAPED"


def search(q: str) -> str:
    """Search for q."""
    return "r:" + q


TOOLS = resolve_tools([search])


# -- helpers for trusted snippets that talk to the host over their raw socket ------------

FIND_SOCKET = """
import os, stat, struct, json
for fd in range(3, 256):
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            break
    except OSError:
        pass
def frame(kind, payload):
    return struct.pack(">IB", len(payload) + 1, kind) + payload
def message(msg, kind=0x4A):
    return frame(kind, json.dumps(msg).encode())
"""


def _frame(kind: int, payload: bytes) -> bytes:
    return struct.pack(">IB", len(payload) + 1, kind) + payload


def _raw(data: bytes) -> str:
    """A trusted snippet that writes ``data`` to its socket, then waits to be killed."""
    return FIND_SOCKET + f"os.write(fd, {data!r})\nimport time\ntime.sleep(30)\n"


# -- G1: signals to other processes through F_SETOWN (seccomp does not see them) ---------

# A helper process the probes aim at (never pytest itself): it counts SIGUSR1 until its
# stdin closes, then prints the count.
SIGNAL_TARGET = """
import signal, sys
got = []
signal.signal(signal.SIGUSR1, lambda *_: got.append(1))
print("ready", flush=True)
sys.stdin.read()
print("got", len(got), flush=True)
"""

SETOWN_CHILD = """
import fcntl, os, signal, socket, sys
from ptcbox.runtimes.subprocess.worker._rlimits import set_no_new_privs
from ptcbox.runtimes.subprocess.worker._seccomp import forbid_process_creation
target, walled = int(sys.argv[1]), sys.argv[2] == "walled"
if walled:
    set_no_new_privs()
    forbid_process_creation(confine_dirfd=True)
    try:
        os.kill(target, signal.SIGUSR1)
        print("kill allowed")
    except PermissionError:
        print("kill refused")
a, b = socket.socketpair()
try:
    fcntl.fcntl(a.fileno(), fcntl.F_SETOWN, target)
    fcntl.fcntl(a.fileno(), fcntl.F_SETSIG, signal.SIGUSR1)
    flags = fcntl.fcntl(a.fileno(), fcntl.F_GETFL)
    fcntl.fcntl(a.fileno(), fcntl.F_SETFL, flags | os.O_ASYNC)
    b.send(b"x")
    print("armed")
except OSError as exc:
    print("refused", exc)
"""


def _signals_to_a_helper(script: str, mode: str) -> tuple[str, str]:
    """Run ``script`` (argv: a helper's pid, ``mode``); return its output and the helper's
    ``got N`` line (the SIGUSR1 the helper received)."""
    helper = subprocess.Popen(
        [sys.executable, "-c", SIGNAL_TARGET],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert helper.stdout is not None and helper.stdout.readline() == "ready\n"
        done = subprocess.run(
            [sys.executable, "-c", script, str(helper.pid), mode],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        got, _ = helper.communicate("", timeout=60)  # SIGIO is sent within b.send()
    finally:
        helper.kill()
        helper.wait()
    return done.stdout + done.stderr, got.strip()


def test_seccomp_filter_alone_refuses_signals_through_f_setown() -> None:
    """G1 (fixed): seccomp refuses kill() of another process and fcntl F_SETOWN/F_SETSIG,
    through which the kernel would signal another process."""
    # the control: without the filter, the F_SETOWN route alone signals the helper
    control, got = _signals_to_a_helper(SETOWN_CHILD, "open")
    assert "armed" in control and got == "got 1", (control, got)
    out, got = _signals_to_a_helper(SETOWN_CHILD, "walled")
    assert "kill refused" in out, out
    assert "refused [Errno 1] Operation not permitted" in out, out
    assert got == "got 0", (out, got)


ROUTES_CHILD = """
import fcntl, os, resource, socket, struct, sys
from ptcbox.runtimes.subprocess.worker._rlimits import set_no_new_privs
from ptcbox.runtimes.subprocess.worker._seccomp import forbid_process_creation
target = int(sys.argv[1])
# every call would change nothing if it were allowed (current values), so that a
# broken filter cannot renice or pin this machine's processes while the test runs
nice = os.getpriority(os.PRIO_PROCESS, target)
cpus = os.sched_getaffinity(target)
files = resource.prlimit(target, resource.RLIMIT_NOFILE)
if sys.argv[2] == "walled":
    set_no_new_privs()
    forbid_process_creation(confine_dirfd=True)
a, b = socket.socketpair()
routes = {
    "fcntl F_SETOWN_EX": lambda: fcntl.fcntl(a.fileno(), 15, struct.pack("ii", 1, target)),
    "ioctl FIOSETOWN": lambda: fcntl.ioctl(a.fileno(), 0x8901, struct.pack("i", target)),
    "ioctl SIOCSPGRP": lambda: fcntl.ioctl(a.fileno(), 0x8902, struct.pack("i", target)),
    "sched_setaffinity": lambda: os.sched_setaffinity(target, cpus),
    "sched_setscheduler": lambda: os.sched_setscheduler(target, os.SCHED_OTHER, os.sched_param(0)),
    "sched_setparam": lambda: os.sched_setparam(target, os.sched_param(0)),
    "setpriority (process)": lambda: os.setpriority(os.PRIO_PROCESS, target, nice),
    "setpriority (user)": lambda: os.setpriority(os.PRIO_USER, os.getuid(), nice),
    "prlimit": lambda: resource.prlimit(target, resource.RLIMIT_NOFILE, files),
    "own prlimit": lambda: resource.prlimit(0, resource.RLIMIT_CORE, (0, 0)),
    "own fcntl F_GETFL": lambda: fcntl.fcntl(a.fileno(), fcntl.F_GETFL),
    "own sched_getaffinity": lambda: os.sched_getaffinity(0),
}
if sys.argv[2] != "walled":  # it would renice every process of this user
    del routes["setpriority (user)"]
for name, route in routes.items():
    try:
        route()
        print(name, "allowed")
    except PermissionError as exc:
        print(name, "refused" if exc.errno == 1 else "denied")
    except OSError as exc:
        print(name, "error", exc.errno)
"""


def _routes(mode: str) -> dict[str, str]:
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        done = subprocess.run(
            [sys.executable, "-c", ROUTES_CHILD, str(helper.pid), mode],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        lines = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines() if " " in line)
        assert lines, done.stderr
        target, ours = psutil.Process(helper.pid), psutil.Process()  # it inherited ours
        assert (target.nice(), target.cpu_affinity()) == (ours.nice(), ours.cpu_affinity())
    finally:
        helper.kill()
        helper.wait()
    return lines


def test_seccomp_filter_alone_refuses_acting_on_another_process() -> None:
    """G1's whole kind: every way to act on another process by pid or as a descriptor's
    owner (signals, scheduling, priority, limits) is refused behind the seccomp filter
    (its own EPERM); the same calls on the process itself still work. The control: the
    same calls without the filter all succeed (each sets the value already in place; the
    user-wide setpriority is left out there, it would renice every process of the user)."""
    control = _routes("open")
    assert set(control.values()) == {"allowed"}, control
    walled = _routes("walled")
    assert walled.keys() == {*control, "setpriority (user)"}, walled
    for name, outcome in walled.items():
        assert outcome == ("allowed" if name.startswith("own ") else "refused"), (name, walled)


# The worker's own F_SETOWN (trusted code: what a sandbox escape would leave) names its
# parent, the host, or the host's process group; arming only (no O_ASYNC), so even the
# control sends no signal. seccomp's EPERM stops it at the F_SETOWN line.
_SETOWN = (
    "import fcntl, os, socket\na, b = socket.socketpair()\ntarget = {target}\n"
    "fcntl.fcntl(a.fileno(), fcntl.F_SETOWN, target)\n"
    "print('owner set', target)\n"
)
SETOWN = by_id(
    Attack(
        name,
        _SETOWN.format(target=target),
        4,
        "PermissionError",
        "[Errno 1] Operation not permitted",
        "seccomp",
        "owner set ",
        trusted=True,
    )
    for name, target in (
        ("setown_host", "os.getppid()"),
        ("setown_host_group", "-os.getpgid(os.getppid())"),
    )
)


@pytest.mark.parametrize("attack", sorted(SETOWN))
async def test_subprocess_worker_cannot_make_the_host_a_descriptors_owner(attack: str) -> None:
    """G1 (fixed): seccomp refuses F_SETOWN in the worker, whatever Landlock scopes."""
    proof = SETOWN[attack]
    assert_control(proof, SETOWN.values())
    async with SubprocessRuntime(proof.sandbox_policy(), min_idle=0) as rt:
        assert_refused(proof, await rt.execute(proof.code, TOOLS, timeout=30))


# -- G2: un-awaited tool calls flood the host's shared tool threads and memory -----------

CALL_FLOOD = """
import asyncio
await asyncio.sleep(0)
for i in range(10**8):
    search(1, 2, 3)
"""


async def test_unawaited_call_flood_keeps_host_memory_bounded() -> None:
    """G2 (fixed): a default-policy async snippet sends tool calls without awaiting them
    and never reads the replies. Replies the loop sends are queued per execution and
    sent by one tool thread at a time; calls past max_tool_calls + 100 end the
    execution with ToolCallLimitExceeded; unread replies are capped in bytes."""
    rt = SubprocessRuntime(min_idle=1)
    await rt.start()
    me = psutil.Process()
    before = me.memory_info().rss
    peak_threads = 0
    stop = asyncio.Event()

    async def sample() -> None:
        nonlocal peak_threads
        while not stop.is_set():
            peak_threads = max(peak_threads, threading.active_count())
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    try:
        result = await rt.execute(CALL_FLOOD, TOOLS, timeout=10)
    finally:
        stop.set()
        await sampler
        grown = me.memory_info().rss - before
        await rt.aclose()
    assert result.return_code == 1
    assert result.error_type == "ToolCallLimitExceeded" and not result.timed_out
    assert "kept calling tools after the limit" in (result.error or "")
    # each execution's sync tools run in threads of its own (issue 12); the flood must
    # not turn into a thread per call
    assert peak_threads < 200, f"{peak_threads:,} threads in the host"
    assert grown < 100 << 20, f"host memory grew by {grown / 1e6:.0f} MB"


# -- hostile frames from a trusted snippet: never unpickled, capped, a clear error -------

_MALFORMED = "malformed message: "
# id: (frame, the host's exact refusal after "WireProtocolError: ")
HOSTILE: dict[str, tuple[bytes, str]] = {
    "oversize_header": (
        b"\x7f\xff\xff\xffJ",
        "frame of 2,147,483,647 bytes exceeds the 16,777,216-byte limit",
    ),
    "zero_size": (b"\x00\x00\x00\x00J", "empty frame"),
    "unknown_kind": (_frame(0x50, b"\x80\x04K\x01."), "unknown frame kind 0x50"),  # a pickle
    "malformed_json": (_frame(0x4A, b"{not json"), _MALFORMED + "unexpected character"),
    "not_an_object": (
        _frame(0x4A, b"[1, 2]"),
        _MALFORMED + "not an object with a string 't' field",
    ),
    "deep_nesting_orjson": (
        _frame(0x4A, b'{"t":"done","value":' + b"[" * 100_000),
        _MALFORMED + "depth limit exceeded",
    ),
    "deep_nesting_stdlib": (
        _frame(0x6A, b'{"t":"done","value":' + b"[" * 100_000),
        _MALFORMED + "maximum recursion depth exceeded",
    ),
    "huge_int_digits": (
        _frame(0x6A, b'{"t":"done","value":' + b"9" * 1_000_000 + b"}"),
        _MALFORMED + "Exceeds the limit (4300 digits) for integer string conversion",
    ),
    "nan_constant": (
        _frame(0x6A, b'{"t":"done","value":NaN,"error":null,"truncated":false}'),
        _MALFORMED + "NaN is not JSON",
    ),
    "unknown_tool": (
        _frame(0x4A, b'{"t":"call","id":1,"name":"os.system","args":[],"kwargs":{}}'),
        "the worker called an unknown tool 'os.system'",
    ),
    "call_id_not_int": (
        _frame(0x4A, b'{"t":"call","id":"1","name":"search","args":[],"kwargs":{}}'),
        "message 'call': field 'id' has type str",
    ),
    "call_id_bool": (
        _frame(0x4A, b'{"t":"call","id":true,"name":"search","args":[],"kwargs":{}}'),
        "message 'call': field 'id' has type bool",
    ),
    "result_from_worker": (
        _frame(0x4A, b'{"t":"result","id":1,"value":1}'),
        "unexpected message type 'result' from the worker",
    ),
    "done_error_not_text": (
        _frame(0x4A, b'{"t":"done","value":null,"error":1,"error_type":null,"truncated":false}'),
        "malformed 'done' message: error fields are not text",
    ),
    "done_truncated_missing": (
        _frame(0x4A, b'{"t":"done","value":null,"error":null}'),
        "malformed 'done' message: 'truncated' is not a bool",
    ),
}


async def test_a_well_formed_frame_written_the_same_way_is_read() -> None:
    """The control of the hostile frames: what the trusted snippet writes on its raw
    socket is what the host decodes (a forged, well-formed 'done' is the result)."""
    done = b'{"t":"done","value":42,"error":null,"error_type":null,"truncated":false}'
    async with SubprocessRuntime(SandboxPolicy.trusted(), min_idle=1) as rt:
        result = await rt.execute(_raw(_frame(0x4A, done)), TOOLS, timeout=30)
    assert (result.error, result.value) == (None, 42), result


@pytest.mark.parametrize("frame", list(HOSTILE), ids=list(HOSTILE))
async def test_hostile_frame_is_a_clean_wire_protocol_error(frame: str) -> None:
    data, refusal = HOSTILE[frame]
    # room for the frames of a megabyte: the raw route writes them in the snippet's source
    policy = SandboxPolicy.trusted().replace(max_code_chars=4_000_000)
    rt = SubprocessRuntime(policy, min_idle=1)
    try:
        started = time.monotonic()
        result = await rt.execute(_raw(data), TOOLS, timeout=30)
        assert time.monotonic() - started < 25, "the host waited for the deadline"
        assert result.error_type == "WireProtocolError", result
        assert (result.error or "").startswith("WireProtocolError: " + refusal), result.error
        assert result.return_code == 1
        after = await rt.execute("print(search(q='ok'))", TOOLS, timeout=30)
        assert after.stdout == "r:ok\n", after
    finally:
        await rt.aclose()


async def test_hostile_kwargs_names_are_a_type_error_not_a_host_error() -> None:
    """A forged call with a keyword named ``**`` is the tool's TypeError, sent back to
    the worker; the control, a well-formed call written the same way first, gets the
    tool's result (the raw route reaches the host's tool dispatch)."""
    good = {"t": "call", "id": 1, "name": "search", "args": [], "kwargs": {"q": "a"}}
    bad = {"t": "call", "id": 2, "name": "search", "args": [], "kwargs": {"**": 1, "q": "a"}}
    code = FIND_SOCKET + textwrap.dedent(f"""
        for call in ({good!r}, {bad!r}):
            os.write(fd, message(call))
            reply = json.loads(os.read(fd, 65536)[5:])
            print(reply["t"], reply.get("value"), reply.get("kind"), reply.get("message"))
    """)
    async with SubprocessRuntime(SandboxPolicy.trusted(), min_idle=0) as rt:
        result = await rt.execute(code, TOOLS, timeout=30)
    assert result.stdout == (
        "result r:a None None\n"
        "error None TypeError search() got an unexpected keyword argument '**'\n"
    ), result


# -- the rehearsal leaves nothing behind --------------------------------------------------


async def test_rehearsal_output_and_replies_never_reach_a_real_run() -> None:
    rt = SubprocessRuntime(min_idle=2)
    try:
        for _ in range(10):
            result = await rt.execute("print(search(q='a'))\nsearch(q='b')", TOOLS, timeout=30)
            assert result.stdout == "r:a\n", result
            assert result.value == "r:b"
            assert [c.arguments for c in result.tool_calls] == [{"q": "a"}, {"q": "b"}]
            assert "rows" not in result.stdout + result.stderr
    finally:
        await rt.aclose()


async def test_rehearsal_leaves_no_descriptor_alarm_or_state() -> None:
    code = textwrap.dedent("""
        import os, stat, signal, sys, gc
        sockets = []
        for fd in range(256):
            try:
                mode = os.fstat(fd).st_mode
            except OSError:
                continue
            if stat.S_ISSOCK(mode):
                sockets.append(fd)
        print("sockets", len(sockets))
        print("alarm", signal.getitimer(signal.ITIMER_REAL)[0] > 0.01)
        print("stdout is the channel's", type(sys.stdout).__name__)
    """)
    rt = SubprocessRuntime(SandboxPolicy.trusted(), min_idle=1)
    try:
        result = await rt.execute(code, TOOLS, timeout=30)
    finally:
        await rt.aclose()
    assert "sockets 1\n" in result.stdout, result
    assert "alarm False" in result.stdout
    assert result.return_code == 0


# Trusted code rewrites the audit gate (what a sandbox escape could do), then writes
# outside its working directory, into a directory anyone may write to (so that file
# permissions of a worker dropped to ``nobody`` do not stop it first): Landlock refuses.
NEUTER_AUDIT = """import gc, sys
audit = sys.modules["ptcbox.runtimes.subprocess.worker._audit"]
audit._refuse = lambda *a: None
for obj in gc.get_objects():
    if type(obj).__name__ == "AuditGate":
        obj.workdir = "/"
import ctypes  # the hook no longer refuses anything
open({target!r}, "w").write("x")
print("WROTE")
"""


async def test_trusted_code_that_neuters_the_audit_hook_still_meets_landlock() -> None:
    """Defence in depth: trusted code can rewrite the audit gate; Landlock still holds.
    The control (Landlock off, in a child) writes the file."""
    if landlock_abi() < 1:
        pytest.skip("no Landlock on this kernel")
    with tempfile.TemporaryDirectory() as shared:
        os.chmod(shared, 0o777)  # the file permissions must not be the wall
        proof = Attack(
            "neutered_audit_write",
            NEUTER_AUDIT.format(target=f"{shared}/control"),
            8,
            "PermissionError",
            f"[Errno 13] Permission denied: '{shared}/control'",
            "landlock",
            "WROTE",
            trusted=True,
        )
        assert_control(proof)
        assert os.path.exists(f"{shared}/control")
        os.unlink(f"{shared}/control")
        async with SubprocessRuntime(proof.sandbox_policy(), min_idle=0) as rt:
            result = await rt.execute(proof.code, TOOLS, timeout=30)
        assert_refused(proof, result)
        assert not os.listdir(shared)


# -- idle-worker check: stopped or dying workers are never handed out ---------------------


def _idle_workers() -> list[int]:
    me = psutil.Process()
    return [c.pid for c in me.children(recursive=True) if c.ppid() != me.pid]


@pytest.mark.parametrize("signum", [signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU])
async def test_worker_stopped_by_any_stop_signal_is_not_handed_out(signum: int) -> None:
    rt = SubprocessRuntime(min_idle=2)
    stopped: list[int] = []
    try:
        await rt.execute("print(1)", TOOLS, timeout=30)
        await asyncio.sleep(0.5)
        for pid in _idle_workers():
            os.kill(pid, signum)
            stopped.append(pid)
        assert stopped
        for _ in range(3):
            result = await rt.execute("print(1)", TOOLS, timeout=10)
            assert result.stdout == "1\n", result
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        await rt.aclose()


async def test_worker_killed_just_before_hand_out_still_gives_a_result() -> None:
    rt = SubprocessRuntime(min_idle=2)
    try:
        await rt.execute("print(1)", TOOLS, timeout=30)
        for _ in range(5):
            await asyncio.sleep(0.3)
            for pid in _idle_workers():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            result = await rt.execute("print(2)", TOOLS, timeout=20)
            assert result.stdout == "2\n", result
    finally:
        await rt.aclose()


# -- lifecycle: release on the next iteration, cancellation, closing, load ----------------


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_loop_closed_right_after_execute_leaks_nothing() -> None:
    rt = SubprocessRuntime(SandboxPolicy.trusted(), min_idle=0)
    code = FIND_SOCKET + textwrap.dedent("""
        done = {"t": "done", "value": os.getpid(), "error": None, "error_type": None,
                "truncated": False}
        os.write(fd, message(done))
        while True:  # keeps running after its forged 'done'
            pass
    """)
    baseline = _fds()
    pids = []
    for _ in range(3):
        loop = asyncio.new_event_loop()
        try:
            result = loop.run_until_complete(rt.execute(code, TOOLS, timeout=30))
        finally:
            loop.close()
        pids.append(result.value)
    deadline = time.monotonic() + 10
    while any(psutil.pid_exists(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if psutil.pid_exists(p)], "a worker outlived its execution"
    loop = asyncio.new_event_loop()
    loop.run_until_complete(rt.aclose())
    loop.close()
    assert _fds() <= baseline


SLOW_CALLED: list[float] = []


def slow(seconds: float) -> str:
    """Sleep, then answer."""
    SLOW_CALLED.append(seconds)
    time.sleep(seconds)
    return "slept"


SLOW_TOOLS = resolve_tools([slow])


WORKER_PIDS: list[int] = []


def slow_from(seconds: float, pid: int) -> str:
    """Record the calling worker's pid, sleep, then answer."""
    WORKER_PIDS.append(pid)
    time.sleep(seconds)
    return "slept"


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def test_cancelling_the_host_task_mid_tool_call_kills_the_worker() -> None:
    """The worker that ran the cancelled execution is gone while its tool call still
    runs (trusted code only to tell the tool its pid; the kill does not depend on it)."""
    WORKER_PIDS.clear()
    rt = SubprocessRuntime(SandboxPolicy.trusted(), min_idle=1)
    tools = resolve_tools([slow_from])
    try:
        await rt.start()
        code = "import os\nslow_from(seconds=8, pid=os.getpid())"
        task = asyncio.create_task(rt.execute(code, tools, timeout=60))
        deadline = time.monotonic() + 30
        while not WORKER_PIDS and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert len(WORKER_PIDS) == 1
        worker = WORKER_PIDS[0]
        assert not _gone(worker)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        deadline = time.monotonic() + 5  # the tool call still sleeps: only a kill ends it
        while not _gone(worker) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert _gone(worker), "the cancelled execution's worker is still running"
        result = await rt.execute("print(1)", TOOLS, timeout=30)
        assert result.stdout == "1\n"
    finally:
        await rt.aclose()


async def test_closing_the_runtime_mid_execution_is_clean() -> None:
    rt = SubprocessRuntime(min_idle=1)
    await rt.start()
    task = asyncio.create_task(rt.execute("slow(seconds=2)", SLOW_TOOLS, timeout=30))
    await asyncio.sleep(0.5)
    await rt.aclose()
    outcome = (await asyncio.gather(task, return_exceptions=True))[0]
    # the execution ends with the closed runtime's error or a crashed worker's result
    if isinstance(outcome, BaseException):
        assert type(outcome).__name__ == "RuntimeClosedError", repr(outcome)
    else:
        assert outcome.error_type == "WorkerCrashed", outcome
    assert not _idle_workers() and not psutil.Process().children()


async def test_worker_killed_mid_tool_call_is_a_crash_result() -> None:
    rt = SubprocessRuntime(min_idle=1)
    try:
        calls_before = len(SLOW_CALLED)
        task = asyncio.create_task(
            rt.execute("import time\nslow(seconds=3)\nprint('after')", SLOW_TOOLS, timeout=30)
        )
        # Kill only once the worker is inside the tool call (a fixed sleep raced the
        # worker's hand-out on a loaded machine and killed nothing).
        deadline = time.monotonic() + 20
        while len(SLOW_CALLED) == calls_before and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert len(SLOW_CALLED) > calls_before, "the tool call never started"
        busy = [w for w in rt._pool._workers.values() if w not in rt._pool._idle]
        for worker in busy:
            os.kill(worker.pid, signal.SIGKILL)
        result = await task
        assert result.error_type == "WorkerCrashed", result
        assert "after" not in result.stdout
    finally:
        await rt.aclose()


async def test_two_hundred_concurrent_executions() -> None:
    rt = SubprocessRuntime(max_workers=16, min_idle=2)
    try:
        results = await asyncio.gather(
            *(rt.execute(f"search(q='{i}')", TOOLS, timeout=120) for i in range(200))
        )
        assert [r.value for r in results] == [f"r:{i}" for i in range(200)]
    finally:
        await rt.aclose()
    await asyncio.sleep(0.5)
    assert not psutil.Process().children(recursive=True)


# -- classic escapes under the default policy (both runtimes) -----------------------------
# Each follows ``_proof``: a control in a child Python under the default policy with only
# its guard off reaches the host object; the real policy refuses it with the guard's words
# on the targeted line. Dropped as refused by CPython itself: ``format_spec``
# (``function.__format__`` rejects any spec) and ``awaitable_vars`` (a tool call's
# awaitable has no ``__dict__``: ``vars()`` raises TypeError). The asyncio ones were sync
# snippets (CPython: no running loop); they now make a task in a running loop.

_INTERNALS = "(frame, code, traceback and generator internals are off limits)"
_LOOP = "(it leads to the event loop, coroutines or frames)"
_SPECIAL = "of 'function' object is not allowed (special attributes are off limits)"
_HOST_GLOBALS = "{'__name__': 'ptcbox."
_TASK = "import asyncio\nt = asyncio.create_task(asyncio.sleep(0))\n"

# id: (snippet, line, error type, the guard's message, guard, control marker, compile time)
_ESCAPES: dict[str, tuple[str, int, str, str, str, str, bool]] = {
    "task_get_stack": (
        _TASK + "print('ESCAPED', t.get_stack())\nawait t",
        3,
        "PolicyViolation",
        f'"get_stack" is a restricted attribute {_LOOP}',
        "attribute",
        "ESCAPED [<frame",
        True,
    ),
    "task_coro_frame": (
        _TASK + "print('ESCAPED', t.get_coro().cr_frame)\nawait t",
        3,
        "PolicyViolation",
        f'"cr_frame" is a restricted attribute {_INTERNALS}',
        "attribute",
        "ESCAPED <frame",
        True,
    ),
    "print_stack": (
        _TASK + "import io\nb = io.StringIO()\nt.print_stack(file=b)\n"
        "print('ESCAPED', b.getvalue())\nawait t",
        5,
        "PolicyViolation",
        f'"print_stack" is a restricted attribute {_LOOP}',
        "attribute",
        "ESCAPED Stack for <Task",
        True,
    ),
    "running_loop": (
        "import asyncio\nl = asyncio.get_running_loop()\n"
        "print('ESCAPED', await l.run_in_executor(None, print, 1))",
        3,
        "AttributeError",
        "loop.run_in_executor is not available in the sandbox (it reaches threads, processes,"
        " sockets or other tasks)",
        "module_views",
        "1\nESCAPED None",
        False,
    ),
    "gen_frame_getattr": (
        "def g():\n    yield 1\nprint('ESCAPED', getattr(g(), 'gi_' + 'frame'))",
        3,
        "PolicyViolation",
        f"access to attribute 'gi_frame' of 'generator' object is not allowed {_INTERNALS}",
        "attribute",
        "ESCAPED <frame",
        False,
    ),
    "tb_frame_via_exit": (
        "class C:\n    def __enter__(self): pass\n"
        "    def __exit__(self, t, v, tb):\n        print('ESCAPED', tb.tb_frame.f_globals)\n"
        "        return True\nwith C():\n    1/0",
        4,
        "PolicyViolation",
        f'"tb_frame" is a restricted attribute {_INTERNALS}',
        "attribute",
        "ESCAPED {'__name__'",
        True,
    ),
    "stub_closure_getattr": (
        "print('ESCAPED', getattr(search, '__clo' + 'sure__'))",
        1,
        "PolicyViolation",
        f"access to attribute '__closure__' {_SPECIAL}",
        "attribute",
        "ESCAPED (<cell",
        False,
    ),
    "reduce_getattr": (
        "import functools\nprint('ESCAPED', functools.reduce(getattr, ['__globals__'], search))",
        2,
        "PolicyViolation",
        f"access to attribute '__globals__' {_SPECIAL}",
        "attribute",
        "ESCAPED " + _HOST_GLOBALS,
        False,
    ),
    "map_getattr": (
        "print('ESCAPED', list(map(getattr, [search], ['__globals__'])))",
        1,
        "PolicyViolation",
        f"access to attribute '__globals__' {_SPECIAL}",
        "attribute",
        "ESCAPED [" + _HOST_GLOBALS,
        False,
    ),
    "methodcaller": (
        "import operator\n"
        "print('ESCAPED', operator.methodcaller('__getattribute__', '__globals__')(search))",
        2,
        "PolicyViolation",
        f"access to attribute '__getattribute__' {_SPECIAL}",
        "attribute",
        "ESCAPED " + _HOST_GLOBALS,
        False,
    ),
    "string_formatter": (
        "import string\n"
        "print('ESCAPED', string.Formatter().get_field('0.__globals__', (search,), {}))",
        2,
        "AttributeError",
        "string.Formatter is not available in the sandbox: get_field() walks attributes of its"
        " arguments (GHSA-hp3v-5vw7-fx9w)",
        "module_views",
        "ESCAPED (" + _HOST_GLOBALS,
        False,
    ),
    "awaitable_await_iter": (
        "import asyncio\nawait asyncio.sleep(0)\nc = search(q='a')\n"
        "print('ESCAPED', getattr(c.__await__(), 'gi_' + 'frame'))",
        4,
        "PolicyViolation",
        'access to attribute "__await__" is not allowed',
        "attribute",
        "ESCAPED <frame",
        True,
    ),
    "mro_call": (
        "print('ESCAPED', getattr(type(()), 'mro')())",
        1,
        "PolicyViolation",
        "access to attribute 'mro' of class 'tuple' is not allowed (class-hierarchy traversal"
        " is off limits)",
        "attribute",
        "ESCAPED [<class 'tuple'>, <class 'object'>]",
        False,
    ),
    "type_three_args": (
        "print('ESCAPED', type('X', (), {}))",
        1,
        "PolicyViolation",
        "type() with 3 arguments is not available in the sandbox; use a class statement",
        "metaclass",
        "ESCAPED <class",
        False,
    ),
    "json_object_hook": (
        "import json\n"
        "print('ESCAPED', json.loads('{}', object_hook=lambda d: getattr(search, '__globals__')))",
        2,
        "PolicyViolation",
        f"access to attribute '__globals__' {_SPECIAL}",
        "attribute",
        "ESCAPED " + _HOST_GLOBALS,
        False,
    ),
    "result_class": (
        "r = search(q='x')\nprint('ESCAPED', getattr(r, '__class__').__mro__)",
        2,
        "PolicyViolation",
        "access to attribute '__class__' of 'str' object is not allowed (only on the snippet's"
        " own objects and exceptions; use type(obj))",
        "attribute",
        "ESCAPED (<class 'str'>, <class 'object'>)",
        False,
    ),
}
ESCAPES = by_id(
    Attack(name, code, line, kind, message, guard, marker, compile_time=compiled)
    for name, (code, line, kind, message, guard, marker, compiled) in _ESCAPES.items()
)


@pytest.mark.parametrize("attack", sorted(ESCAPES))
async def test_classic_escape_proves_its_guard(runtime: Any, tools: Any, attack: str) -> None:
    proof = ESCAPES[attack]
    assert_control(proof, ESCAPES.values())
    result = await runtime.execute(proof.code, tools, timeout=20)
    assert_refused(proof, result)
    assert MARK not in result.stdout, result.stdout


# -- G3/G4: ThreadRuntime and async snippets that fight the stop ------------------------
# Found at the end of stop 7 while chasing an unclosed event loop seen in CI. G3's whole
# kind (snippet code started by the garbage collector) is in test_finalizers.py. Each
# runs in a child process, where a failure cannot hang the test run.

THREAD_ASYNC_CHILD = """
import asyncio, sys, time
from ptcbox import ThreadRuntime
code = sys.argv[1]
async def main():
    runtime = ThreadRuntime()
    started = time.monotonic()
    result = await runtime.execute(code, {}, timeout=0.05)
    print("returned", round(time.monotonic() - started, 2), result.timed_out, flush=True)
asyncio.run(main())
import os
os._exit(0)
"""


GC_CHILD = """
import asyncio, gc, sys
from ptcbox import ThreadRuntime
code = sys.argv[1]
async def once():
    runtime = ThreadRuntime()
    result = await runtime.execute(code, {}, timeout=0.05)
    await runtime.aclose()
    return result.timed_out
for attempt in range(8):
    print("timed out", asyncio.run(once()), flush=True)
    gc.collect()
print("all collected", flush=True)
import os
os._exit(0)
"""


def test_thread_runtime_stopped_async_snippet_never_runs_at_garbage_collection() -> None:
    """G3 (fixed): the stopped snippet's coroutine, closed by gc.collect() in the main
    thread, stops at its first _alive_() check instead of looping there forever."""
    code = (
        "import asyncio\nwhile True:\n    try:\n        await asyncio.sleep(0)\n"
        "    except BaseException:\n        pass\n"
    )
    out = child_output(GC_CHILD, code, timeout=30)
    assert "all collected" in out, out


def test_thread_runtime_async_gather_of_busy_coroutines_stops_in_time() -> None:
    """G4: the result of a snippet gathering 50 busy coroutines comes back in time.

    Seen 1.6-18 s late: (1) ThreadRuntime's timeout used anyio.move_on_after, whose
    first use imports anyio's backend; each file system call of that import waited
    for the GIL (up to a 5 ms switch interval) against the busy snippet thread. (2)
    The stop landing in a task was swallowed by the loop's callback handling, so the
    thread went on, task after task. Now asyncio's timer, and the loop stops on it.
    The host still competes for the GIL with the busy thread until it stops (each
    blocking call of the host costs a switch interval), so the bound allows for load:
    0.06-0.45 s alone, 0.83 s once with a benchmark running beside."""
    code = (
        "import asyncio\nasync def w():\n    while True:\n        await asyncio.sleep(0)\n"
        "await asyncio.gather(*[w() for _ in range(50)])\n"
    )
    out = child_output(THREAD_ASYNC_CHILD, code, timeout=60)
    line = next((row for row in out.splitlines() if row.startswith("returned")), "")
    assert line, out
    assert float(line.split()[1]) < 1.5, out

"""SubprocessRuntime: isolation, the wire boundary, sessions and the bug cases it owns.

Limits and kill guarantees are in ``test_limits.py``; crashes, cancellation,
closing and concurrency in ``test_lifecycle.py``. Every test that starts a
runtime checks afterwards that no process, thread or file descriptor leaked.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from ptcbox import DirectProjection, SubprocessRuntime
from ptcbox.errors import SessionEndedError
from ptcbox.runtimes.subprocess import _compile
from ptcbox.sandbox import SandboxPolicy
from runtimes._leaks import no_leaks

pytestmark = pytest.mark.anyio

TRUSTED = SandboxPolicy.trusted()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` ends (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        await anyio.sleep(0.01)
    return False


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def odd_result() -> Any:
    return {"set": {3, 1, 2}, "tuple": (1, 2), "big": 2**100, "obj": object()}


async def fetch(q: str) -> str:
    await anyio.sleep(0.01)
    return q.upper()


TOOLS = {
    "add": DirectProjection("add", add),
    "odd_result": DirectProjection("odd_result", odd_result),
    "fetch": DirectProjection("fetch", fetch),
}


async def test_runs_in_another_process_and_each_execution_gets_a_fresh_one() -> None:
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        code = "import os\nos.getpid()"
        pids = {(await runtime.execute(code, TOOLS)).value for _ in range(3)}
        assert len(pids) == 3 and os.getpid() not in pids


async def test_no_state_survives_between_executions() -> None:
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        first = await runtime.execute("import json\njson.marker = 1\nleft = 2", TOOLS)
        assert first.ok, first.error
        second = await runtime.execute(
            "import json\n[hasattr(json, 'marker'), 'left' in dir()]", TOOLS
        )
        assert second.value == [False, False]


async def test_the_rehearsal_leaves_nothing_behind_for_the_first_execution() -> None:
    """Each worker rehearses a whole execution before it is handed out (see
    ``_worker.rehearse``): its snippet's names, tool, output and tool call, and its
    loopback socket pair, are gone when the first real snippet runs."""
    probe = (
        "seen = []\n"
        "try:\n    rows\n    seen.append('rows')\nexcept NameError:\n    pass\n"
        "try:\n    total\n    seen.append('total')\nexcept NameError:\n    pass\n"
        "try:\n    tool\n    seen.append('tool')\nexcept NameError:\n    pass\n"
        "seen"
    )
    sockets = (
        "import os, stat\n"
        "found = []\n"
        "for name in os.listdir('/proc/self/fd'):\n"
        "    try:\n"
        "        if stat.S_ISSOCK(os.fstat(int(name)).st_mode):\n"
        "            found.append(name)\n"
        "    except OSError:\n"
        "        pass\n"
        "len(found)"
    )
    async with no_leaks(), SubprocessRuntime() as runtime:
        result = await runtime.execute(probe, TOOLS)
        assert (result.value, result.error) == ([], None)
        assert (result.stdout, result.stderr, result.tool_calls) == ("", "", ())
        called = await runtime.execute("add(a=2, b=3)", TOOLS)  # call ids start afresh
        assert called.value == 5 and [c.name for c in called.tool_calls] == ["add"]
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        assert (await runtime.execute(sockets, TOOLS)).value == 1  # the host's socket only


@pytest.mark.parametrize(
    ("code", "value"),
    [
        # named: a channel thread reads from the start; output and value still arrive
        ("add\nfor i in range(3000):\n    print('line', i)\n'done'", "done"),
        (
            "import asyncio\nawait asyncio.gather(fetch(q='a'), fetch(q='b'))\nawait add(a=1, b=2)",
            3,
        ),
        # not named (the hint misses it): the loop reads and hands over at the first call
        ("f = globals()['a' + 'dd']\n[f(a=1, b=i) for i in range(3)]", [1, 2, 3]),
    ],
)
async def test_sync_calls_are_served_whether_or_not_the_code_names_the_tool(
    code: str, value: Any
) -> None:
    seen: list[str] = []
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        result = await runtime.execute(code, TOOLS, on_tool_call=lambda c: seen.append(c.name))
    assert (result.value, result.error) == (value, None)
    if value == "done":
        assert result.stdout.count("\n") == 3000 and result.stdout.endswith("line 2999\n")
    assert seen == [c.name for c in result.tool_calls]


async def test_tool_results_cross_as_json_converted_deterministically() -> None:
    async with no_leaks(), SubprocessRuntime() as runtime:
        result = await runtime.execute("r = odd_result()\n[r, add(2**70, 1)]", TOOLS)
        assert result.ok, result.error
        assert result.value == [
            {"set": [1, 2, 3], "tuple": [1, 2], "big": 2**100, "obj": "<object object>"},
            2**70 + 1,
        ]


@pytest.mark.parametrize(
    "value",
    [None, True, 1.5, -(2**63), 2**63 - 1, 2**63, -(2**63) - 1, 2**100, "ascii", "é\U0001f600"],
)
async def test_the_value_crosses_exactly_whichever_json_decoder_reads_it(value: Any) -> None:
    """The worker marks a ``done`` orjson-safe only for plain values (ints within 64
    bits, ASCII text); orjson would read a bigger int as a float."""
    async with no_leaks(), SubprocessRuntime(min_idle=0) as runtime:
        result = await runtime.execute(f"{value!r}\n", {})
        error = await runtime.execute(f"raise ValueError({value!r})\n", {})
    assert result.ok, result.error
    assert result.value == value and type(result.value) is type(value)
    assert error.error is not None and str(value) in error.error


async def test_a_repeated_snippet_reuses_its_run_frame_only_with_the_same_tools() -> None:
    def first() -> str:
        """First."""
        return "first"

    def second() -> str:
        """Second."""
        return "second"

    code = "print(tool(), tool.__doc__)\n"
    first_tools = {"tool": DirectProjection("tool", first)}
    async with no_leaks(), SubprocessRuntime(min_idle=0) as runtime:
        results = [await runtime.execute(code, first_tools) for _ in range(2)]
        for _ in range(3000):  # compiled by the host: at once (serial) or in a thread
            if (code, True) in _compile._ready:
                break
            await asyncio.sleep(0.01)
        results.append(await runtime.execute(code, first_tools))
        assert [r.stdout for r in results] == ["first First.\n"] * 3
        assert len(runtime._preparer.frames) == 1  # one frame, kept once host-compiled
        other = await runtime.execute(code, {"tool": DirectProjection("tool", second)})
        assert other.stdout == "second Second.\n"
        extra = await runtime.execute("print(x)\n", first_tools, extra_globals={"x": 5})
        again = await runtime.execute("print(x)\n", first_tools, extra_globals={"x": 6})
        assert (extra.stdout, again.stdout) == ("5\n", "6\n")
        async with runtime.session() as session:
            assert (await session.execute(code, first_tools)).stdout == "first First.\n"


async def test_extra_globals_must_be_json_compatible() -> None:
    async with no_leaks(), SubprocessRuntime() as runtime:
        result = await runtime.execute(
            "data['k'] + n", TOOLS, extra_globals={"data": {"k": 1}, "n": 2}
        )
        assert result.value == 3
        with pytest.raises(TypeError, match="JSON-compatible"):
            await runtime.execute("1", TOOLS, extra_globals={"f": add})


async def test_B11_pickle_gadget_value_is_never_unpickled(tmp_path: Path) -> None:
    """B11: values cross as JSON; a ``__reduce__`` gadget never runs on the host."""
    marker = Path("/tmp/ptcbox_pwned")
    marker.unlink(missing_ok=True)
    code = (
        "import os\nclass P:\n    def __reduce__(self):\n"
        "        return (os.system, ('touch /tmp/ptcbox_pwned',))\nP()"
    )
    async with no_leaks(), SubprocessRuntime() as strict, SubprocessRuntime(TRUSTED) as trusted:
        refused = await strict.execute(code, TOOLS)
        assert refused.error_type in {"ImportError", "PolicyViolation"}
        result = await trusted.execute(code, TOOLS)
        assert result.ok and result.value == "<P object>"
    assert not marker.exists()


@pytest.mark.parametrize("exc", ["SystemExit(3)", "KeyboardInterrupt"])
async def test_B12_system_exit_and_keyboard_interrupt_stay_in_the_worker(exc: str) -> None:
    async with no_leaks(), SubprocessRuntime() as runtime:
        result = await runtime.execute(f"print('before')\nraise {exc}", TOOLS)
        assert (result.stdout, result.return_code) == ("before\n", 1)
        assert result.error_type == exc.split("(", maxsplit=1)[0]
        assert (await runtime.execute("1 + 1", TOOLS)).value == 2


async def test_B29_lone_surrogates_do_not_crash_the_worker() -> None:
    async with no_leaks(), SubprocessRuntime() as runtime:
        result = await runtime.execute('print("ok \\ud800")\n"v \\udfff"', TOOLS)
        assert result.return_code == 0, result.error
        assert result.stdout == "ok \ufffd\n" and result.value == "v \ufffd"
        json.dumps(result.to_dict())


async def test_source_with_a_lone_surrogate_reaches_the_worker() -> None:
    """The source crosses the wire unchanged; what happens next is the compiler's call
    (today it refuses such source, as in the thread runtime)."""
    async with no_leaks(), SubprocessRuntime() as runtime:
        result = await runtime.execute("x = '\ud800'\n[len(x), x]", TOOLS)
        if result.ok:
            assert result.value == [1, "\ufffd"]
        else:
            assert result.error_type in {"UnicodeEncodeError", "SyntaxError"}, result.error
        json.dumps(result.to_dict())


async def test_B23_concurrent_executions_keep_their_own_output() -> None:
    async with no_leaks(), SubprocessRuntime() as runtime:
        results: dict[str, Any] = {}

        async def run(tag: str) -> None:
            code = f"for i in range(2000):\n    print({tag!r}, i)"
            results[tag] = await runtime.execute(code, TOOLS)

        async with anyio.create_task_group() as group:
            for tag in "AB":
                group.start_soon(run, tag)
        for tag in "AB":
            lines = results[tag].stdout.splitlines()
            assert lines == [f"{tag} {i}" for i in range(2000)]


async def test_B25_asyncio_run_inside_the_snippet_uses_host_async_tools() -> None:
    code = (
        "import asyncio\nasync def main():\n    return await fetch(q='x')\n"
        "print(asyncio.run(main()))"
    )
    async with no_leaks(), SubprocessRuntime() as runtime:
        result = await runtime.execute(code, TOOLS)
        assert result.ok, result.error
        assert result.stdout == "X\n"
        assert [c.name for c in result.tool_calls] == ["fetch"]


async def test_host_environment_secrets_do_not_reach_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    code = (
        "import os\nleak = [os.environ.get('OPENAI_API_KEY'), 'sk-test' in str(os.environ)]\n"
        f"try:\n    open('/proc/{os.getpid()}/environ').read()\n    leak.append('read')\n"
        "except Exception as exc:\n    leak.append(type(exc).__name__)\nleak"
    )
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        result = await runtime.execute(code, TOOLS)
        assert result.value == [None, False, "PolicyViolation"]


async def test_private_working_directory_is_empty_writable_and_removed() -> None:
    code = (
        "import os\nstart = os.listdir('.')\nopen('note.txt', 'w').write('hi')\n"
        "[os.getcwd(), start, open('note.txt').read(), os.environ['HOME'] == os.getcwd()]"
    )
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        result = await runtime.execute(code, TOOLS)
        workdir, start, text, home = result.value
        assert (start, text, home) == ([], "hi", True)
        deadline = time.monotonic() + 5
        while os.path.exists(workdir) and time.monotonic() < deadline:
            await anyio.sleep(0.02)
        assert not os.path.exists(workdir)


REFUSED_BY_THE_AUDIT_HOOK = [
    ("import os\nos.fork()", "creating a process"),
    ("import os\nos.system('true')", "creating a process"),
    ("import subprocess", "importing subprocess"),
    ("import ctypes", "importing ctypes"),
    ("import socket\nsocket.create_connection(('127.0.0.1', 9))", "network access"),
    ("import socket\nsocket.socket()", "network socket"),
    ("open('/tmp/ptcbox_outside', 'w')", "outside the working directory"),
    ("import os\nos.remove('/etc/hostname')", "outside the working directory"),
    ("import os\nos.kill(1, 0)", "signalling another process"),
]


async def test_audit_hook_refuses_what_trusted_code_could_otherwise_do() -> None:
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        for code, refused in REFUSED_BY_THE_AUDIT_HOOK:
            result = await runtime.execute(code, TOOLS)
            assert result.error_type == "PolicyViolation", (code, result.error)
            assert refused in (result.error or ""), code
    assert not os.path.exists("/tmp/ptcbox_outside")


_FIND_SOCKET = """\
import os, stat
def sockets():
    found = []
    for name in os.listdir('/proc/self/fd'):
        try:
            if int(name) > 2 and stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                found.append(int(name))
        except OSError:
            pass
    return found
fd = sockets()[0]
"""


def _frame(kind: bytes, payload: bytes) -> bytes:
    return (len(payload) + 1).to_bytes(4, "big") + kind + payload


MALFORMED_FRAMES = [
    (_frame(b"Z", b"xxxx"), "unknown frame kind"),
    (b"\x7f\xff\xff\xffJ", "exceeds"),
    (_frame(b"J", b"xyz"), "malformed message"),
    (_frame(b"J", b'{"t": "zap"}'), "unexpected message type"),
    (_frame(b"J", b'{"t": "call", "id": 1, "name": "add", "args": []}'), "lacks field"),
    (_frame(b"J", b'{"t": "call", "id": "1", "name": "add"}'), "has type str"),
    (
        _frame(b"J", b'{"t": "call", "id": 1, "name": "os", "args": [], "kwargs": {}}'),
        "unknown tool",
    ),
    (_frame(b"J", b'{"t": "done", "error": 5, "error_type": null}'), "malformed 'done'"),
]


async def test_malformed_frames_from_the_worker_end_the_execution() -> None:
    """A hostile worker writes garbage on its socket: WireProtocolError, host fine."""
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime:
        for garbage, message in MALFORMED_FRAMES:
            code = _FIND_SOCKET + f"os.write(fd, {garbage!r})\nimport time\ntime.sleep(10)"
            result = await runtime.execute(code, TOOLS, timeout=20)
            assert result.error_type == "WireProtocolError", (garbage, result.error)
            assert message in (result.error or ""), garbage
            assert result.duration_s < 10
            assert (await runtime.execute("add(a=1, b=2)", TOOLS)).value == 3


async def test_session_keeps_one_worker_and_ends_after_a_timeout() -> None:
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime, runtime.session() as session:
        first = await session.execute("import os\nx = 41\nos.getpid()", TOOLS)
        second = await session.execute("import os\n[x + 1, os.getpid()]", TOOLS)
        assert second.value == [42, first.value]
        timed_out = await session.execute("while True:\n    pass", TOOLS, timeout=0.5)
        assert timed_out.timed_out
        with pytest.raises(SessionEndedError, match="timed out"):
            await session.execute("x", TOOLS)
        assert await _gone(first.value)


async def test_session_ends_when_its_worker_crashes() -> None:
    async with no_leaks(), SubprocessRuntime(TRUSTED) as runtime, runtime.session() as session:
        crashed = await session.execute(
            "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", TOOLS
        )
        assert crashed.error_type == "WorkerCrashed"
        assert "SIGSEGV" in (crashed.error or "")
        with pytest.raises(SessionEndedError, match="crashed"):
            await session.execute("1", TOOLS)


async def test_pool_keeps_min_idle_workers_ready() -> None:
    async with no_leaks(), SubprocessRuntime(min_idle=3) as runtime:
        await runtime.execute("1", TOOLS)
        deadline = time.monotonic() + 10
        while len(runtime._pool._idle) < 3 and time.monotonic() < deadline:
            await anyio.sleep(0.02)
        assert len(runtime._pool._idle) == 3

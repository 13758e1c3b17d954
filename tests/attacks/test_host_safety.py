"""Host safety: what a snippet must never do to the host process (and robustness).

The attacks follow the ``_proof`` pattern: a positive control in a child Python with the
guard (or OS wall) switched off, and the exact refusal under the real policy."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import time
from typing import Any

import psutil
import pytest

from ptcbox.runtimes import SubprocessRuntime
from ptcbox.sandbox import SandboxPolicy

from ._proof import Attack, assert_control, assert_refused, by_id, control_output
from .conftest import TOOLS

pytestmark = pytest.mark.anyio

DEL_AFTER_TIMEOUT = """
import typing
def d(self):
    n = 0
    while n < 3 * 10**9:
        n += 1
X = typing.ABCMeta("X", (), {"__del__": d})
x = X()
cycle = [x]
cycle.append(cycle)
"""


async def test_thread_snippet_code_never_runs_in_host_gc(
    make_runtime: Any, runtime_name: str, tools: Any
) -> None:
    if runtime_name != "thread":
        pytest.skip("thread runtime only")
    rt = make_runtime()
    await rt.execute(DEL_AFTER_TIMEOUT, tools, timeout=5)
    # A finalizer that ran would loop for minutes: a collection that returns within
    # 15 s (milliseconds when quiet, seconds on a loaded 2-core machine) ran none.
    start = time.monotonic()
    gc.collect()
    assert time.monotonic() - start < 15


async def test_thread_size_guard_holds_for_str_subclass(
    make_runtime: Any, runtime_name: str, tools: Any
) -> None:
    if runtime_name != "thread":
        pytest.skip("size guards are compiled out in the subprocess runtime")
    rt = make_runtime(SandboxPolicy().replace(max_repeat_bytes=1 << 20))
    result = await rt.execute("class S(str): pass\nx = S.ljust('a', 10**7)", tools, timeout=5)
    assert result.error_type == "ArithmeticLimitExceeded"


async def test_thread_size_guard_holds_for_str_itself(
    make_runtime: Any, runtime_name: str, tools: Any
) -> None:
    if runtime_name != "thread":
        pytest.skip("thread runtime only")
    rt = make_runtime(SandboxPolicy().replace(max_repeat_bytes=1 << 20))
    for code in ("str.ljust('a', 10**7)", "'a'.ljust(10**7)", "'a' * 10**7", "bytes(10**7)"):
        result = await rt.execute(code, tools, timeout=5)
        assert result.error_type == "ArithmeticLimitExceeded", code


async def test_subprocess_huge_value_is_a_clean_error(
    runtime: Any, runtime_name: str, tools: Any
) -> None:
    if runtime_name != "subprocess":
        pytest.skip("subprocess runtime only")
    result = await runtime.execute("'a' * (2 * 10**8)", tools, timeout=30)
    # the OS bounds memory (256 MiB default), not the size guards: the value is built,
    # then dropped from the result as too large to return
    assert (result.return_code, result.error, result.value) == (0, None, None), result
    assert result.truncated


async def test_subprocess_stopped_spare_worker_is_not_used(
    runtime: Any, runtime_name: str, tools: Any
) -> None:
    if runtime_name != "subprocess":
        pytest.skip("subprocess runtime only")
    await runtime.execute("print(1)", tools, timeout=5)  # pool warm
    me = psutil.Process()
    stopped = []
    for child in me.children(recursive=True):
        # a released worker may be gone by now (it is killed on the loop's next turn)
        with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
            if child.ppid() != me.pid:  # workers are children of the template
                os.kill(child.pid, signal.SIGSTOP)
                stopped.append(child.pid)
    assert stopped
    # a signal just sent may still be pending: the pool can only see a worker that is
    # stopped already (the test raced it on a loaded machine), so wait until it is
    deadline = time.monotonic() + 10
    for pid in stopped:
        with contextlib.suppress(psutil.NoSuchProcess):
            process = psutil.Process(pid)
            while process.status() != psutil.STATUS_STOPPED and time.monotonic() < deadline:
                time.sleep(0.005)
    try:
        # a stopped worker handed out would hang to the timeout; a fresh one may take
        # seconds to start on a loaded machine (the wait for it counts against the timeout)
        result = await runtime.execute("print(1)", tools, timeout=20)
        assert result.return_code == 0 and result.stdout == "1\n"
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


_NOT_IMPORTABLE = "import of {!r} is not allowed in the sandbox"
_SMALL = {"max_repeat_bytes": 1 << 20, "max_int_bits": 1 << 16}

# What a snippet must never do to the host, each on the guard that stops it first. The
# controls (``_proof``) are harmless versions of the same route: they reach the forbidden
# thing (os, a socket, a host file, a huge object, a child process) and print a marker.
LANGUAGE = by_id(
    [
        Attack(
            "os_module",
            'import os\nprint("reached", os.getpid() > 0)',
            1,
            "ImportError",
            _NOT_IMPORTABLE.format("os"),
            "import_allowlist",
            "reached True",
        ),
        Attack(
            "socket_module",
            'import socket\nprint("reached", socket.socket.__name__)',
            1,
            "ImportError",
            _NOT_IMPORTABLE.format("socket"),
            "import_allowlist",
            "reached socket",
        ),
        Attack(
            "open_host_file",
            'x = 1\nprint(open("/etc/passwd").read()[:5])',
            2,
            "NameError",
            "open() is not available in the sandbox: files are not accessible",
            "builtins",
            "root:",
        ),
        Attack(
            "B17_repeat_bomb",
            's = "a" * 10**7\nprint("built", len(s))',
            1,
            "ArithmeticLimitExceeded",
            "result size of '*' exceeded: 10,000,000 bytes > limit 1,048,576 bytes",
            "size",
            "built 10000000",
            policy=_SMALL,
        ),
        Attack(
            "B15_huge_pow",
            'x = 10 ** 100_000\nprint("built", x.bit_length())',
            1,
            "ArithmeticLimitExceeded",
            "result size of '**' exceeded: 332,192 bits > limit 65,536 bits",
            "size",
            "built 332193",
            policy=_SMALL,
        ),
        Attack(
            "fraction_pow",
            "import fractions\nx = fractions.Fraction(10) ** 100_000\n"
            'print("built", x.numerator.bit_length())',
            2,
            "ArithmeticLimitExceeded",
            "result size of '**' exceeded: 332,192 bits > limit 65,536 bits",
            "size",
            "built 332193",
            policy=_SMALL,
        ),
    ]
)
# B18 (int -> str of 10**5000) and unbounded recursion were dropped: CPython refuses
# both by itself (sys.set_int_max_str_digits, the recursion limit), proving no guard.
_SIZE_COMPILED_OUT = {"B17_repeat_bomb"}  # SubprocessRuntime: the OS bounds memory instead

# Trusted code in a worker (what a sandbox escape leaves): the OS walls.
WALLS = by_id(
    [
        Attack(
            "B22_fork",
            'import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nprint("forked", pid > 0)',
            2,
            "PolicyViolation",
            "creating a process is not allowed in the sandbox (audit event 'os.fork')",
            "audit",
            "forked True",
            trusted=True,
            also_off=("seccomp", "rlimits"),
        ),
        Attack(
            "network_socket",
            "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
            'print("socket", s.fileno() > 0)',
            2,
            "PolicyViolation",
            "creating a network socket is not allowed in the sandbox",
            "audit",
            "socket True",
            trusted=True,
            also_off=("seccomp",),
        ),
        Attack(
            "read_host_file",
            'x = 1\nprint(open("/etc/passwd").read()[:5])',
            2,
            "PermissionError",
            "Permission denied: '/etc/passwd'",
            "landlock",
            "root:",
            trusted=True,
        ),
        Attack(
            "B17_memory_bomb",
            's = bytearray(600 * 2**20)\nprint("allocated", len(s))',
            1,
            "MemoryLimitExceeded",
            "the code tried to use more than max_memory_bytes=268,435,456 bytes",
            "rlimits",
            "allocated 629145600",
            trusted=True,
            policy={"max_memory_bytes": 256 << 20},
        ),
    ]
)


@pytest.mark.parametrize("attack", sorted(LANGUAGE))
async def test_host_safety_attack_proves_its_guard(
    make_runtime: Any, runtime_name: str, attack: str
) -> None:
    proof = LANGUAGE[attack]
    if runtime_name == "subprocess" and attack in _SIZE_COMPILED_OUT:
        pytest.skip("size guards are compiled out in the subprocess runtime")
    assert_control(proof, LANGUAGE.values())
    runtime = make_runtime(proof.sandbox_policy())
    result = await runtime.execute(proof.code, TOOLS, timeout=30)
    assert_refused(proof, result)


@pytest.mark.parametrize("attack", sorted(WALLS))
async def test_worker_wall_proves_itself(attack: str) -> None:
    proof = WALLS[attack]
    assert_control(proof, WALLS.values())
    async with SubprocessRuntime(proof.sandbox_policy()) as runtime:
        result = await runtime.execute(proof.code, TOOLS, timeout=30)
    assert_refused(proof, result)


async def test_b14_infinite_loop_times_out(runtime: Any, tools: Any) -> None:
    start = time.monotonic()
    result = await runtime.execute("n = 0\nwhile True:\n    n += 1", tools, timeout=0.5)
    assert result.timed_out and time.monotonic() - start < 2.5


async def test_b24_output_flood_is_truncated(runtime: Any, tools: Any) -> None:
    result = await runtime.execute("for i in range(300000):\n    print(i)", tools, timeout=10)
    assert result.truncated and len(result.stdout) < 1_100_000


async def test_extreme_timeouts(runtime: Any, tools: Any) -> None:
    result = await runtime.execute("print(1)", tools, timeout=1e9)
    assert (result.return_code, result.stdout) == (0, "1\n"), result
    result = await runtime.execute("print(1)", tools, timeout=0.001)
    # a race by nature: it may finish in a millisecond (ThreadRuntime) or not
    if result.timed_out:
        assert result.error_type == "TimeoutError" and "0.001 seconds" in (result.error or "")
    else:
        assert (result.return_code, result.stdout) == (0, "1\n"), result


@pytest.mark.parametrize(
    ("code", "error_type", "message"),
    [
        ("print(1)\x00", "SyntaxError", "source code string cannot contain null bytes"),
        ("print('\udcff')", "UnicodeEncodeError", "surrogates not allowed"),
        ("x = 0" + "+1" * 50_000, "RecursionError", "maximum recursion depth exceeded"),
    ],
    ids=["nul", "surrogate", "deep_expression"],
)
async def test_nul_bytes_and_surrogates_in_code(
    runtime: Any, tools: Any, code: str, error_type: str, message: str
) -> None:
    """The same errors plain CPython gives, as clean results; the runtime still works."""
    result = await runtime.execute(code, tools, timeout=30)
    assert result.error_type == error_type and message in (result.error or ""), result
    result = await runtime.execute("print(2)", tools, timeout=30)
    assert result.stdout == "2\n"


NET_DEVICES = (
    "names = [line.split(':')[0].strip() for line in open('/proc/self/net/dev')][2:]\n"
    "print(sorted(names))"
)


async def test_worker_sees_no_host_network_interface() -> None:
    """The network namespace: trusted code in a worker sees only its own loopback device
    (the control, with the namespaces off, sees the host's interfaces)."""
    proof = Attack(
        "net_devices", NET_DEVICES, 2, "", "", "namespaces", "", trusted=True, runtime="subprocess"
    )
    control, error = control_output(proof)
    assert error is None, error
    if control == "['lo']\n":
        pytest.skip("this machine has no network interface but loopback")
    async with SubprocessRuntime(SandboxPolicy.trusted()) as runtime:
        result = await runtime.execute(NET_DEVICES, TOOLS, timeout=30)
    assert (result.stdout, result.error) == ("['lo']\n", None), result


async def test_dir_fd_write_outside_the_workdir(tmp_path: Any) -> None:
    """Trusted code in a worker: the audit hook refuses the directory outside; without it,
    Landlock, and without Landlock seccomp's dir_fd confinement (the control turns all three
    off and the file is written; the worker runs as nobody, hence a world-writable dir)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    outside.chmod(0o777)
    tmp_path.chmod(0o755)
    code = (
        f"import os\nd = os.open({str(outside)!r}, os.O_RDONLY)\n"
        'os.close(os.open("pwned", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d))\n'
        "print('WROTE', sorted(os.listdir(d)))"
    )
    proof = Attack(
        "dir_fd_write",
        code,
        2,
        "PolicyViolation",
        f"opening the directory {str(outside)!r} (outside the working directory) is not "
        "allowed in the sandbox (audit event 'open')",
        "audit",
        "WROTE ['pwned']",
        trusted=True,
        also_off=("landlock", "seccomp"),
    )
    assert_control(proof)
    (outside / "pwned").unlink()
    async with SubprocessRuntime(proof.sandbox_policy()) as runtime:
        assert_refused(proof, await runtime.execute(code, TOOLS, timeout=30))
    assert not list(outside.iterdir())

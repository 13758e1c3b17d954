"""What the template prepares once for its workers: namespaces they share
(worker/_namespaces.py) and a Landlock ruleset per worker (worker/_landlock.py).

Workers of one template share one network, IPC and UTS namespace (none of them the
host's). Two executions running at once in two such workers try to reach each other
through what a shared namespace would carry: an abstract Unix socket (network) and a
SysV shared-memory segment (IPC). Each attempt runs twice with trusted code and the
audit hook off (it refuses ``socket.bind``/``sendto`` first, which would hide the wall
under test): once with the wall that makes sharing safe switched off (the positive
control: the attempt reaches the other execution) and once with it on (the wall's own
``EPERM`` on the targeted line).
"""

from __future__ import annotations

import asyncio
import errno
import os
import textwrap
import uuid
from typing import Any

import pytest

from ptcbox import SubprocessRuntime
from ptcbox.projections import DirectProjection
from ptcbox.runtimes.subprocess.worker._landlock import landlock_abi, read_paths
from ptcbox.runtimes.subprocess.worker._namespaces import SharedNamespaces, check_shared_walls
from ptcbox.runtimes.subprocess.worker._seccomp import process_filter_supported
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.xdist_group("shared_namespaces")

ROOT = os.geteuid() == 0
NAMESPACES = ("uts", "ipc", "net")
X86 = os.uname().machine == "x86_64"
SHMGET, SHMCTL = (29, 31) if X86 else (194, 195)
needs_sharing = pytest.mark.skipif(
    not (ROOT and process_filter_supported() and landlock_abi() >= 6),
    reason="namespaces are shared only as root, with seccomp and Landlock ABI 6",
)

# Execution A: opens a channel (a socket pair has no socket() call to refuse; its end,
# bound to a name and disconnected, receives from any sender) and waits (polling the
# host's `b_done` tool) for B's message; returns what came, or None once B has given up.
LISTENER = """
import ctypes, socket
a, _peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
a.bind(NAME)  # an abstract name in the (shared) network namespace
unspec = (ctypes.c_ushort * 8)()  # connect(AF_UNSPEC): no peer, so anyone may send to it
assert ctypes.CDLL(None).connect(a.fileno(), unspec, 16) == 0
a.settimeout(0.05)
opened()
got = None
for _ in range(2000):
    try:
        got = a.recv(100).decode()
        break
    except TimeoutError:
        if b_done():
            break
got
"""
# Execution B: sends to A's name once A has bound it; returns what the send did.
SENDER = """
import socket, time
b, _peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
wait_opened()
verdict = None
for _ in range(2000):
    try:
        b.sendto(b"hello from B", NAME)
        verdict = "sent"
        break
    except ConnectionRefusedError:  # not bound yet
        time.sleep(0.01)
    except PermissionError as exc:  # the targeted line, refused
        verdict = "EPERM" if exc.errno == 1 else repr(exc)
        break
b_finished()
verdict
"""
SHM_OWNER = """
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ident = libc.syscall(SHMGET, KEY, 4096, 0o1600)  # IPC_CREAT | 0600
made = ident if ident >= 0 else -ctypes.get_errno()
opened()
while ident >= 0 and not b_done():
    time.sleep(0.01)
if ident >= 0:
    libc.syscall(SHMCTL, ident, 0, 0)  # IPC_RMID
made
"""
SHM_FINDER = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
wait_opened()
ident = libc.syscall(SHMGET, KEY, 0, 0)  # find A's segment by its key
found = ident if ident >= 0 else -ctypes.get_errno()
b_finished()
found
"""


def _tools(opened: asyncio.Event, b_done: asyncio.Event) -> dict[str, DirectProjection]:
    shared: list[str] = []

    async def wait_opened() -> str | None:
        await asyncio.wait_for(opened.wait(), 30)
        return shared[0] if shared else None

    def publish(text: str) -> None:
        shared.append(text)
        opened.set()

    fns: dict[str, Any] = {
        "opened": opened.set,
        "publish": publish,
        "wait_opened": wait_opened,
        "b_done": b_done.is_set,
        "b_finished": b_done.set,
    }
    return {name: DirectProjection(name=name, fn=fn) for name, fn in fns.items()}


async def _pair(ablate: str, first: str, second: str, **names: object) -> tuple[Any, Any]:
    """Run ``first`` (A) and ``second`` (B) at once in two workers of one template."""
    opened, b_done = asyncio.Event(), asyncio.Event()
    prefix = "".join(f"{name} = {value!r}\n" for name, value in names.items())
    tools = _tools(opened, b_done)
    runtime = SubprocessRuntime(
        SandboxPolicy.trusted(), env={"PTCBOX_TEST_ABLATE": ablate}, max_workers=2
    )
    async with runtime:
        a, b = await asyncio.gather(
            runtime.execute(prefix + textwrap.dedent(first), tools, timeout=60),
            runtime.execute(prefix + textwrap.dedent(second), tools, timeout=60),
        )
    assert a.ok, a.error
    assert b.ok, b.error
    return a.value, b.value


@needs_sharing
@pytest.mark.anyio
async def test_workers_of_one_template_share_namespaces_that_are_not_the_hosts() -> None:
    code = 'import os\n[os.readlink(f"/proc/self/ns/{ns}") for ns in ("uts", "ipc", "net")]'
    host = [os.readlink(f"/proc/self/ns/{ns}") for ns in NAMESPACES]
    async with SubprocessRuntime(SandboxPolicy.trusted()) as runtime:
        first = await runtime.execute(code, {})
        second = await runtime.execute(code, {})
    assert first.ok and second.ok, (first.error, second.error)
    assert first.value == second.value  # one set, made by the template
    assert all(mine != theirs for mine, theirs in zip(first.value, host, strict=True))


@needs_sharing
@pytest.mark.anyio
async def test_an_abstract_unix_socket_of_one_execution_is_out_of_reach_of_another() -> None:
    name = "\0ptcbox-test-" + uuid.uuid4().hex
    control = await _pair("audit,landlock", LISTENER, SENDER, NAME=name)
    assert control == ("hello from B", "sent")  # without Landlock's scope: B reaches A
    walled = await _pair("audit", LISTENER, SENDER, NAME=name)
    assert walled == (None, "EPERM")  # Landlock's own refusal on B's sendto


@needs_sharing
@pytest.mark.anyio
async def test_a_sysv_segment_of_one_execution_is_out_of_reach_of_another() -> None:
    key = int.from_bytes(os.urandom(3), "big") + 1
    made, found = await _pair("audit,seccomp", SHM_OWNER, SHM_FINDER, KEY=key, **_SHM)
    assert made >= 0 and found == made  # without the filter: B opens A's segment
    made, found = await _pair("audit", SHM_OWNER, SHM_FINDER, KEY=key, **_SHM)
    assert (made, found) == (-errno.EPERM, -errno.EPERM)  # seccomp's own refusal


_SHM = {"SHMGET": SHMGET, "SHMCTL": SHMCTL}


# Execution A publishes its working directory and, once B is done, lists it.
DIR_OWNER = """
import os, time
publish(os.getcwd())
while not b_done():
    time.sleep(0.01)
sorted(os.listdir("."))
"""
# Execution B writes into A's directory (same user, `nobody`: only Landlock parts them).
DIR_INTRUDER = """
path = wait_opened()
try:
    with open(path + "/from_b", "w") as f:
        f.write("B was here")
    verdict = "written"
except PermissionError as exc:
    verdict = "EACCES" if exc.errno == 13 else repr(exc)
b_finished()
verdict
"""


@pytest.mark.skipif(not (ROOT and landlock_abi() >= 1), reason="needs root and Landlock")
@pytest.mark.anyio
async def test_the_ruleset_the_template_makes_for_a_worker_is_that_workers_alone() -> None:
    """The template builds each worker's Landlock ruleset before the fork (with that
    worker's directory in it); a sibling's directory stays out of reach."""
    control = await _pair("audit,landlock", DIR_OWNER, DIR_INTRUDER)
    assert control == (["from_b"], "written")  # without Landlock: B writes into A's dir
    walled = await _pair("audit", DIR_OWNER, DIR_INTRUDER)
    assert walled == ([], "EACCES")  # Landlock's own refusal on B's open


@needs_sharing
@pytest.mark.anyio
async def test_a_worker_cannot_rename_the_shared_host_name() -> None:
    """The UTS namespace's wall is giving up root: no CAP_SYS_ADMIN (its own control,
    with the capability, is ``test_ipc_and_uts_namespaces_alone``)."""
    code = textwrap.dedent("""
        import socket
        try:
            socket.sethostname("ptcbox-shared")
            verdict = "renamed"
        except PermissionError as exc:
            verdict = exc.errno
        [verdict, socket.gethostname()]
    """)
    async with SubprocessRuntime(SandboxPolicy.trusted(), env={"PTCBOX_TEST_ABLATE": "audit"}) as r:
        first = await r.execute(code, {})
        second = await r.execute("import socket\nsocket.gethostname()", {})
    assert first.ok and second.ok, (first.error, second.error)
    assert first.value[0] == errno.EPERM
    assert second.value == first.value[1] != "ptcbox-shared"


@pytest.mark.parametrize(
    ("shared", "walls", "refused"),
    [
        (
            SharedNamespaces(),
            {"dropped_root": False, "landlocked": False, "filtered": False},
            False,
        ),
        (
            SharedNamespaces(ipc_uts=True),
            {"dropped_root": True, "landlocked": False, "filtered": True},
            False,
        ),
        (
            SharedNamespaces(ipc_uts=True),
            {"dropped_root": True, "landlocked": True, "filtered": False},
            True,
        ),
        (
            SharedNamespaces(ipc_uts=True),
            {"dropped_root": False, "landlocked": True, "filtered": True},
            True,
        ),
        (
            SharedNamespaces(network=True, ipc_uts=True),
            {"dropped_root": True, "landlocked": False, "filtered": True},
            True,
        ),
        (
            SharedNamespaces(network=True, ipc_uts=True),
            {"dropped_root": True, "landlocked": True, "filtered": True},
            False,
        ),
    ],
)
def test_a_worker_without_a_wall_of_the_shared_namespaces_does_not_run(
    shared: SharedNamespaces, walls: dict[str, bool], refused: bool
) -> None:
    if refused:
        with pytest.raises(OSError, match="shared with other workers"):
            check_shared_walls(shared, **walls)
    else:
        check_shared_walls(shared, **walls)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.skipif(not (ROOT and landlock_abi() >= 1), reason="needs root and Landlock")
@pytest.mark.anyio
async def test_a_worker_holds_none_of_the_templates_rule_descriptors() -> None:
    """The template holds the readable paths open and makes a ruleset per worker; a
    worker keeps neither (control: the template itself holds both kinds while forking)."""
    code = textwrap.dedent("""
        import os
        fds = os.listdir("/proc/self/fd")
        links = []
        for name in fds:
            try:
                links.append(os.readlink(f"/proc/self/fd/{name}"))
            except OSError:
                pass
        links
    """)
    async with SubprocessRuntime(
        SandboxPolicy.trusted(), env={"PTCBOX_TEST_ABLATE": "audit"}
    ) as runtime:
        result = await runtime.execute(code, {})
        template = runtime._pool._proc.pid
        held = [os.readlink(f"/proc/{template}/fd/{n}") for n in os.listdir(f"/proc/{template}/fd")]
    assert result.ok, result.error
    assert set(held) & set(read_paths())  # the control: the template holds them
    unexpected = [
        link
        for link in result.value
        if link != "/dev/null" and not link.startswith(("socket:", "/proc/"))
    ]
    assert unexpected == [], result.value  # 0-2, its socket and listdir's own descriptor

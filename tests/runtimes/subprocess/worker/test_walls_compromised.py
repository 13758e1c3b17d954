"""Kernel walls that hold once a worker is compromised (issue 13, item 8).

Each wall is tested on its own in a fresh interpreter, the attempt made once before the
wall (the positive control: it works) and once behind it (refused), then all of them
through the runtime with trusted code (no sandbox guards). Stand-in for a compromised
worker: a fresh interpreter calling the wall's function directly, or raw system calls.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ptcbox.runtimes.subprocess.worker._seccomp import process_filter_supported

X86 = os.uname().machine == "x86_64"
MSGGET, MSGCTL, SHMGET, SHMCTL = (68, 71, 29, 31) if X86 else (186, 187, 194, 195)
PREAMBLE = """
import ctypes, errno, fcntl, os, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def check(name, action):  # the verdict: ALLOWED, or the error's errno name
    try:
        action()
    except OSError as exc:
        print(name, errno.errorcode.get(exc.errno, exc.errno))
    else:
        print(name, "ALLOWED")
def raw(*args):
    result = libc.syscall(*args)
    if result < 0:
        raise OSError(ctypes.get_errno(), "refused")
    return result
def sysv(get, ctl, *args):  # make an object and remove it at once (nothing left behind)
    ident = raw(get, 0, *args)  # IPC_PRIVATE
    raw(ctl, ident, 0, 0)  # IPC_RMID
def same_flags(path):  # FS_IOC_GETFLAGS then FS_IOC_SETFLAGS with the same flags
    fd = os.open(path, os.O_RDONLY)
    try:
        flags = bytearray(8)
        fcntl.ioctl(fd, 0x80086601, flags)
        fcntl.ioctl(fd, 0x40086602, bytes(flags))
    finally:
        os.close(fd)
"""


def _run(script: str) -> dict[str, str]:
    source = textwrap.dedent(PREAMBLE) + textwrap.dedent(script)
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    verdicts: dict[str, str] = {}
    for line in done.stdout.splitlines():
        name, verdict, *_ = line.split()
        verdicts[name] = verdict
    return verdicts


@pytest.mark.skipif(not process_filter_supported(), reason="no seccomp filter for this CPU")
@pytest.mark.parametrize("network", [False, True])
def test_seccomp_refuses_sockets_sysv_ipc_and_immutable_flags(
    tmp_path: Path, network: bool
) -> None:
    listener = socket.socket(socket.AF_UNIX)
    path = str(tmp_path / "host.sock")  # stands in for docker.sock, D-Bus, a database
    listener.bind(path)
    listener.listen()
    target = tmp_path / "file"
    target.write_text("x")
    attempts = f"""
        def unix_connect():
            with socket.socket(socket.AF_UNIX) as s:
                s.connect({path!r})
        def new(family, kind=socket.SOCK_STREAM, proto=0):
            return lambda: socket.socket(family, kind, proto).close()
        check("unix_connect" + SUFFIX, unix_connect)
        check("udp" + SUFFIX, new(socket.AF_INET, socket.SOCK_DGRAM))
        check("tcp6" + SUFFIX, new(socket.AF_INET6))
        check("netlink" + SUFFIX, new(socket.AF_NETLINK, socket.SOCK_RAW))
        check("packet" + SUFFIX, new(17, socket.SOCK_RAW))
        check("msgget" + SUFFIX, lambda: sysv({MSGGET}, {MSGCTL}, 0o1600))
        check("shmget" + SUFFIX, lambda: sysv({SHMGET}, {SHMCTL}, 4096, 0o1600))
        check("setflags" + SUFFIX, lambda: same_flags({str(target)!r}))
        check("socketpair" + SUFFIX, lambda: [s.close() for s in socket.socketpair()])
    """
    try:
        verdicts = _run(
            f"""
            from ptcbox.runtimes.subprocess.worker._seccomp import forbid_process_creation
            SUFFIX = "_before"
            {textwrap.indent(textwrap.dedent(attempts), " " * 12).strip()}
            forbid_process_creation(network={network})
            SUFFIX = "_after"
            {textwrap.indent(textwrap.dedent(attempts), " " * 12).strip()}
            """
        )
    finally:
        listener.close()
    # The controls: before the filter, in the same process, every attempt works (a packet
    # socket needs CAP_NET_RAW, immutable flags a file system that has them).
    controlled = ["unix_connect", "udp", "tcp6", "netlink", "msgget", "shmget", "socketpair"]
    controlled += ["packet"] if os.geteuid() == 0 else []
    controlled += ["setflags"] if verdicts["setflags_before"] == "ALLOWED" else []
    for name in controlled:
        assert verdicts[f"{name}_before"] == "ALLOWED", (name, verdicts)
    # Behind the filter: seccomp's own EPERM (nothing else changed in between).
    allowed_after = {"socketpair"} | ({"udp", "tcp6"} if network else set())
    for name in controlled:
        expected = "ALLOWED" if name in allowed_after else "EPERM"
        assert verdicts[f"{name}_after"] == expected, (name, verdicts)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (unshare without a user namespace)")
def test_ipc_and_uts_namespaces_alone() -> None:
    """A private host name and IPC namespace: the host's are untouched (control: before
    the unshare the process shares the host's namespaces)."""
    verdicts = _run(
        """
        from ptcbox.runtimes.subprocess.worker._rlimits import unshare_ipc_uts
        host = {ns: os.readlink(f"/proc/self/ns/{ns}") for ns in ("uts", "ipc")}
        parent = {ns: os.readlink(f"/proc/{os.getppid()}/ns/{ns}") for ns in ("uts", "ipc")}
        print("shared_before", "ALLOWED" if host == parent else "refused")
        unshare_ipc_uts()
        mine = {ns: os.readlink(f"/proc/self/ns/{ns}") for ns in ("uts", "ipc")}
        print("own_uts", "ALLOWED" if mine["uts"] != host["uts"] else "refused")
        print("own_ipc", "ALLOWED" if mine["ipc"] != host["ipc"] else "refused")
        check("sethostname", lambda: socket.sethostname("ptcbox-worker"))
        print("name_here", "ALLOWED" if socket.gethostname() == "ptcbox-worker" else "refused")
        """
    )
    assert all(verdict == "ALLOWED" for verdict in verdicts.values()), verdicts
    assert socket.gethostname() != "ptcbox-worker"  # the host's name is unchanged


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_dropping_root_alone(tmp_path: Path) -> None:
    """As root a worker gives up root: no uid 0, no capabilities (at most
    CAP_DAC_READ_SEARCH to read its code); control: before the drop, root writes a
    root-owned file and changes the bounding set."""
    owned = tmp_path / "root-owned"
    owned.write_text("")
    owned.chmod(0o644)
    work = tmp_path / "work"
    work.mkdir()
    verdicts = _run(
        f"""
        from ptcbox.runtimes.subprocess.worker._privileges import drop_root
        from ptcbox.runtimes.subprocess.worker._setup import code_dirs as _code_dirs
        def append():
            with open({str(owned)!r}, "a") as f:
                f.write("x")
        def caps():  # any capability beyond CAP_DAC_READ_SEARCH
            status = open("/proc/self/status").read()
            effective = int(status.split("CapEff:")[1].split()[0], 16)
            return "ALLOWED" if effective & ~0x4 else "none"
        check("write_root_file_before", append)
        print("capabilities_before", caps())
        os.chdir({str(work)!r})
        print("dropped", "ALLOWED" if drop_root({str(work)!r}, _code_dirs()) else "refused")
        print("uid", "ALLOWED" if os.getresuid() == (65534,) * 3 else "refused")
        print("gid", "ALLOWED" if os.getresgid() == (65534,) * 3 else "refused")
        check("write_root_file_after", append)
        print("capabilities_after", caps())
        bounding = int(open("/proc/self/status").read().split("CapBnd:")[1].split()[0], 16)
        print("bounding_after", "ALLOWED" if bounding & ~0x4 else "none")  # dropped here
        check("chown", lambda: os.chown("x", 0, 0) if open("x", "w") else None)
        check("workdir", lambda: open(os.path.join({str(work)!r}, "y"), "w").close())
        import decimal, json, zoneinfo  # code still loads
        print("imports", "ALLOWED")
        """
    )
    assert verdicts == {
        "write_root_file_before": "ALLOWED",
        "capabilities_before": "ALLOWED",
        "dropped": "ALLOWED",
        "uid": "ALLOWED",
        "gid": "ALLOWED",
        "write_root_file_after": "EACCES",  # the file's mode, now that root is gone
        "capabilities_after": "none",
        "bounding_after": "none",
        "chown": "EPERM",
        "workdir": "ALLOWED",
        "imports": "ALLOWED",
    }
    assert owned.read_text() == "x"  # only the control wrote


@pytest.mark.skipif(os.geteuid() != 0, reason="the host runs as root in this check")
@pytest.mark.anyio
async def test_a_worker_of_a_root_host_is_unprivileged_in_its_own_namespaces() -> None:
    """All together in real workers (trusted code, the audit hook still on): not root,
    no capability but CAP_DAC_READ_SEARCH, private uts/ipc/net namespaces (the default
    ``network=None``), and its working directory and temporary files still work."""
    from ptcbox import SubprocessRuntime
    from ptcbox.sandbox import SandboxPolicy

    code = textwrap.dedent("""
        import os, tempfile
        status = open("/proc/self/status").read()
        effective = int(status.split("CapEff:")[1].split()[0], 16)
        with tempfile.NamedTemporaryFile(dir=os.environ["TMPDIR"]) as f:
            f.write(b"x")
        open("here.txt", "w").write("ok")
        [os.getresuid(), os.getresgid(), effective & ~0x4,
         [os.readlink(f"/proc/self/ns/{ns}") for ns in ("uts", "ipc", "net")],
         open("here.txt").read()]
    """)
    host = [os.readlink(f"/proc/self/ns/{ns}") for ns in ("uts", "ipc", "net")]
    async with SubprocessRuntime(SandboxPolicy.trusted()) as runtime:
        result = await runtime.execute(code, {})
    assert result.ok, result.error
    uids, gids, other_caps, namespaces, text = result.value
    assert uids == [65534] * 3 and gids == [65534] * 3 and other_caps == 0
    assert namespaces[0] != host[0] and namespaces[1] != host[1]  # uts, ipc
    assert namespaces[2] != host[2]  # net: where the kernel allows, by default
    assert text == "ok"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

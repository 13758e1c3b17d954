"""The seccomp filter of a SubprocessRuntime worker process (Linux, x86-64 and arm64).

:func:`forbid_process_creation` installs a seccomp-BPF filter that makes ``fork``,
``vfork``, ``clone`` without ``CLONE_THREAD``, ``execve`` and ``execveat`` fail with
``EPERM`` (``clone3`` with ``ENOSYS``, so the C library falls back to ``clone`` for
threads), and also ``ptrace``, ``process_vm_readv``, signals to other processes, mounts,
namespaces, ``open_by_handle_at``, ``bpf``, ``io_uring`` and similar (see there).
``RLIMIT_NPROC`` (:mod:`ptcbox.runtimes.subprocess.worker._rlimits`) does not bind a
process whose real user is root; this filter does, for every user. The filter is the
classic seccomp pattern of the Linux kernel's
``Documentation/userspace-api/seccomp_filter.rst``.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import struct
from dataclasses import dataclass

from ptcbox.runtimes.subprocess.worker._rlimits import check_call, load_libc, set_no_new_privs

__all__ = ["forbid_process_creation", "prepare_filters", "process_filter_supported"]

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_CLONE_THREAD = 0x10000

# classic BPF opcodes and seccomp return values
_LD_ABS_W, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_RET_ALLOW, _RET_EPERM, _RET_ENOSYS = 0x7FFF0000, 0x00050001, 0x00050026
_AT_FDCWD = 0xFFFFFF9C  # -100 as the low 32 bits of an argument
_REFUSED_PRCTL = (1, 4, 8, 28, 35, 36, 47, 0x59616D61)  # PDEATHSIG DUMPABLE KEEPCAPS
# SECUREBITS MM CHILD_SUBREAPER CAP_AMBIENT PTRACER: changes that weaken the worker's walls
_REFUSED_FCNTL = (8, 10, 15)  # F_SETOWN F_SETSIG F_SETOWN_EX: SIGIO/SIGURG to any process
_REFUSED_IOCTL = (0x8901, 0x8902, 0x40086602, 0x40046602, 0x401C5820)
# FIOSETOWN SIOCSPGRP: the same through ioctl | FS_IOC_SETFLAGS FS_IOC32_SETFLAGS
# FS_IOC_FSSETXATTR: chattr +i/+a, files that would survive the working directory's removal
_AF_INET, _AF_INET6 = 2, 10  # the only socket() families, and only with network access
_MACHINE = platform.machine()  # read once, at import (in the template)


class _Program(ctypes.Structure):
    """``struct sock_fprog``; made once at import (in the template): a ``ctypes``
    structure class costs ~0.1 ms to create, in every worker when made per call."""

    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@dataclass(frozen=True, slots=True)
class _Table:
    arch: int
    clone: int
    clone3: int
    prctl: int
    openat2: int
    fcntl: int
    ioctl: int
    socket: int
    refused: tuple[int, ...]  # EPERM always
    signals: tuple[int, ...]  # EPERM unless the first argument is this process (or 0)
    dirfd: tuple[tuple[int, tuple[int, ...]], ...]  # (syscall, dirfd argument indices)


_SYSCALLS = {
    "x86_64": _Table(
        arch=0xC000003E,
        clone=56,
        clone3=435,
        prctl=157,
        openat2=437,
        fcntl=72,
        ioctl=16,
        socket=41,
        # fork vfork execve execveat | ptrace process_vm_readv/writev kcmp pidfd_getfd
        # pidfd_send_signal tkill | name_to_handle_at open_by_handle_at | mount umount2
        # pivot_root chroot unshare setns open_tree move_mount fsopen fsconfig fsmount
        # fspick mount_setattr | bpf perf_event_open userfaultfd io_uring_* keyctl
        # add_key request_key personality kexec_* *_module swapon swapoff reboot iopl
        # ioperm acct settimeofday clock_settime adjtimex clock_adjtime syslog vhangup
        # mknod mknodat quotactl | setpriority ioprio_set process_madvise | SysV IPC
        # (shm*, sem*, msg*: objects that outlive the worker) and POSIX message queues
        refused=(
            *(57, 58, 59, 322),
            *(101, 310, 311, 312, 438, 424, 200),
            *(141, 251, 440),
            *(303, 304),
            *(165, 166, 155, 161, 272, 308, 428, 429, 430, 431, 432, 433, 442),
            *(321, 298, 323, 425, 426, 427, 250, 248, 249, 135, 246, 320, 175, 313, 176),
            *(167, 168, 169, 172, 173, 163, 164, 227, 159, 305, 103, 153, 133, 259, 179),
            *(29, 30, 31, 64, 65, 66, 67, 68, 69, 70, 71, 220, 240, 241, 242, 243, 244, 245),
        ),
        # kill tgkill rt_sigqueueinfo rt_tgsigqueueinfo | sched_setaffinity
        # sched_setscheduler sched_setparam sched_setattr migrate_pages move_pages prlimit64
        signals=(62, 234, 129, 297, 203, 144, 142, 314, 256, 279, 302),
        # openat mkdirat unlinkat fchownat utimensat fchmodat fchmodat2 | symlinkat |
        # renameat renameat2 linkat
        dirfd=(
            *((n, (0,)) for n in (257, 258, 263, 260, 280, 268, 452)),
            (266, (1,)),
            *((n, (0, 2)) for n in (264, 316, 265)),
        ),
    ),
    "aarch64": _Table(
        arch=0xC00000B7,
        clone=220,
        clone3=435,
        prctl=167,
        openat2=437,
        fcntl=25,
        ioctl=29,
        socket=198,
        refused=(
            *(221, 281),
            *(117, 270, 271, 272, 438, 424, 130),
            *(140, 30, 440),
            *(264, 265),
            *(40, 39, 41, 51, 97, 268, 428, 429, 430, 431, 432, 433, 442),
            *(280, 241, 282, 425, 426, 427, 219, 217, 218, 92, 104, 294, 105, 273, 106),
            *(224, 225, 142, 89, 170, 112, 171, 266, 116, 58, 33, 60),
            *range(186, 198),
            *range(180, 186),
        ),
        signals=(129, 131, 138, 240, 122, 119, 118, 274, 238, 239, 261),
        dirfd=(
            *((n, (0,)) for n in (56, 34, 35, 54, 88, 53, 452)),
            (36, (1,)),
            *((n, (0, 2)) for n in (38, 276, 37)),
        ),
    ),
}


def _process_filter(
    machine: str, pid: int, confine_dirfd: bool, network: bool = False
) -> tuple[bytes, int]:
    """The filter program of process ``pid`` and its length (see :func:`_patched_program`)."""
    program = _patched_program(machine, pid, confine_dirfd, network)
    return _program_for(machine, confine_dirfd, network)[0].raw, program.len


def _patched_program(machine: str, pid: int, confine_dirfd: bool, network: bool) -> _Program:
    """The ``sock_fprog`` of process ``pid``: the one made for these options (in the
    template, before the fork), with ``pid`` written into the two instructions that
    name it, in place. A worker so writes 8 bytes instead of building the program: in a
    freshly forked process every object made or first touched costs copy-on-write
    faults (~0.6 ms for the copy, the patch and the ``ctypes`` objects)."""
    buffer, program, at = _program_for(machine, confine_dirfd, network)
    struct.pack_into("=I", buffer, 8 * at[0] + 4, pid)
    struct.pack_into("=I", buffer, 8 * at[1] + 4, -pid & 0xFFFFFFFF)
    return program


@functools.cache
def _program_for(
    machine: str, confine_dirfd: bool, network: bool
) -> tuple[ctypes.Array[ctypes.c_char], _Program, tuple[int, int]]:
    """The program for pid 0 in a ``ctypes`` buffer, its ``sock_fprog``, and where
    ``pid`` and ``-pid`` go."""
    code, length, at = _filter_for(machine, confine_dirfd, network)
    buffer = ctypes.create_string_buffer(code, len(code))
    return buffer, _Program(length, ctypes.addressof(buffer)), at


def prepare_filters() -> None:
    """Build every filter variant of this machine once (the template, before it forks)."""
    for confine_dirfd in (False, True):
        for network in (False, True):
            _program_for(_MACHINE, confine_dirfd, network)


@functools.cache
def _filter_for(
    machine: str, confine_dirfd: bool, network: bool
) -> tuple[bytes, int, tuple[int, int]]:
    """The program for pid 0, its length, and where ``pid`` and ``-pid`` go."""
    return _build_filter(machine, 0, confine_dirfd, network)


def _build_filter(
    machine: str, pid: int, confine_dirfd: bool, network: bool
) -> tuple[bytes, int, tuple[int, int]]:
    """The program of process ``pid``, its length, and the indices of the two
    instructions that hold ``pid`` and ``-pid``."""
    table = _SYSCALLS[machine]
    # (opcode, k, jump-if-true label, jump-if-false label); None = next instruction
    program: list[tuple[int, int, str | None, str | None]] = [
        (_LD_ABS_W, 4, None, None),  # seccomp_data.arch
        (_JEQ_K, table.arch, None, "deny"),  # another ABI (e.g. int 0x80): refuse everything
        (_LD_ABS_W, 0, None, None),  # seccomp_data.nr
    ]
    if machine == "x86_64":
        program.append((_JGE_K, 0x40000000, "deny", None))  # the x32 ABI
    program.append((_JEQ_K, table.clone3, "nosys", None))
    program.append((_JEQ_K, table.clone, "clone", None))
    program.extend((_JEQ_K, number, "deny", None) for number in table.refused)
    program.extend((_JEQ_K, number, "signal", None) for number in table.signals)
    program.append((_JEQ_K, table.prctl, "prctl", None))
    program.append((_JEQ_K, table.fcntl, "fcntl", None))
    program.append((_JEQ_K, table.ioctl, "ioctl", None))
    program.append((_JEQ_K, table.socket, "socket", None))
    dirfd_blocks: dict[str, tuple[int, ...]] = {}
    if confine_dirfd:
        program.append((_JEQ_K, table.openat2, "nosys", None))
        for number, indices in table.dirfd:
            label = "dirfd" + "_".join(map(str, indices))
            dirfd_blocks[label] = indices
            program.append((_JEQ_K, number, label, None))
    labels: dict[str, int] = {}
    program.append((_RET_K, _RET_ALLOW, None, None))
    labels["clone"] = len(program)
    program.append((_LD_ABS_W, 16, None, None))  # low 32 bits of the flags argument
    program.append((_JSET_K, _CLONE_THREAD, "allow", "deny"))
    labels["signal"] = len(program)  # kill(pid, ...) and friends: only this process
    program.append((_LD_ABS_W, 16, None, None))
    at = (len(program), len(program) + 2)  # pid and -pid: patched per process
    for target in (pid, 0, -pid & 0xFFFFFFFF):
        program.append((_JEQ_K, target, "allow", None))
    program.append((_RET_K, _RET_EPERM, None, None))
    labels["prctl"] = len(program)
    program.append((_LD_ABS_W, 16, None, None))
    program.extend((_JEQ_K, option, "deny", None) for option in _REFUSED_PRCTL)
    program.append((_RET_K, _RET_ALLOW, None, None))
    for label, refused in (("fcntl", _REFUSED_FCNTL), ("ioctl", _REFUSED_IOCTL)):
        labels[label] = len(program)  # their second argument: the command
        program.append((_LD_ABS_W, 24, None, None))
        program.extend((_JEQ_K, command, "deny", None) for command in refused)
        program.append((_RET_K, _RET_ALLOW, None, None))
    labels["socket"] = len(program)  # its first argument: the family
    program.append((_LD_ABS_W, 16, None, None))
    if network:
        program.append((_JEQ_K, _AF_INET, "allow", None))
        program.append((_JEQ_K, _AF_INET6, "allow", None))
    program.append((_RET_K, _RET_EPERM, None, None))
    for label, indices in dirfd_blocks.items():  # relative to the working directory only
        labels[label] = len(program)
        for position, index in enumerate(indices):
            program.append((_LD_ABS_W, 16 + 8 * index, None, None))
            last = position == len(indices) - 1
            program.append((_JEQ_K, _AT_FDCWD, "allow" if last else None, "deny"))
    labels["deny"] = len(program)
    program.append((_RET_K, _RET_EPERM, None, None))
    labels["nosys"] = len(program)
    program.append((_RET_K, _RET_ENOSYS, None, None))
    labels["allow"] = len(program)  # every jump is forward: the shared exits come last
    program.append((_RET_K, _RET_ALLOW, None, None))

    def offset(label: str | None, index: int) -> int:
        if label is None:
            return 0
        jump = labels[label] - index - 1
        if not 0 <= jump <= 255:  # pragma: no cover - a programming error
            raise ValueError(f"seccomp jump to {label} out of range: {jump}")
        return jump

    code = b"".join(
        struct.pack("=HBBI", op, offset(true, index), offset(false, index), k)
        for index, (op, k, true, false) in enumerate(program)
    )
    return code, len(program), at


def process_filter_supported() -> bool:
    """Whether :func:`forbid_process_creation` knows this machine's system calls."""
    return _MACHINE in _SYSCALLS


def forbid_process_creation(*, confine_dirfd: bool = False, network: bool = False) -> None:
    """Install the worker's seccomp filter. Irreversible for this process.

    Refused with ``EPERM`` (threads still allowed):

    - new processes and programs: ``fork``, ``vfork``, ``clone`` without
      ``CLONE_THREAD``, ``execve``, ``execveat`` (``clone3`` gets ``ENOSYS``, so the C
      library falls back to ``clone`` for threads);
    - access to other processes: ``ptrace``, ``process_vm_readv``/``writev``, ``kcmp``,
      ``pidfd_getfd``, ``pidfd_send_signal``, ``process_madvise``, ``tkill``,
      ``setpriority``, ``ioprio_set``; ``kill``/``tgkill``/``rt_(tg)sigqueueinfo``,
      ``sched_setaffinity``/``setscheduler``/``setparam``/``setattr``,
      ``migrate_pages``, ``move_pages`` and ``prlimit64`` of any process but this one;
      and naming another process as the owner of a descriptor, which the kernel then
      signals (``SIGIO``, or any signal chosen with ``F_SETSIG``): ``fcntl``
      ``F_SETOWN``/``F_SETOWN_EX``/``F_SETSIG``, ``ioctl`` ``FIOSETOWN``/``SIOCSPGRP``;
    - escaping or changing the filesystem view and the kernel: ``open_by_handle_at``,
      ``name_to_handle_at``, ``mount`` and the new mount API, ``pivot_root``,
      ``chroot``, ``unshare``, ``setns``, ``mknod(at)``, ``bpf``, ``perf_event_open``,
      ``userfaultfd``, ``io_uring_*`` (its operations bypass seccomp), the key ring,
      ``personality``, module and ``kexec`` loading, ``swapon``, ``reboot``, clock
      setting, ``syslog``, ``acct``, ``quotactl``, ``iopl``/``ioperm``;
    - new sockets: ``socket()`` of every family (``AF_UNIX``: connecting to the host's
      Unix sockets, ``AF_NETLINK``, ``AF_PACKET``, raw sockets ...), except ``AF_INET``
      and ``AF_INET6`` with ``network``; the worker's own socket pair exists already;
    - SysV IPC (``shmget``/``shmat``/``shmctl``/``shmdt``, ``semget``/``semop``/
      ``semctl``/``semtimedop``, ``msgget``/``msgsnd``/``msgrcv``/``msgctl``) and POSIX
      message queues (``mq_*``): objects that outlive the worker;
    - ``ioctl`` ``FS_IOC_SETFLAGS`` (also the 32-bit one) and ``FS_IOC_FSSETXATTR``:
      immutable or append-only files (``chattr +i``) that survive the clean-up;
    - ``prctl`` options that weaken the walls (``PR_SET_PDEATHSIG``,
      ``PR_SET_DUMPABLE``, ``PR_SET_PTRACER``, ``PR_SET_MM``, capabilities, ...);
    - with ``confine_dirfd`` (for kernels without Landlock): every ``*at`` call that
      opens or changes a path relative to a directory descriptor other than
      ``AT_FDCWD`` (``openat2`` gets ``ENOSYS``), so that paths resolve against the
      working directory, as the audit hook assumes.

    Sets ``PR_SET_NO_NEW_PRIVS`` (required for an unprivileged filter).

    Args:
        confine_dirfd: Also refuse directory-descriptor-relative paths.
        network: Allow ``socket(AF_INET/AF_INET6, ...)`` (the runtime's ``network``).

    Raises:
        OSError: If the kernel refuses the filter, or the machine is not x86-64/arm64.
    """
    machine = _MACHINE
    if machine not in _SYSCALLS:
        raise OSError(0, f"no seccomp filter for machine {machine!r}")
    program = _patched_program(machine, os.getpid(), confine_dirfd, network)
    set_no_new_privs()
    libc = load_libc()
    check_call(
        libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0),
        "prctl(PR_SET_SECCOMP)",
    )

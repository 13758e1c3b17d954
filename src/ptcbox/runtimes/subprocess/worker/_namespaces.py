"""Namespaces made once by the template and shared by its workers (issue 16, item 1).

A worker used to make its own network, IPC and UTS namespaces right after the fork.
On a 2-CPU VM that is the largest kernel cost of a fresh worker: a fork + ``unshare``
of the three + exit cost ~1.3 ms more CPU in the child than a plain fork + exit, and
~0.95 ms more in the kernel's workers that tear them down again (``cleanup_net``,
serialized in the kernel), ~2.2 ms per execution in all. When the
isolation stays the same, :func:`share_namespaces` makes them once in the template
instead, before it forks: every worker of that template then lives in one empty
network namespace and one IPC and UTS namespace, none of them the host's.

Why sharing changes nothing a worker can reach (each reason is a wall that a worker
installs, and without which it exits: :func:`check_shared_walls`; the attack tests
``tests/runtimes/subprocess/worker/test_shared_namespaces.py`` remove each wall and
show the reach it stops):

- **IPC**: SysV shared memory, semaphores, message queues and POSIX message queues are
  refused by the seccomp filter (``shmget``, ``msgget``, ``mq_open`` ...): no worker can
  make or open an IPC object, so the shared IPC namespace is empty.
- **UTS**: ``sethostname``/``setdomainname`` need ``CAP_SYS_ADMIN``; shared only when
  the template runs as root, so its workers give up root and every capability
  (:func:`~ptcbox.runtimes.subprocess.worker._privileges.drop_root`). A worker that is
  not root makes its own user namespace, in which it holds every capability: then
  nothing is shared.
- **Network**: ``socket()`` of every family is refused by the seccomp filter (only
  ``socketpair``, which makes a connected, nameless pair, remains: asyncio needs it);
  the only interface is a loopback that is down, and without ``CAP_NET_ADMIN`` nobody
  brings it up. The one route left between two workers is an abstract Unix name that
  one binds to a ``SOCK_DGRAM`` socket pair end and the other sends to: Landlock's
  abstract Unix socket scope (ABI 6, Linux 6.12) refuses that across Landlock domains,
  and every worker has its own. The network namespace is shared only where Landlock
  has that scope.

What a worker can still see of its siblings: ``/proc/self/net/unix`` lists the Unix
sockets of the shared network namespace (inode numbers, the names bound; not their
data), and a name bound by a sibling makes the same ``bind`` fail with
``EADDRINUSE``. Neither lets one execution reach another's data.
"""

from __future__ import annotations

import errno
import os

from ptcbox.runtimes.subprocess.worker._config import WorkerConfig
from ptcbox.runtimes.subprocess.worker._rlimits import load_libc
from ptcbox.runtimes.subprocess.worker._seccomp import process_filter_supported
from ptcbox.sandbox._ablation import off

__all__ = ["SharedNamespaces", "check_shared_walls", "share_namespaces"]

_CLONE_NEWNET = 0x40000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUTS = 0x04000000
_LANDLOCK_UNIX_SCOPE_ABI = 6


class SharedNamespaces:
    """Which namespaces this process made for the workers it forks.

    Attributes:
        network: A new network namespace (workers make none of their own).
        ipc_uts: New IPC and UTS namespaces (workers make none of their own).
    """

    __slots__ = ("ipc_uts", "network")

    def __init__(self, *, network: bool = False, ipc_uts: bool = False) -> None:
        self.network = network
        self.ipc_uts = ipc_uts

    @property
    def any(self) -> bool:
        """Whether any namespace is shared."""
        return self.network or self.ipc_uts


def share_namespaces(config: WorkerConfig, landlock_abi: int) -> SharedNamespaces:
    """In the template, before it forks: make the namespaces its workers will share.

    Shared only as root (workers give up every capability) with the seccomp filter of
    this machine (no SysV/POSIX IPC, no ``socket()``); the network namespace only when
    workers get no network and Landlock scopes abstract Unix sockets (``landlock_abi``
    at least 6). Otherwise, or if the kernel refuses, nothing is shared and each worker
    makes its own, as before. Never with the ``namespaces`` ablation switch.

    Args:
        config: The workers' configuration (``network``).
        landlock_abi: The kernel's Landlock ABI version (0: none).

    Returns:
        What this process made (and the workers it forks are in).
    """
    if off("namespaces") or os.geteuid() != 0 or os.getuid() != 0:
        return SharedNamespaces()
    if not process_filter_supported():
        return SharedNamespaces()
    network = not config.network and landlock_abi >= _LANDLOCK_UNIX_SCOPE_ABI
    libc = load_libc()
    flags = _CLONE_NEWIPC | _CLONE_NEWUTS | (_CLONE_NEWNET if network else 0)
    if libc.unshare(flags) == 0:
        return SharedNamespaces(network=network, ipc_uts=True)
    if network and libc.unshare(_CLONE_NEWIPC | _CLONE_NEWUTS) == 0:
        return SharedNamespaces(ipc_uts=True)
    return SharedNamespaces()


def check_shared_walls(
    shared: SharedNamespaces, *, dropped_root: bool, landlocked: bool, filtered: bool
) -> None:
    """In a worker, once its walls are up: the walls that make sharing safe are there.

    Args:
        shared: What the template shares with this worker.
        dropped_root: The worker gave up root and its capabilities.
        landlocked: Its Landlock ruleset (with the abstract Unix socket scope) is on.
        filtered: Its seccomp filter is on.

    Raises:
        OSError: If one is missing (the worker must not run); never for a wall a test
            turned off on purpose (``PTCBOX_TEST_ABLATE``).
    """
    if not shared.any:
        return
    missing = not dropped_root or (not filtered and not off("seccomp"))
    missing = missing or (shared.network and not landlocked and not off("landlock"))
    if missing:
        raise OSError(errno.EPERM, "a wall of the namespaces shared with other workers is off")

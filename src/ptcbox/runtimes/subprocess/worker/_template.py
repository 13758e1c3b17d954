"""The SubprocessRuntime template process: a warm interpreter that forks workers.

Started once per runtime by the host as ``python -I -c <bootstrap> ROOT CTL_FD CONFIG``.
It imports the sandbox, the worker code and every module snippets may import, warms
the compiler once, freezes the heap (``gc.freeze``, so forked workers share it
copy-on-write), and then serves the host over a ``SOCK_SEQPACKET`` control socket,
single-threaded:

- host ``{"t": "spawn", "n": k, "rehearse": bool}``: fork ``k`` workers (rehearsing,
  unless the host says not to: see :mod:`~ptcbox.runtimes.subprocess._demand`); for each, send
  ``{"t": "worker", "pid": ...}`` with the host's end of the worker's socket and a pidfd
  of the worker attached (``SCM_RIGHTS``; opened by its parent before it can be reaped,
  so it names that process even if its pid is reused later);
- when a worker exits: reap it, remove its working directory and send
  ``{"t": "exit", "pid": ..., "signal": ..., "code": ..., "cpu": seconds,
  "maxrss": bytes, "oom": bool}`` (``oom``: a ``SIGKILL`` while the kernel's
  out-of-memory kill count went up);
- host ``{"t": "quit"}`` or end of file (the host exited or died): kill every worker's
  process group, reap them, remove the base directory and exit.

The base directory (``ptcbox-*`` in ptcbox's per-user parent directory, see
:mod:`ptcbox.runtimes.subprocess.worker._basedir`; reported to the host in ``ready``)
stays ``flock``-ed while the template lives: if the template is ``SIGKILL``-ed the host
removes it, and :func:`~ptcbox.runtimes.subprocess.worker._basedir.sweep_dead_bases`
removes the unlocked ones that dead templates of the same user left behind.

The pre-forking template follows the zygote / forkserver pattern (Android's zygote,
``multiprocessing``'s forkserver).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib
import io
import os
import selectors
import shutil
import signal
import socket
import sys
from typing import Any

import orjson

from ptcbox.runtimes._shared._error_text import SNIPPET_FILENAME
from ptcbox.runtimes.subprocess.worker import _timing as timing
from ptcbox.runtimes.subprocess.worker._basedir import make_base
from ptcbox.runtimes.subprocess.worker._config import WorkerConfig, policy_from_wire
from ptcbox.runtimes.subprocess.worker._forkhooks import ForkHooks
from ptcbox.runtimes.subprocess.worker._landlock import hold_read_rules, ruleset_for
from ptcbox.runtimes.subprocess.worker._main import warm_up, worker_main
from ptcbox.runtimes.subprocess.worker._privileges import drop_bounding_set
from ptcbox.runtimes.subprocess.worker._rlimits import load_libc, unshare_network
from ptcbox.runtimes.subprocess.worker._setup import (
    code_dirs,
    prepare_walls,
    prepare_worker,
    share_worker_namespaces,
)
from ptcbox.sandbox import (
    DEFAULT_ALLOWED_IMPORTS,
    SandboxPolicy,
    build_globals,
    compile_snippet,
)
from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._datahardening import harden_pandas
from ptcbox.sandbox._dataspecs import seal_snippet_classes, uses_data_libs

__all__ = ["main"]

_CONTROL_BYTES = 1 << 16


class _Template:
    def __init__(self, ctl: socket.socket, config: WorkerConfig, hooks: ForkHooks) -> None:
        self.ctl = ctl
        self.config = config
        self.hooks = hooks
        self.base = make_base()
        self.lock_fd = os.open(self.base, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held until it exits
        self.children: dict[int, tuple[str, int]] = {}  # pid -> (workdir, OOM kills)
        self.selector = selectors.DefaultSelector()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.pid = os.getpid()
        self.landlock_abi = 0  # set once the walls are prepared (see main)

    def send(self, message: dict[str, Any], fds: list[int] | None = None) -> None:
        data = orjson.dumps(message)
        if fds:
            socket.send_fds(self.ctl, [data], fds)
        else:
            self.ctl.send(data)

    def close_inherited(self) -> None:
        """In a forked worker: close the template's own descriptors."""
        self.selector.close()
        self.ctl.close()
        os.close(self.lock_fd)
        os.close(self.wake_r)
        os.close(self.wake_w)

    def make_workdir(self) -> str:
        """A new private (0700) directory with an unguessable name in the base directory
        (as ``tempfile.mkdtemp`` makes one, without its name generator's cost)."""
        while True:
            path = self.base + "/w-" + os.urandom(8).hex()
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:  # pragma: no cover - 64 random bits
                continue
            return path

    def spawn(self, rehearse: bool = True) -> None:
        if timing.ON:
            timing.mark("spawn")
        workdir = self.make_workdir()
        host_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ruleset = ruleset_for(workdir, self.landlock_abi)
        if timing.ON:
            timing.mark("fork")
        try:
            pid = self.hooks.fork()
        except OSError as exc:
            host_end.close()
            worker_end.close()
            if ruleset >= 0:
                os.close(ruleset)
            shutil.rmtree(workdir, ignore_errors=True)
            self.send({"t": "error", "message": f"fork failed: {exc}"})
            return
        if pid == 0:  # the worker
            try:
                if timing.ON:
                    timing.take()
                    timing.mark("child")
                host_end.close()
                worker_main(
                    worker_end,
                    workdir,
                    self.config,
                    self.pid,
                    self.close_inherited,
                    rehearse_first=rehearse,
                    ruleset=ruleset,
                )
            finally:
                os._exit(70)
        if ruleset >= 0:
            os.close(ruleset)  # the worker's alone from now on
        if timing.ON:
            timing.mark("forked")
        worker_end.close()
        self.children[pid] = (workdir, _oom_kills())
        fds = [host_end.fileno()]
        with contextlib.suppress(OSError, AttributeError):  # no pidfd: the host uses the pid
            fds.append(os.pidfd_open(pid))
        message: dict[str, Any] = {"t": "worker", "pid": pid}
        if timing.ON:
            timing.mark("handout")
            message["tm"] = timing.take()
        try:
            self.send(message, fds)
        finally:
            host_end.close()
            for fd in fds[1:]:
                os.close(fd)

    def reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if timing.ON:
                timing.mark("reaped")
            workdir, oom_before = self.children.pop(pid, ("", -1))
            if workdir:
                _remove(workdir)
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            oom = sig == signal.SIGKILL and 0 <= oom_before < _oom_kills()
            message = {
                "t": "exit",
                "pid": pid,
                "signal": sig,
                "code": code,
                "cpu": usage.ru_utime + usage.ru_stime,
                "maxrss": usage.ru_maxrss * 1024,
                "oom": oom,
            }
            if timing.ON:
                timing.mark("cleaned")
                message["tm"] = timing.take()
            with contextlib.suppress(OSError):
                self.send(message)

    def serve(self) -> None:
        self.selector.register(self.ctl, selectors.EVENT_READ, "ctl")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "wake")
        while True:
            for key, _ in self.selector.select():
                if key.data == "wake":
                    with contextlib.suppress(OSError):
                        while os.read(self.wake_r, 4096):
                            pass
                    self.reap()
                    continue
                try:
                    data = self.ctl.recv(_CONTROL_BYTES)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    return
                message = orjson.loads(data)
                if message.get("t") == "quit":
                    return
                if message.get("t") == "spawn":
                    rehearse = message.get("rehearse") is not False
                    for _ in range(max(0, min(int(message.get("n", 1)), 64))):
                        self.spawn(rehearse)

    def shutdown(self) -> None:
        for pid in list(self.children):
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in list(self.children):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self.children.clear()
        shutil.rmtree(self.base, ignore_errors=True)


def _remove(workdir: str) -> None:
    """Remove a worker's directory: one ``rmdir`` when the worker left it empty."""
    try:
        os.rmdir(workdir)
    except OSError:
        shutil.rmtree(workdir, ignore_errors=True)


_vmstat_fd = -1  # /proc/vmstat, opened once: read at each fork and SIGKILL-ed exit


def _oom_kills() -> int:
    """The kernel's count of out-of-memory kills so far (-1 when unknown)."""
    global _vmstat_fd
    try:
        if _vmstat_fd < 0:
            _vmstat_fd = os.open("/proc/vmstat", os.O_RDONLY | os.O_CLOEXEC)
        data = b"\n" + os.pread(_vmstat_fd, 1 << 16, 0)
        start = data.index(b"\noom_kill ") + 10
        return int(data[start : data.index(b"\n", start)])
    except (OSError, ValueError):
        return -1


def _warm_up(policy: SandboxPolicy) -> None:
    """Import what snippets may import, and (for the data preset) numpy and pandas.

    numpy and pandas are imported here, before any wall and before the fork, with their
    thread pools capped by the environment the runtime gave the template (see
    ``SubprocessRuntime``); pandas' classes are hardened and the views built, so that
    an execution pays neither the import nor the vetting. A trusted policy whose
    ``allowed_imports`` names them gets them imported too (not hardened): behind the
    audit hook a worker could not import numpy itself (it imports ``ctypes``).
    """
    data = uses_data_libs(policy.allowed_imports)
    names = DEFAULT_ALLOWED_IMPORTS | (policy.allowed_imports if data else frozenset())
    for name in sorted(names):
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    if data and policy.restricted:
        seal_snippet_classes()
        if "pandas" in policy.allowed_imports:
            harden_pandas()
        _build_views(policy)
    warm_up("# template")


_PANDAS_WARM_UP = """\
rows = [{"id": i, "k": "ab"[i % 2], "x": i * 1.5, "d": f"2024-03-0{i % 9 + 1}"} for i in range(9)]
df = pandas.DataFrame(rows)
df["d"] = pandas.to_datetime(df["d"])
g = df.groupby("k")["x"].agg(["count", "sum", "mean"]).round(2)
text = g.to_string() + str(df.merge(df[["id"]], on="id").sort_values("x").head()) + df.to_csv()
text += df.describe().to_string() + str(df["k"].value_counts()) + df.to_json(date_format="iso")
a = df["x"].to_numpy()
stats = (a.mean(), a.std(), numpy.percentile(a, 50), numpy.argsort(a))
"""
"""Loads what pandas imports lazily and fills its first-call caches before the fork."""


def _build_views(policy: SandboxPolicy) -> None:
    """Import every allowed module through the sandbox once: the views (numpy's and
    pandas' are large) are vetted and cached for the process before the fork."""
    names = sorted(name for name in policy.allowed_imports if "." not in name)
    source = "".join(f"import {name}\n" for name in names) + "# views\n"
    if "pandas" in policy.allowed_imports:
        source += _PANDAS_WARM_UP
    compiled = compile_snippet(source, policy, filename=SNIPPET_FILENAME, os_enforced_limits=True)
    sink = io.StringIO()
    exec(compiled.code, build_globals(policy, tools={}, stdout=sink, stderr=sink, own_process=True))


def _probe_network_namespace() -> bool:
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            unshare_network()
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def main(argv: list[str], fork_hooks: list[dict[str, Any]] | None = None) -> None:
    """Run the template; ``argv`` is ``[CTL_FD, CONFIG_JSON]``.

    ``fork_hooks``: the ``os.register_at_fork`` calls the bootstrap recorded instead of
    making them (see :mod:`~ptcbox.runtimes.subprocess.worker._forkhooks`); ``None``:
    they were made, ``os.fork()`` runs them all.
    """
    ctl = socket.socket(fileno=int(argv[0]))
    ctl.setblocking(True)
    config = WorkerConfig.from_json(argv[1])
    load_libc()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    template = _Template(ctl, config, ForkHooks(fork_hooks))
    try:
        _warm_up(policy_from_wire(config.policy) if config.policy else SandboxPolicy())
        abi, readable = prepare_walls()
        if abi and not off("landlock"):
            hold_read_rules(readable, abi)
            template.landlock_abi = abi
        prepare_worker(config)
        drop_bounding_set(code_dirs())
        shared = share_worker_namespaces(config)
        netns = not config.network and (shared.network or _probe_network_namespace())
        gc.collect()
        gc.freeze()
        signal.set_wakeup_fd(template.wake_w)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        template.send({"t": "ready", "pid": template.pid, "netns": netns, "base": template.base})
        if netns or config.network or config.network_optional:
            template.serve()
    finally:
        template.shutdown()


if __name__ == "__main__":  # pragma: no cover - started by the host
    main(sys.argv[1:])

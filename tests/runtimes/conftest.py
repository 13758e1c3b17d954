"""Fixtures for the runtime tests: every contract test runs once per runtime.

To add a runtime, add one entry to ``RUNTIMES`` (id -> factory taking a policy).
``RayRuntime`` ("ray") joins the contract tests only (``CONTRACT_RUNTIMES``): each of
its runtimes starts a Ray actor, seconds each on this machine; they all share one local
Ray cluster per test session (:func:`ray_cluster`), and the ``runtime`` fixture shares
one RayRuntime. Without the ``ray`` extra its tests skip.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime
from ptcbox.sandbox import SandboxPolicy

RuntimeFactory = Callable[[SandboxPolicy | None], Any]

RUNTIMES: dict[str, RuntimeFactory] = {
    "thread": ThreadRuntime,
    "subprocess": SubprocessRuntime,
    # reuse mode: a worker serves up to 20 executions (see tests/attacks/test_reuse_state.py)
    "subprocess-reuse": lambda policy: SubprocessRuntime(policy, max_executions_per_worker=20),
}


def make_ray_runtime(policy: SandboxPolicy | None = None, **options: Any) -> Any:
    """A small RayRuntime for tests (a quarter CPU per actor, one idle worker)."""
    from ptcbox.runtimes import RayRuntime

    options.setdefault("num_cpus", 0.25)
    options.setdefault("executions_per_actor", 4)
    return RayRuntime(policy, **options)


CONTRACT_RUNTIMES: dict[str, RuntimeFactory] = {**RUNTIMES, "ray": make_ray_runtime}
"""The runtimes of ``test_contract.py``: every runtime, RayRuntime included."""

_RAY_SHARED: list[Any] = []


def _kill_cluster(marker: str) -> None:
    """Kill every process of the cluster whose files live under ``marker``."""
    found: set[psutil.Process] = set()
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(marker in arg for arg in proc.info["cmdline"] or ()):
                found.add(proc)
                found.update(proc.children(recursive=True))
        except psutil.Error:
            continue
    for proc in found:
        try:
            proc.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(list(found), timeout=10)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """One local Ray cluster for the whole test session (2 CPUs, no dashboard), or skip.

    Started with ``ray start`` (its processes are not this process's children, so the
    leak checks of other tests never see them), joined with ``ray.init``, and killed
    afterwards by its own temp directory (never ``ray stop``: other clusters may run).
    """
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        yield ray
        return
    temp = tempfile.mkdtemp(prefix="ptcray-", dir="/tmp")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        str(Path(sys.executable).with_name("ray")),
        "start",
        "--head",
        f"--port={port}",
        "--num-cpus=2",
        "--include-dashboard=false",
        f"--temp-dir={temp}",
        "--node-ip-address=127.0.0.1",
        "--disable-usage-stats",
        "--object-store-memory=100000000",
    ]
    # a loopback test cluster: no token (the driver and the CLI would need the same one)
    os.environ["RAY_AUTH_MODE"] = "disabled"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    try:
        subprocess.run(command, check=True, env=env, capture_output=True, timeout=180)
        ray.init(address=f"127.0.0.1:{port}", logging_level="ERROR", log_to_driver=False)
        yield ray
    finally:
        for runtime in _RAY_SHARED:
            anyio.run(runtime.aclose)
        _RAY_SHARED.clear()
        if ray.is_initialized():
            ray.shutdown()
        _kill_cluster(temp)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=sorted(RUNTIMES))
def runtime_name(request: pytest.FixtureRequest) -> str:
    """The id of the runtime under test ("thread", ...)."""
    return str(request.param)


async def _shared_ray_runtime() -> Any:
    if not _RAY_SHARED or _RAY_SHARED[0].closed:
        _RAY_SHARED[:] = [make_ray_runtime()]
    await _RAY_SHARED[0].start()
    return _RAY_SHARED[0]


@pytest.fixture
async def shared_ray_runtime(ray_cluster: Any) -> Any:
    """The session's one RayRuntime (default policy, one actor), started; never closed
    by a test (an actor a test kills is replaced)."""
    return await _shared_ray_runtime()


@pytest.fixture
async def make_runtime(
    runtime_name: str, request: pytest.FixtureRequest
) -> AsyncIterator[Callable[..., Any]]:
    """Build runtimes of the kind under test with a given policy; closed afterwards."""
    made: list[Any] = []
    if runtime_name == "ray":
        request.getfixturevalue("ray_cluster")

    def make(policy: SandboxPolicy | None = None) -> Any:
        runtime = CONTRACT_RUNTIMES[runtime_name](policy)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        await runtime.aclose()


@pytest.fixture
async def runtime(make_runtime: Callable[..., Any], runtime_name: str) -> Any:
    """A runtime of the kind under test with the default policy.

    RayRuntime: one for the session (its actor takes seconds to start).
    """
    if runtime_name == "ray":
        return await _shared_ray_runtime()
    runtime = make_runtime()
    start = getattr(runtime, "start", None)
    if start is not None:  # SubprocessRuntime: start its worker pool outside timed code
        await start()
    return runtime


def _wait_for_threads(baseline: int, deadline_s: float = 5.0) -> int:
    end = time.monotonic() + deadline_s
    count = threading.active_count()
    while count > baseline and time.monotonic() < end:
        time.sleep(0.01)
        count = threading.active_count()
    return count


@pytest.fixture
def wait_for_threads() -> Callable[..., int]:
    """``wait_for_threads(baseline, deadline_s=5.0)``: wait until at most ``baseline``
    threads run (or the deadline passes); returns the thread count seen last."""
    return _wait_for_threads

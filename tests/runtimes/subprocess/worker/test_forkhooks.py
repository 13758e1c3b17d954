"""The template's at-fork hooks (worker/_forkhooks.py): thread-state repairs are skipped
only while the template is single-threaded; every other hook runs where os.fork runs it."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import pytest

from ptcbox.runtimes import SubprocessRuntime
from ptcbox.runtimes.subprocess.worker._forkhooks import THREAD_STATE_ONLY, ForkHooks


def _hook(module: str, qualname: str, log: list[str], tag: str) -> Any:
    def hook() -> None:
        log.append(tag)

    hook.__module__, hook.__qualname__ = module, qualname
    return hook


def _fork_and_report(hooks: ForkHooks, log: list[str]) -> tuple[list[str], list[str]]:
    """Fork with ``hooks``; the parent's log and the child's (sent through a pipe)."""
    read_end, write_end = os.pipe()
    pid = hooks.fork()
    if pid == 0:
        try:
            os.write(write_end, ",".join(log).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    child = os.read(read_end, 4096).decode().split(",")
    os.close(read_end)
    os.waitpid(pid, 0)
    return list(log), child


def test_thread_state_hooks_are_skipped_and_the_others_run_in_cpythons_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ForkHooks, "single_threaded", staticmethod(lambda: True))  # xdist
    log: list[str] = []
    recorded: list[dict[str, Any]] = []
    hooks = ForkHooks(recorded)
    recorded.append({"after_in_child": _hook("threading", "_after_fork", log, "threading")})
    recorded.append({"after_in_child": _hook("random", "Random.seed", log, "seed")})
    recorded.append(
        {
            "before": _hook("mod", "a", log, "before-1"),
            "after_in_parent": _hook("mod", "b", log, "parent-1"),
            "after_in_child": _hook("mod", "c", log, "child-1"),
        }
    )
    recorded.append({"before": _hook("mod", "d", log, "before-2")})  # after the first fork
    assert ("threading", "_after_fork") in THREAD_STATE_ONLY
    parent, child = _fork_and_report(hooks, log)
    # before hooks in reverse order of registration, then the child's in order
    assert child == ["before-2", "before-1", "seed", "child-1"]
    assert parent == ["before-2", "before-1", "parent-1"]


def test_every_hook_runs_while_the_process_has_another_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log: list[str] = []
    hooks = ForkHooks([{"after_in_child": _hook("threading", "_after_fork", log, "threading")}])
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not hooks.single_threaded()
        _, child = _fork_and_report(hooks, log)
    finally:
        stop.set()
        thread.join()
    assert child == ["threading"]
    monkeypatch.setattr(ForkHooks, "single_threaded", staticmethod(lambda: True))
    _, child = _fork_and_report(hooks, log)
    assert child == [""]  # the control: skipped when single-threaded


def test_registration_is_checked_as_os_register_at_fork_checks_it() -> None:
    hooks = ForkHooks([])
    with pytest.raises(TypeError):
        hooks.register()
    with pytest.raises(TypeError):
        hooks.register(before=42)  # type: ignore[arg-type]


def test_an_unrecorded_template_forks_with_os_fork() -> None:
    log: list[str] = []
    hooks = ForkHooks(None)
    os.register_at_fork(after_in_child=lambda: None)  # CPython's own list: not ours
    _, child = _fork_and_report(hooks, log)
    assert child == [""]


def test_workers_draw_their_own_random_numbers() -> None:
    """``random``'s re-seeding hook still runs in every worker (fresh-process mode)."""

    async def main() -> list[str]:
        async with SubprocessRuntime() as runtime:
            code = "import random\nprint(random.getrandbits(64))"
            results = [await runtime.execute(code, {}) for _ in range(4)]
        assert all(result.ok for result in results), results
        return [result.stdout for result in results]

    outputs = asyncio.run(main())
    assert len(set(outputs)) == 4


def test_the_template_runs_only_randoms_hook_of_its_modules() -> None:
    """What the template skips is only what THREAD_STATE_ONLY names (control: without
    the skip, threading's and logging's hooks would run). Begun as the template is."""
    import subprocess
    import sys

    from ptcbox.runtimes.subprocess._launch import _PACKAGE_ROOT, TEMPLATE_PRELUDE

    code = TEMPLATE_PRELUDE + (
        "from ptcbox.runtimes.subprocess.worker import _template\n"
        "from ptcbox.runtimes.subprocess.worker._forkhooks import ForkHooks, _name\n"
        "from ptcbox.sandbox import SandboxPolicy\n"
        "_template._warm_up(SandboxPolicy())\n"
        "hooks = ForkHooks(fork_hooks)\n"
        "print(sorted(hooks.child_hooks()))\n"
        "print(sorted(_name(h['after_in_child']) for h in fork_hooks if 'after_in_child' in h))\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, _PACKAGE_ROOT],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert out[0] == "[('random', 'Random.seed')]"
    registered = eval(out[1])  # a list of (module, name) tuples printed above
    assert ("threading", "_after_fork") in registered
    assert set(registered) - {("random", "Random.seed")} <= THREAD_STATE_ONLY

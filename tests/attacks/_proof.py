"""The pattern every attack test follows (issue 18): a positive control and an exact refusal.

An :class:`Attack` names the snippet, the line it targets, the error the guard raises
(``error_type`` and the guard's own words) and the guard, by its ablation switch
(:mod:`ptcbox.sandbox._ablation`).

* :func:`assert_refused` runs it under the real policy and checks the exact refusal:
  error type, the guard's message, and that the error points at the target line (the
  innermost ``<snippet>`` frame, or the first line a compile-time refusal names).
* :func:`assert_control` is the positive control: the same snippet in a **child Python**
  (never in the test process: a control once changed the real ``math.tau``, another
  raised the host's recursion limit) where the guard is absent, and the forbidden thing
  happens there: ``marker`` shows up in its output. By default the child runs the
  *default* policy with exactly that one guard switched off (``PTCBOX_TEST_ABLATE``), so a
  control that passes also proves no earlier, different guard stops the attack; the
  trusted policy or plain ``exec`` are the alternatives. The child has an address-space
  cap and a timeout, so a size bomb whose guard is off cannot take the machine down.

Controls of one test module are run together, one child per (mode, guard, runtime),
and cached for the session.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._ablation import ENV_VAR, GUARDS, WALLS

__all__ = [
    "Attack",
    "ChildResult",
    "assert_control",
    "assert_refused",
    "by_id",
    "control_output",
    "result_without",
]

CHILD_MEMORY_BYTES = 3 << 30
"""Address-space cap of a control's child Python (a size bomb with its guard off)."""


@dataclass(frozen=True)
class Attack:
    """One attack and what proves its guard.

    Attributes:
        id: Test id.
        code: The snippet.
        line: The line the attack targets (where the guard must refuse it).
        error_type: ``CodeResult.error_type`` of the refusal.
        message: The guard's own words (a substring of the error).
        guard: The ablation switch of the guard (``GUARDS`` or ``WALLS`` key).
        marker: What the control's stdout (or error) shows when the attack succeeds.
        control: ``"ablated"`` (default policy, this guard off), ``"trusted"``
            (``SandboxPolicy.trusted()``) or ``"plain"`` (``exec`` with the tools).
        runtime: Runtime of the control: ``"thread"`` or ``"subprocess"`` (default:
            subprocess for OS walls, thread for language guards).
        globals: Extra globals (JSON data) for both runs.
        compile_time: The refusal comes from the compiler (``Line N: ...``).
        policy: ``SandboxPolicy.replace`` arguments for both runs.
        trusted: Both runs start from ``SandboxPolicy.trusted()`` (an OS wall's attack:
            trusted code in a worker is what a sandbox escape would leave).
        also_off: More switches the control turns off (defense in depth: the next wall
            would stop the attack too; the refusal run still names the first one).
    """

    id: str
    code: str
    line: int
    error_type: str
    message: str
    guard: str
    marker: str
    control: str = "ablated"
    runtime: str = ""
    globals: Mapping[str, Any] = field(default_factory=dict)
    compile_time: bool = False
    policy: Mapping[str, Any] = field(default_factory=dict)
    trusted: bool = False
    also_off: tuple[str, ...] = ()

    def sandbox_policy(self) -> SandboxPolicy:
        """The policy of the refusal run."""
        base = SandboxPolicy.trusted() if self.trusted else SandboxPolicy()
        return base.replace(**self.policy) if self.policy else base

    def __post_init__(self) -> None:
        if self.guard not in GUARDS and self.guard not in WALLS:
            raise ValueError(f"{self.id}: unknown guard {self.guard!r}")
        if self.control not in ("ablated", "trusted", "plain"):
            raise ValueError(f"{self.id}: unknown control {self.control!r}")
        if not self.runtime:
            object.__setattr__(self, "runtime", "subprocess" if self.guard in WALLS else "thread")
        lines = self.code.splitlines()
        if not 1 <= self.line <= len(lines):
            raise ValueError(f"{self.id}: line {self.line} is not in the snippet")


def by_id(attacks: Iterable[Attack]) -> dict[str, Attack]:
    """``{attack.id: attack}``, refusing duplicate ids."""
    out: dict[str, Attack] = {}
    for attack in attacks:
        if attack.id in out:
            raise ValueError(f"duplicate attack id {attack.id!r}")
        out[attack.id] = attack
    return out


_SNIPPET_LINE = re.compile(r'File "<snippet>", line (\d+)')
_COMPILE_LINE = re.compile(r"^\s*Line (\d+): ", re.MULTILINE)


def assert_refused(attack: Attack, result: Any) -> None:
    """Check ``result`` (a ``CodeResult`` of ``attack.code`` under the real policy) is the
    guard's exact refusal on the target line."""
    error = result.error or ""
    assert result.error_type == attack.error_type, (attack.id, _short(error))
    assert attack.message in error, (attack.id, _short(error))
    if attack.compile_time:
        lines = _COMPILE_LINE.findall(error)
        assert lines and int(lines[0]) == attack.line, (attack.id, attack.line, _short(error))
    else:
        lines = _SNIPPET_LINE.findall(error)
        assert lines and int(lines[-1]) == attack.line, (attack.id, attack.line, _short(error))
    assert not attack.marker or attack.marker not in result.stdout, (attack.id, result.stdout)


_CHILD = textwrap.dedent(
    """
    import asyncio, json, resource, sys
    cap = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    from ptcbox import resolve_tools
    from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime
    from ptcbox.sandbox import SandboxPolicy

    def search(q: str) -> str:
        \"\"\"Search for q.\"\"\"
        return "r:" + q

    TOOLS = resolve_tools([search])
    job = json.loads(sys.stdin.read())
    out = {}

    async def main():
        if job["mode"] == "plain":
            import contextlib, io, traceback
            for aid, code, extra, *_ in job["attacks"]:
                buf = io.StringIO()
                try:
                    with contextlib.redirect_stdout(buf):
                        exec(compile(code, "<snippet>", "exec"), {"search": search, **extra})
                except BaseException:
                    out[aid] = [buf.getvalue(), traceback.format_exc()]
                    continue
                out[aid] = [buf.getvalue(), None]
            return
        kind = SubprocessRuntime if job["runtime"] == "subprocess" else ThreadRuntime
        for aid, code, extra, trusted, changes in job["attacks"]:
            trusted = trusted or job["mode"] == "trusted"
            policy = SandboxPolicy.trusted() if trusted else SandboxPolicy()
            async with kind(policy.replace(**changes) if changes else policy) as rt:
                r = await rt.execute(code, TOOLS, extra_globals=extra or None, timeout=30)
            out[aid] = [r.stdout, r.error]

    asyncio.run(main())
    sys.stdout.write("\\n@@CONTROLS@@" + json.dumps(out))
    """
)

_cache: dict[tuple[str, str, str, tuple[str, ...]], dict[str, list[str | None]]] = {}


def control_output(attack: Attack, batch: Iterable[Attack] = ()) -> tuple[str, str | None]:
    """The stdout and error (``None``: none) of ``attack``'s positive control.

    Every attack of ``batch`` with the same control mode, guard and runtime runs in the
    same child Python (one process start for a module's attacks); results are cached.
    """
    group = [
        a
        for a in (*batch, attack)
        if (a.control, a.guard, a.runtime, a.also_off)
        == (attack.control, attack.guard, attack.runtime, attack.also_off)
    ]
    ids = tuple(sorted({a.id for a in group}))
    key = (attack.control, ",".join((attack.guard, *attack.also_off)), attack.runtime, ids)
    if key not in _cache:
        env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
        if attack.control == "ablated":
            env[ENV_VAR] = ",".join((attack.guard, *attack.also_off))
        chosen = {a.id: a for a in group}
        job = {
            "mode": attack.control,
            "runtime": attack.runtime,
            "attacks": [
                [a.id, a.code, dict(a.globals), a.trusted, dict(a.policy)] for a in chosen.values()
            ],
        }
        try:
            done = subprocess.run(
                [sys.executable, "-c", _CHILD, str(CHILD_MEMORY_BYTES)],
                input=json.dumps(job),
                capture_output=True,
                text=True,
                env=env,
                timeout=120 + 30 * len(chosen),
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"control child hung: {exc}") from None
        _, sep, tail = done.stdout.rpartition("@@CONTROLS@@")
        if not sep:
            raise AssertionError(f"control child failed: {done.stdout}\n{done.stderr}")
        _cache[key] = json.loads(tail)
    stdout, error = _cache[key][attack.id]
    return stdout or "", error


def assert_control(attack: Attack, batch: Iterable[Attack] = ()) -> None:
    """The positive control: without the guard, the attack does the forbidden thing
    (``marker`` in its output: stdout, or an error text the snippet could catch and read)
    and the guard's message is nowhere."""
    stdout, error = control_output(attack, batch)
    where = f"{attack.id} ({attack.control}, {attack.guard}): {_short(stdout)} / {_short(error)}"
    assert attack.marker in stdout + (error or ""), where
    assert attack.message not in (error or ""), where


def _short(text: str | None, limit: int = 1500) -> str:
    if text is None or len(text) <= limit:
        return repr(text)
    return repr(text[: limit // 2]) + " ... " + repr(text[-limit // 2 :])


_CHILD_RESULT = textwrap.dedent(
    """
    import asyncio, json, sys
    from ptcbox import resolve_tools
    from ptcbox.runtimes import SubprocessRuntime, ThreadRuntime
    from ptcbox.sandbox import SandboxPolicy

    def search(q: str) -> str:
        \"\"\"Search for q.\"\"\"
        return "r:" + q

    job = json.loads(sys.stdin.read())

    async def main():
        policy = SandboxPolicy.trusted() if job["trusted"] else SandboxPolicy()
        policy = policy.replace(**job["policy"]) if job["policy"] else policy
        kind = SubprocessRuntime if job["runtime"] == "subprocess" else ThreadRuntime
        async with kind(policy) as rt:
            r = await rt.execute(job["code"], resolve_tools([search]), timeout=30)
        return {"stdout": r.stdout, "error": r.error, "error_type": r.error_type}

    sys.stdout.write("\\n@@RESULT@@" + json.dumps(asyncio.run(main())))
    """
)


@dataclass(frozen=True)
class ChildResult:
    """What :func:`result_without` returns: the fields :func:`assert_refused` reads."""

    stdout: str
    error: str | None
    error_type: str | None


def result_without(attack: Attack, switches: Iterable[str]) -> ChildResult:
    """Run ``attack`` under its real policy in a child Python with ``switches`` off.

    For an attack whose route is closed by an earlier guard as well: turning that earlier
    guard off (never the attack's own) shows the attack's own guard refuses it by itself.
    Switches this process already runs with (a guard-ablation run) stay off in the child
    too, so that run sees the attack's own guard go.
    Added for issue 18's retrofit (additive: the helpers above are unchanged).

    Raises:
        AssertionError: ``switches`` includes the attack's own guard, or the child failed.
    """
    off = tuple(switches)
    assert attack.guard not in off, (attack.id, off)
    inherited = [name for name in os.environ.get(ENV_VAR, "").split(",") if name.strip()]
    env = {**os.environ, ENV_VAR: ",".join(sorted({*inherited, *off}))}
    job = {
        "code": attack.code,
        "runtime": attack.runtime,
        "trusted": attack.trusted,
        "policy": dict(attack.policy),
    }
    done = subprocess.run(
        [sys.executable, "-c", _CHILD_RESULT],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        timeout=150,
        check=False,
    )
    _, sep, tail = done.stdout.rpartition("@@RESULT@@")
    if not sep:
        raise AssertionError(f"child failed: {done.stdout}\n{done.stderr}")
    return ChildResult(**json.loads(tail))

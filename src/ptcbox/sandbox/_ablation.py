"""Test-only switches that turn one guard or OS wall off (guard ablation, issue 18).

An attack test proves its guard only if it fails when the guard is gone.
``benchmarks/guard_ablation.py`` runs the attack tests once per switch with
``PTCBOX_TEST_ABLATE=<switch>`` in the environment of a fresh pytest process and lists
the tests that then fail.

The variable is read once, when this module is first imported, into a frozenset; each
guard reads its switch once, where the guard is built (module import, builtins or worker
setup), never per operation: unset, the switches cost nothing at run time. A snippet
cannot turn a switch on: the set is fixed before any snippet runs, this module is not
importable from the sandbox, and a ``SubprocessRuntime`` worker gets the variable only
from its host's environment through the worker's configured environment (``env`` of
:class:`~ptcbox.runtimes.subprocess.worker._config.WorkerConfig`). Never set it outside
tests: every switch removes a protection.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["ENV_VAR", "GUARDS", "OFF", "WALLS", "off"]

ENV_VAR: Final = "PTCBOX_TEST_ABLATE"

GUARDS: Final = {
    "attribute": "getattr guard and compile-time attribute-name checks (_guards, _transform,"
    " _patterns)",
    "metaclass": "metaclass=, type subclasses, 3-argument type() (_build_class, _transform)",
    "names": "compile-time checks of reserved and special names (_transform.check_name)",
    "builtins": "the builtins allowlist: open, eval, exec, compile ... are there (_builtins)",
    "except_star": "except* on groups that override split()/derive() (_exceptstar)",
    "format": "str.format/format_map fields through the getattr guard (_safeformat)",
    "owner": "ownership marks: every object counts as the snippet's own (_owner)",
    "write": "attribute writes only on the snippet's own objects (_guards._write_)",
    "module_views": "imports hand out the real module, not a vetted view (_modules)",
    "import_allowlist": "any module may be imported (_modules)",
    "size": "size limits on ints, repetition, padding, constructors (_limits)",
    "alive": "code of an ended execution keeps running (_globals alive object; also once"
    " its globals are cleared)",
    "resume": "no alive check where suspended code resumes: generator-expression steps,"
    " code after yield/await (_resume)",
    "regex": "the sandbox's re matches with CPython's own engine: it holds the GIL and"
    " ignores the execution's deadline (_regexview: no regex-package pattern)",
    "stop_cleanup": "thread runtime: a stopped execution clears its globals in HOST state,"
    " where the reaper injects no stop (Control.shelter instead of wind_down; red-team R2)",
    "hash_flood": "tool values decode sets and dicts of any number of equal-hash members,"
    " which cost quadratic time to build (runtimes/_shared/_codec._few_equal_hashes)",
    "quiet_refusals": "thread runtime: the unraisable hook passes the alive checks' refusals"
    " of collected snippet code (AttributeError 'running', NameError '_alive_') to the"
    " host's stderr (_job._refused_by_alive_check; red-team R5)",
}
"""Language-level guards of the sandbox (both runtimes), and the thread runtime's own."""

WALLS: Final = {
    "seccomp": "the worker's seccomp filter (_seccomp)",
    "landlock": "the worker's Landlock ruleset (_landlock)",
    "rlimits": "the worker's rlimits: processes, files, memory (_rlimits)",
    "audit": "the worker's audit hook (_audit)",
    "namespaces": "the worker's network/IPC/UTS namespaces (_rlimits.unshare_*)",
}
"""OS walls of a ``SubprocessRuntime`` worker."""

OFF: Final[frozenset[str]] = frozenset(
    name.strip() for name in os.environ.get(ENV_VAR, "").split(",") if name.strip()
)
"""The switches this process runs with (empty unless a test set the variable)."""

_unknown = OFF - GUARDS.keys() - WALLS.keys()
if _unknown:
    raise RuntimeError(f"{ENV_VAR}: unknown switches {sorted(_unknown)}")


def off(name: str) -> bool:
    """True when the guard or wall ``name`` is switched off (tests only).

    Raises:
        KeyError: ``name`` is not a known switch (a typo at a guard's read site).
    """
    if name not in GUARDS and name not in WALLS:
        raise KeyError(name)
    return name in OFF

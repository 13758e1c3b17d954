"""Pre-flight check of tool calls: wrong arguments fail before any tool runs.

Before a snippet runs, its syntax tree is searched for *direct calls of known tools by
name* (``get_weather(town="Oslo")``, the name not bound anywhere in the snippet) whose
positional count or keyword names the tool's signature cannot accept, and for calls of
names that are defined nowhere (not in the snippet, not a builtin, not a tool, not an
extra global or a session's global). Such a call fails every time it is reached, so the
execution fails at once, with the ``TypeError`` CPython would raise there (worded by the
tool's :class:`~ptcbox.projections.ArgumentBinder`, the signature in a PEP 678 note) or
the ``NameError`` with the closest tool names (:mod:`._name_hint`), on that line, and no
tool's side effect happens first (a retry of the whole snippet would otherwise repeat
them).

The check refuses only what CPython would also fail on, and only when it changes
something: a bad call is left to fail at run time, exactly as CPython fails it, when

- it sits inside a ``try`` whose handlers could catch the error (``except TypeError``,
  ``NameError``, ``Exception``, ``BaseException``, a bare ``except``, or a handler
  expression the check cannot read), or inside ``with suppress(...)``; a call inside a
  ``def`` or ``lambda`` counts as guarded when any ``try`` in the snippet could catch
  the error (the function may be called there);
- the snippet refers to no other tool (no other tool call could run before it, so the
  early failure would only lose the output printed before the error).

What the check cannot see (these fail at run time, as in CPython): calls through another
name (``f = get_weather; f(town=...)``), ``*args``/``**kwargs`` splats, calls through
variables, attributes or containers (``tools["x"]()``), names made dynamically, a tool
name the snippet rebinds anywhere, and (in a SubprocessRuntime session, whose globals
live in the worker) unknown names. Snippets over :data:`MAX_CHECKED_CHARS` characters,
or that do not parse, are not checked.
"""

from __future__ import annotations

import ast
import builtins
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ptcbox._result import CodeResult
from ptcbox.errors import CodeSizeLimitExceeded
from ptcbox.runtimes._shared._error_text import SNIPPET_FILENAME
from ptcbox.runtimes._shared._host import ToolSpec
from ptcbox.runtimes._shared._name_hint import name_hint
from ptcbox.runtimes._shared._preflight_walk import Site, Visitor, union
from ptcbox.sandbox._lru import LruCache

__all__ = [
    "MAX_CHECKED_CHARS",
    "PreflightFailure",
    "oversized",
    "preflight",
    "preflight_parsed",
    "refused",
]

MAX_CHECKED_CHARS = 100_000
"""Longest snippet checked (characters): parsing is linear, but runs on the host."""

_BUILTIN_NAMES = frozenset(dir(builtins))
_CATCH_ALL = frozenset({"Exception", "BaseException"})
_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_UNSEEN = object()


@dataclass(frozen=True, slots=True)
class PreflightFailure:
    """Why the snippet was not run: the error text and type for its ``CodeResult``."""

    error: str
    error_type: str


def oversized(code: str, max_code_chars: int, started: float) -> CodeResult | None:
    """The ``CodeResult`` of a snippet over the policy's ``max_code_chars``, else ``None``.

    Checked before anything is parsed or compiled: a compile cannot be interrupted by
    the time limit (see :class:`~ptcbox.errors.CodeSizeLimitExceeded`).
    """
    if len(code) <= max_code_chars:
        return None
    limit = CodeSizeLimitExceeded(max_code_chars, len(code))
    error = (
        f"{type(limit).__name__}: {limit}\nThe code was not run. Send a shorter snippet: "
        "split the work over several executions, and have tools return large data "
        "instead of writing it into the code."
    )
    return refused(PreflightFailure(error, type(limit).__name__), started)


def refused(failure: PreflightFailure, started: float) -> CodeResult:
    """The ``CodeResult`` of a snippet the check refused (``started``: perf_counter)."""
    return CodeResult(
        stdout="",
        stderr="",
        return_code=1,
        error=failure.error,
        error_type=failure.error_type,
        duration_s=time.perf_counter() - started,
    )


@dataclass(frozen=True, slots=True)
class _Analysis:
    sites: tuple[Site, ...]
    bound: frozenset[str]
    loaded: dict[str, int]  # name -> how many times it is read
    caught_anywhere: frozenset[str] | None
    lines: tuple[str, ...]


_ANALYSES: LruCache[str, _Analysis | None] = LruCache(256)
"""Source text -> its analysis (``None``: not checked)."""


def preflight(
    code: str, specs: Mapping[str, ToolSpec], known: Collection[str] | None
) -> PreflightFailure | None:
    """Check the snippet's direct tool calls before it runs (see the module docstring).

    Args:
        code: The snippet.
        specs: The execution's tools by name.
        known: Other names the snippet's globals have (extra globals, a session's
            names); ``None`` when they are not known here: unknown names are not checked.

    Returns:
        The failure to report, or ``None`` to run the snippet.
    """
    return preflight_parsed(code, specs, known)[0]


def preflight_parsed(
    code: str, specs: Mapping[str, ToolSpec], known: Collection[str] | None
) -> tuple[PreflightFailure | None, ast.Module | None]:
    """:func:`preflight`, and the syntax tree it parsed to check a new snippet.

    The tree (``None`` when nothing was parsed: no tools, a snippet over
    :data:`MAX_CHECKED_CHARS`, one that does not parse, or one checked before) is the
    caller's: :func:`~ptcbox.sandbox.compile_snippet` takes it to skip its own parse.
    """
    if not specs or len(code) > MAX_CHECKED_CHARS:
        return None, None
    tree = None
    analysis = _ANALYSES.get(code, _UNSEEN)
    if analysis is _UNSEEN:
        tree = _parse(code)
        analysis = None if tree is None else _analyse(code, tree)
        _ANALYSES.put(code, analysis)
    if not isinstance(analysis, _Analysis):
        return None, tree
    return _verdict(analysis, specs, known), tree


def _verdict(
    analysis: _Analysis, specs: Mapping[str, ToolSpec], known: Collection[str] | None
) -> PreflightFailure | None:
    errors: dict[int, TypeError] = {}  # direct tool calls that fail whatever runs first
    for index, site in enumerate(analysis.sites):
        spec = specs.get(site.name)
        if spec is not None and not site.splat and site.name not in analysis.bound:
            try:
                spec.binder.bind((None,) * site.positional, dict.fromkeys(site.keywords))
            except TypeError as exc:
                errors[index] = exc
    useful = _useful_references(analysis, specs, errors)
    for index, site in enumerate(analysis.sites):
        failure = _check(site, analysis, specs, known, errors.get(index), useful)
        if failure is not None:
            return failure
    return None


def _useful_references(
    analysis: _Analysis, specs: Mapping[str, ToolSpec], errors: dict[int, TypeError]
) -> int:
    """How often the snippet reads a tool name other than as a call that cannot work."""
    count = sum(
        times
        for tool, times in analysis.loaded.items()
        if tool in specs and tool not in analysis.bound
    )
    return count - len(errors)


def _check(  # noqa: PLR0917 - one site's facts
    site: Site,
    analysis: _Analysis,
    specs: Mapping[str, ToolSpec],
    known: Collection[str] | None,
    error: TypeError | None,
    useful: int,
) -> PreflightFailure | None:
    # Only worth refusing if some tool could run before this call (else CPython's own
    # failure at run time is the same, with the output printed before it kept).
    if useful <= 0:
        return None
    name = site.name
    if error is not None:
        if _guarded(site, analysis, "TypeError"):
            return None
        notes = [n for n in getattr(error, "__notes__", []) if isinstance(n, str)]
        return _failure(site, analysis, "TypeError", str(error), notes)
    if name in specs or known is None or name in known or name in _BUILTIN_NAMES:
        return None
    if name in analysis.bound or _guarded(site, analysis, "NameError"):
        return None
    hint = name_hint(name, specs.keys())
    notes = [hint] if hint else []
    return _failure(site, analysis, "NameError", f"name {name!r} is not defined", notes)


def _guarded(site: Site, analysis: _Analysis, error: str) -> bool:
    guards = site.guards
    if site.where != "<module>":  # the function may be called inside any try
        guards = union(guards, analysis.caught_anywhere)
    return guards is None or error in guards or not guards.isdisjoint(_CATCH_ALL)


def _failure(
    site: Site, analysis: _Analysis, kind: str, message: str, notes: list[str]
) -> PreflightFailure:
    lines = [
        "Traceback (most recent call last):",
        f'  File "{SNIPPET_FILENAME}", line {site.lineno}, in {site.where}',
    ]
    if 0 < site.lineno <= len(analysis.lines) and analysis.lines[site.lineno - 1].strip():
        lines.append("    " + analysis.lines[site.lineno - 1].strip())
    lines.append(f"{kind}: {message}")
    lines.extend(notes)
    lines.append("(found by a check of the code: no tool was called and nothing it did was kept)")
    return PreflightFailure("\n".join(lines), kind)


def _parse(code: str) -> ast.Module | None:
    try:
        tree: ast.Module = compile(code, SNIPPET_FILENAME, "exec", _FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree


def _analyse(code: str, tree: ast.Module) -> _Analysis | None:
    visitor = Visitor()
    try:
        visitor.visit(tree)
    except RecursionError:
        return None
    return _Analysis(
        tuple(visitor.sites),
        frozenset(visitor.bound),
        visitor.loaded,
        visitor.caught_anywhere,
        tuple(code.splitlines()),
    )

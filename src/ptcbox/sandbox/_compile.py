"""`compile_snippet`: source text to a code object, restricted or trusted, cached."""

from __future__ import annotations

import ast
import inspect
import types
from dataclasses import dataclass

from ptcbox.errors import PolicyViolation
from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._lru import LruCache
from ptcbox.sandbox._policy import SandboxPolicy
from ptcbox.sandbox._refusals import explain_compile_error
from ptcbox.sandbox._resume import add_resume_checks
from ptcbox.sandbox._transform import VALUE_NAME, PtcTransformer

__all__ = ["VALUE_NAME", "CompiledSnippet", "compile_snippet"]

_CACHE_SIZE = 256
_FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


@dataclass(frozen=True, slots=True)
class CompiledSnippet:
    """A compiled snippet, ready for ``exec``/``eval`` in :func:`build_globals` globals.

    Attributes:
        code: The module code object. When ``is_async``, ``eval(code, globals)`` returns
            a coroutine the caller must await (or run); otherwise ``exec(code, globals)``.
        is_async: The module itself awaits (top-level ``await``, ``async for`` or
            ``async with``).
        has_value: The last statement was an expression; the compiled code stores its
            value in ``globals[VALUE_NAME]``.
    """

    code: types.CodeType
    is_async: bool
    has_value: bool


def compile_snippet(
    code: str,
    policy: SandboxPolicy,
    *,
    filename: str = "<snippet>",
    os_enforced_limits: bool = False,
    cache: bool = True,
    tree: ast.Module | None = None,
) -> CompiledSnippet:
    """Compile a snippet under ``policy``.

    Restricted policies parse the code, run ptcbox's RestrictedPython-based transformer
    (guards, trailing value, async and ``match`` support) and compile the result; the
    trusted policy compiles the code as is, with only the trailing-value rewrite. Results
    are cached (LRU, 256 entries) on ``(code, policy.restricted, filename,
    os_enforced_limits)``: nothing else in the policy changes the code.

    Args:
        code: The snippet's source text.
        policy: The sandbox policy.
        filename: The name shown in tracebacks.
        os_enforced_limits: The OS bounds memory and CPU (``SubprocessRuntime``): the
            repetition and formatting size guards (``*``, ``%``, format widths) are
            compiled out so hot loops run at native speed. ``**`` and ``<<`` stay guarded
            where the exponent is not a small literal: one such C call would otherwise
            burn the whole timeout before failing. The ``_alive_.running`` checks (see
            :data:`~ptcbox.sandbox._alive.ALIVE_ATTR`) are left out too: a worker
            process dies with its execution, so no snippet code outlives it.
        cache: Use the LRU cache (``False``: compile, and keep nothing).
        tree: ``code`` already parsed by the caller (``ast.parse(code)``, or ``compile``
            with ``PyCF_ONLY_AST``, which gives the same tree), to save the parse when
            the snippet is not cached. It is changed in place (consumed): the caller
            must not use it afterwards, nor pass it twice. It must be the parse of
            ``code`` (the result is cached under ``code``, and the transform takes
            from the text what it rules out: see
            :class:`~ptcbox.sandbox._bindings.SourceFacts`).

    Returns:
        The compiled snippet.

    Raises:
        SyntaxError: The code does not parse (``lineno`` set).
        PolicyViolation: The code uses something the policy refuses; the message lists
            every refusal with its line.
        RecursionError: The code nests too deeply to compile (callers should report it
            like a syntax error).
        MemoryError: Pathological input.
        TypeError: ``code`` is not a str, or ``tree`` not an ``ast.Module``.
    """
    if not isinstance(code, str):
        raise TypeError(f"code must be str, got {type(code).__name__}")
    if tree is not None and not isinstance(tree, ast.Module):
        raise TypeError(f"tree must be an ast.Module, got {type(tree).__name__}")
    key = (code, policy.restricted, filename, os_enforced_limits)
    if cache:
        hit = _CACHE.get(key, None)
        if hit is not None:
            return hit
    compiled = _compile(*key, tree)
    if cache:
        _CACHE.put(key, compiled)
    return compiled


_RESUME_OFF = off("resume")  # test-only ablation (see _ablation)
_CACHE: LruCache[tuple[str, bool, str, bool], CompiledSnippet] = LruCache(_CACHE_SIZE)
"""(code, policy.restricted, filename, os_enforced_limits) -> the compiled snippet."""


def _compile(
    code: str, restricted: bool, filename: str, os_enforced_limits: bool, tree: ast.Module | None
) -> CompiledSnippet:
    if tree is None:
        tree = ast.parse(code, filename=filename, mode="exec", type_comments=False)
    if restricted:
        errors: list[str] = []
        transformer = PtcTransformer(
            errors,
            [],
            {},
            size_guards=not os_enforced_limits,
            alive_checks=not os_enforced_limits,
            resume_checks=not os_enforced_limits and not _RESUME_OFF,  # where code resumes (R1)
            source=code,
        )
        tree = transformer.visit(tree)
        if errors:
            raise PolicyViolation(
                "the sandbox refused this code:\n"
                + "\n".join(f"  {explain_compile_error(e)}" for e in errors)
            )
        has_value = transformer.has_value
        if transformer.resume_pass_needed:  # else the transform checked genexp steps
            add_resume_checks(tree)
    else:
        has_value = _store_trailing_value(tree)
    try:  # the transform gives its new nodes positions: no full fix-up pass (~15%)
        compiled = compile(tree, filename, "exec", flags=_FLAGS, dont_inherit=True)
    except (TypeError, ValueError) as exc:
        if "missing" not in str(exc):  # a node without a position: fill them all in
            raise
        ast.fix_missing_locations(tree)
        compiled = compile(tree, filename, "exec", flags=_FLAGS, dont_inherit=True)
    is_async = bool(compiled.co_flags & inspect.CO_COROUTINE)
    return CompiledSnippet(code=compiled, is_async=is_async, has_value=has_value)


def _store_trailing_value(tree: ast.Module) -> bool:
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return False
    last = tree.body[-1]
    store = ast.Assign(targets=[ast.Name(id=VALUE_NAME, ctx=ast.Store())], value=last.value)
    ast.copy_location(store, last)
    ast.fix_missing_locations(store)
    tree.body[-1] = store
    return True


def clear_compile_cache() -> None:
    """Empty the compile cache (tests and benchmarks)."""
    _CACHE.clear()

"""The builtins and size limits shared by executions with the same limits, cached.

Both :mod:`ptcbox.sandbox._globals` (which builds a snippet's namespace) and
:mod:`ptcbox.sandbox._modules` (whose module views need the sandbox's builtins) use
them; they live here, below both, so neither imports the other for them.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any

from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._builtins import make_base_builtins
from ptcbox.sandbox._exceptstar import EXCEPT_STAR_GUARD
from ptcbox.sandbox._limits import Limits
from ptcbox.sandbox._owner import register_class

__all__ = ["base_builtins", "cached_limits"]


@functools.lru_cache(maxsize=32)
def cached_limits(max_int_bits: int, max_repeat_bytes: int) -> Limits:
    """The :class:`~ptcbox.sandbox._limits.Limits` for these sizes, one per pair."""
    if off("size"):  # test-only ablation (see _ablation)
        max_int_bits = max_repeat_bytes = 1 << 62
    return Limits(max_int_bits, max_repeat_bytes)


@functools.lru_cache(maxsize=32)
def base_builtins(max_int_bits: int, max_repeat_bytes: int) -> dict[str, Any]:
    """The builtins shared by executions with these limits (``print``/``__import__`` are
    added per execution). Treat as read-only."""
    b = make_base_builtins(cached_limits(max_int_bits, max_repeat_bytes))
    if off("attribute"):  # test-only ablation (see _ablation): plain attribute reads
        b.update(getattr=getattr, hasattr=hasattr, _getattr_=getattr, _getattr_private_=getattr)
        b["vars"] = vars
    if off("write"):
        b.update(_write_=_same, _write_private_=_same, setattr=setattr, delattr=delattr)
    if off("metaclass"):
        b.update(__build_class__=_build_class_unchecked, type=type)
    if off("builtins"):  # the real ones, the namespace readers (_scope) included
        b.update({k: v for k, v in vars(builtins).items() if k not in b or k in _SCOPE})
    if off("except_star"):
        b[EXCEPT_STAR_GUARD] = _same
    return b


_SCOPE = frozenset({"dir", "globals", "locals", "vars"})


def _same(obj: Any) -> Any:
    return obj


def _build_class_unchecked(func: Any, name: Any, /, *bases: Any, **kwargs: Any) -> Any:
    """``__build_class__`` without the metaclass checks (ablation, tests only)."""
    cls = builtins.__build_class__(func, name, *bases, **kwargs)
    register_class(cls)
    return cls

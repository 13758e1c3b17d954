"""The builtins and size limits shared by executions with the same limits, cached.

Both :mod:`ptcbox.sandbox._globals` (which builds a snippet's namespace) and
:mod:`ptcbox.sandbox._modules` (whose module views need the sandbox's builtins) use
them; they live here, below both, so neither imports the other for them.
"""

from __future__ import annotations

import functools
from typing import Any

from ptcbox.sandbox._builtins import make_base_builtins
from ptcbox.sandbox._limits import Limits

__all__ = ["base_builtins", "cached_limits"]


@functools.lru_cache(maxsize=32)
def cached_limits(max_int_bits: int, max_repeat_bytes: int) -> Limits:
    """The :class:`~ptcbox.sandbox._limits.Limits` for these sizes, one per pair."""
    return Limits(max_int_bits, max_repeat_bytes)


@functools.lru_cache(maxsize=32)
def base_builtins(max_int_bits: int, max_repeat_bytes: int) -> dict[str, Any]:
    """The builtins shared by executions with these limits (``print``/``__import__`` are
    added per execution). Treat as read-only."""
    return make_base_builtins(cached_limits(max_int_bits, max_repeat_bytes))

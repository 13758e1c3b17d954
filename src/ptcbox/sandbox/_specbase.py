"""What module-view builders share: their context and the attribute-picking helpers."""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ptcbox.sandbox._limits import Limits, as_index
from ptcbox.sandbox._proxy import freeze
from ptcbox.sandbox._streams import NULL_STREAMS, Streams

__all__ = ["Attrs", "ModuleContext", "Spec", "ix", "only", "public"]

Attrs = dict[str, Any]
Spec = Callable[[types.ModuleType, "ModuleContext"], tuple[Attrs, dict[str, str]]]


@dataclass(frozen=True, slots=True)
class ModuleContext:
    """What restricted module builders need.

    Attributes:
        limits: The size limits.
        sleep: The execution's ``time.sleep`` replacement, or ``None``.
        builtins: The sandbox's builtins for these limits (its ``type``, ``bytes`` ...):
            a module re-exporting a builtin gets the sandbox's version.
        streams: The execution's standard streams (views that print write there);
            streams that discard everything for views built without an execution.
        own_process: The execution has the process to itself (a ``SubprocessRuntime``
            worker): process-wide state such as ``decimal.getcontext()`` is its own.
    """

    limits: Limits
    sleep: Callable[[float], None] | None
    builtins: Mapping[str, Any] = field(default_factory=dict)
    streams: Streams = NULL_STREAMS
    own_process: bool = False


def ix(value: Any) -> int:
    """An int argument, normalised once (``__index__`` read a single time).

    Raises:
        TypeError: ``value`` is not an integer.
    """
    n = as_index(value)
    if n is None:
        raise TypeError(f"{type(value).__name__!r} object cannot be interpreted as an integer")
    return n


def public(module: types.ModuleType, skip: set[str] | frozenset[str] = frozenset()) -> Attrs:
    """The module's public, non-module attributes (mutable containers frozen)."""
    return {
        k: freeze(v)
        for k, v in vars(module).items()
        if not k.startswith("_") and k not in skip and not isinstance(v, types.ModuleType)
    }


def only(module: types.ModuleType, names: tuple[str, ...]) -> Attrs:
    """Just ``names`` of the module (those it has)."""
    return {n: getattr(module, n) for n in names if hasattr(module, n)}

"""Host side of both runtimes: the timeout default and the table of tools.

The worker process never imports this module: it sees tools only as names on the wire.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ptcbox._jsonable import to_jsonable
from ptcbox.projections import (
    ArgumentBinder,
    DirectProjection,
    ToolProjection,
    binder_for,
    validate_namespace,
)
from ptcbox.runtimes._shared._awaitable import check_argument
from ptcbox.runtimes._shared._value import (
    MAX_TOOL_DATA_BYTES,
    argument_size_error,
    json_size_over,
)

__all__ = [
    "ToolSpec",
    "ToolTable",
    "jsonable_arguments",
    "resolve_timeout",
    "runs_on_loop",
]

_SMALL_INT = 1 << 62


def resolve_timeout(timeout: float | None, default: float) -> float:
    """Return the timeout to use, in seconds.

    Args:
        timeout: The caller's timeout in seconds, or ``None`` for ``default``.
        default: The policy's timeout in seconds.

    Returns:
        A positive number of seconds (``math.inf`` allowed).

    Raises:
        TypeError: If ``timeout`` is not a number.
        ValueError: If ``timeout`` is zero, negative or NaN.
    """
    if timeout is None:
        return default
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise TypeError(f"timeout must be a number of seconds, got {type(timeout).__name__}")
    if math.isnan(timeout) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def runs_on_loop(projection: ToolProjection) -> bool:
    """Whether ``projection`` is known to return an awaitable (it runs on the event loop)."""
    flag = getattr(projection, "is_async", None)
    if isinstance(flag, bool):
        return flag
    if inspect.iscoroutinefunction(projection) or inspect.iscoroutinefunction(
        getattr(type(projection), "__call__", None)  # noqa: B004 - the method, not callable()
    ):
        return True
    return inspect.iscoroutinefunction(getattr(projection, "fn", None))


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as a runtime calls it.

    Attributes:
        name: The tool's name.
        projection: The projection to call with keyword arguments.
        binder: Its argument binder (``binder_for(projection)``).
        call: What to call with the bound keyword arguments: the projection, or the
            function of a :class:`~ptcbox.DirectProjection` (one call frame less).
        is_async: ``True`` when the projection is known to return an awaitable (it is
            called on the host's event loop); ``False`` when it is (or may be) sync.
        scoped: ``True`` when the projection asks for the call's
            :class:`~ptcbox.runtimes._shared._clock.CallScope` (its ``call_scope``
            attribute is ``True``): it is called with the scope current.
    """

    name: str
    projection: ToolProjection
    binder: ArgumentBinder
    call: Callable[..., Any]
    is_async: bool
    scoped: bool = False


class ToolTable:
    """Validates namespaces and caches one :class:`ToolSpec` per projection object.

    The cache keeps the projections it saw alive (keyed by ``id``) and is cleared when it
    holds more than ``max_entries``, so a host that builds new projections per call does
    not grow it without bound.

    Args:
        max_entries: Projections to remember.
    """

    __slots__ = ("_cache", "_max_entries")

    def __init__(self, max_entries: int = 1024) -> None:
        self._cache: dict[int, ToolSpec] = {}
        self._max_entries = max_entries

    def resolve(self, namespace: Mapping[str, ToolProjection]) -> dict[str, ToolSpec]:
        """Check ``namespace`` and return its tool specs by name.

        Args:
            namespace: Tool name to projection.

        Returns:
            A new dict of name to :class:`ToolSpec`.

        Raises:
            ValueError: If a key and its projection's name differ, or a name is not a
                usable identifier (see :func:`ptcbox.validate_namespace`).
            TypeError: If a value is not a projection, or ``namespace`` not a mapping.
        """
        if not isinstance(namespace, Mapping):
            raise TypeError(
                f"namespace must be a mapping of tool name to projection, "
                f"got {type(namespace).__name__}"
            )
        cache = self._cache
        specs: dict[str, ToolSpec] = {}
        for key, projection in namespace.items():
            spec = cache.get(id(projection))
            if spec is None or spec.projection is not projection or spec.name != key:
                validate_namespace({key: projection})
                call = projection.fn if type(projection) is DirectProjection else projection
                spec = ToolSpec(
                    key,
                    projection,
                    binder_for(projection),
                    call,
                    runs_on_loop(projection),
                    getattr(projection, "call_scope", False) is True,
                )
                if len(cache) >= self._max_entries:
                    cache.clear()
                cache[id(projection)] = spec
            specs[key] = spec
        return specs


def jsonable_arguments(arguments: dict[str, Any], tool: str | None = None) -> dict[str, Any]:
    """Convert bound tool arguments to JSON-compatible data for a ``ToolCallRecord``.

    Returns ``arguments`` itself when every value already is plain JSON data (ASCII
    strings, small ints, finite floats, bools, ``None``), else a converted copy.

    Args:
        arguments: The bound keyword arguments.
        tool: The tool's name when the snippet is calling it now: then an un-awaited
            tool call as an argument, or arguments over
            :data:`~ptcbox.runtimes._shared._value.MAX_TOOL_DATA_BYTES` of JSON, raise.

    Raises:
        TypeError: An argument is an un-awaited tool call (only with ``tool``).
        ValueError: The arguments are too large (only with ``tool``).
    """
    text_size = 0
    for value in arguments.values():
        kind = type(value)
        if kind is str:
            if value.isascii():
                text_size += len(value)
                continue
        elif kind is int:
            if -_SMALL_INT < value < _SMALL_INT:
                continue
        elif kind is bool or value is None or (kind is float and math.isfinite(value)):
            continue
        break
    else:
        if tool is not None and text_size > MAX_TOOL_DATA_BYTES:
            raise argument_size_error(tool, text_size)
        return arguments
    if tool is not None:
        for value in arguments.values():
            check_argument(tool, value)
        over = json_size_over(arguments, MAX_TOOL_DATA_BYTES)
        if over:
            raise argument_size_error(tool, over)
    return {key: to_jsonable(item) for key, item in arguments.items()}

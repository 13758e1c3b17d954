"""Normalising the ``tools=`` argument of :func:`ptcbox.execute` into a namespace."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ptcbox.projections import DirectProjection, ToolProjection, validate_namespace

__all__ = ["resolve_tools"]


def resolve_tools(tools: object) -> dict[str, ToolProjection]:
    """Turn any accepted ``tools=`` value into a checked namespace of projections.

    Accepted forms:

    * ``None``: no tools.
    * a mapping of name to projection or plain callable (a callable is wrapped in
      :class:`~ptcbox.DirectProjection` under its key);
    * a list or tuple of plain functions (name from ``__name__``, description from the
      docstring), of projections (name from ``.name``), or a mix;
    * an object with a ``projections()`` method returning a mapping or an iterable of
      projections (such as the agent glue's ``ToolRegistry``).

    Args:
        tools: One of the forms above.

    Returns:
        A new dict of tool name to projection, checked with
        :func:`~ptcbox.validate_namespace`.

    Raises:
        TypeError: For any other kind of value (a single function, a string, a set ...),
            or an entry that is neither a projection nor callable, or a callable with no
            ``__name__`` (such as ``functools.partial``).
        ValueError: For a lambda in a list (it has no usable name), two tools with the
            same name, a mapping key that differs from its projection's name, or a name
            that is not a valid identifier, is a keyword or starts with an underscore.
    """
    if tools is None:
        return {}
    provider = getattr(tools, "projections", None)
    if callable(provider) and not isinstance(tools, type):
        namespace = _from_provider(provider(), type(tools).__name__)
    elif isinstance(tools, Mapping):
        namespace = _from_mapping(tools)
    elif isinstance(tools, list | tuple):
        namespace = _from_sequence(tools)
    elif callable(tools) or isinstance(tools, ToolProjection):
        label = getattr(tools, "name", None) or getattr(tools, "__name__", "tool")
        raise TypeError(f"tools= got a single tool ({label!r}); pass a list: tools=[{label}]")
    else:
        raise TypeError(
            "tools= accepts a mapping of name to tool, a list or tuple of functions or "
            "projections, or an object with a projections() method (a ToolRegistry); got "
            f"{type(tools).__name__}"
        )
    validate_namespace(namespace)
    return namespace


def _from_mapping(tools: Mapping[Any, Any]) -> dict[str, ToolProjection]:
    namespace: dict[str, ToolProjection] = {}
    for key, value in tools.items():
        if not isinstance(key, str):
            raise TypeError(f"tool names must be strings, got the key {key!r}")
        if isinstance(value, ToolProjection):
            namespace[key] = value
        elif callable(value):
            namespace[key] = DirectProjection(name=key, fn=value)
        else:
            raise TypeError(f"tools[{key!r}] is not callable (got {type(value).__name__})")
    return namespace


def _from_sequence(tools: list[Any] | tuple[Any, ...]) -> dict[str, ToolProjection]:
    namespace: dict[str, ToolProjection] = {}
    where: dict[str, int] = {}
    for index, item in enumerate(tools):
        projection = _as_projection(item, index)
        name = projection.name
        if name in where:
            raise ValueError(
                f"two tools are named {name!r} (tools[{where[name]}] and tools[{index}]); "
                "pass a mapping to give them distinct names"
            )
        where[name] = index
        namespace[name] = projection
    return namespace


def _as_projection(item: object, index: int) -> ToolProjection:
    if isinstance(item, ToolProjection):
        return item
    if not callable(item):
        raise TypeError(f"tools[{index}] is not a function or tool (got {type(item).__name__})")
    name = getattr(item, "__name__", None)
    if not isinstance(name, str):
        raise TypeError(
            f"tools[{index}] ({type(item).__name__}) has no __name__; pass a mapping "
            "{'name': fn} or DirectProjection(name=..., fn=...)"
        )
    if name == "<lambda>":
        raise ValueError(
            f"tools[{index}] is a lambda, which has no name the code could call; use a "
            "def, or a mapping {'name': fn}"
        )
    return DirectProjection(name=name, fn=item)


def _from_provider(provided: object, owner: str) -> dict[str, ToolProjection]:
    if isinstance(provided, Mapping):
        return _from_mapping(provided)
    if isinstance(provided, Iterable) and not isinstance(provided, str | bytes):
        items = list(provided)
        for index, item in enumerate(items):
            if not isinstance(item, ToolProjection):
                raise TypeError(
                    f"{owner}.projections() item {index} is not a ToolProjection "
                    f"(got {type(item).__name__})"
                )
        return _from_sequence(items)
    raise TypeError(
        f"{owner}.projections() returned a {type(provided).__name__}; expected a mapping "
        "or an iterable of projections"
    )

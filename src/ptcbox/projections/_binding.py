"""Binding a snippet's call arguments to a tool's parameters.

Runtimes turn ``search("cats", limit=3)`` into keyword arguments
``{"query": "cats", "limit": 3}`` using the projection's signature, and raise a
``TypeError`` that names the signature when the arguments do not fit. The fast path
(keywords only, all known, all required present) avoids ``inspect.Signature.bind``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ptcbox.projections._protocol import ToolProjection

__all__ = ["ArgumentBinder", "binder_for"]

_KEYWORDABLE = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class ArgumentBinder:
    """Binds call arguments for one projection.

    Args:
        name: The tool's name, used in error messages.
        signature: The tool's signature, or ``None`` when unknown (keywords accepted as
            given; positional arguments refused).
    """

    __slots__ = ("_accepts_any_keyword", "_name", "_names", "_required", "_signature", "_text")

    def __init__(self, name: str, signature: inspect.Signature | None) -> None:
        self._name = name
        self._signature = signature
        if signature is None:
            self._names: frozenset[str] = frozenset()
            self._required: frozenset[str] = frozenset()
            self._accepts_any_keyword = True
            self._text = f"{name}(**kwargs)"
            return
        params = list(signature.parameters.values())
        self._names = frozenset(p.name for p in params if p.kind in _KEYWORDABLE)
        self._required = frozenset(
            p.name for p in params if p.kind in _KEYWORDABLE and p.default is p.empty
        )
        self._accepts_any_keyword = any(p.kind is p.VAR_KEYWORD for p in params)
        self._text = f"{name}{signature.replace(return_annotation=inspect.Signature.empty)}"

    @property
    def signature(self) -> inspect.Signature | None:
        """The signature arguments are bound by, or ``None`` (keywords only)."""
        return self._signature

    @property
    def signature_text(self) -> str:
        """The call signature as shown in errors, e.g. ``search(query: str, limit: int = 10)``."""
        return self._text

    def bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Return the keyword arguments for a call.

        Args:
            args: Positional arguments as the snippet passed them.
            kwargs: Keyword arguments as the snippet passed them.

        Returns:
            A new dict of parameter name to value.

        Raises:
            TypeError: If the arguments do not fit the signature; the message names the
                tool's signature and what was wrong.
        """
        if (
            not args
            and (self._accepts_any_keyword or kwargs.keys() <= self._names)
            and self._required <= kwargs.keys()
        ):
            return dict(kwargs)
        if self._signature is None:
            raise TypeError(
                f"{self._name}() takes keyword arguments only; call it as "
                f"{self._name}(name=value, ...)"
            )
        unknown = [key for key in kwargs if key not in self._names]
        if unknown and not self._accepts_any_keyword:
            raise TypeError(f"{self._text}: got an unexpected keyword argument {unknown[0]!r}")
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self._text}: {exc}") from None
        out: dict[str, Any] = {}
        for param_name, value in bound.arguments.items():
            param = self._signature.parameters[param_name]
            if param.kind is param.VAR_POSITIONAL:
                if value:
                    raise TypeError(
                        f"{self._text}: extra positional arguments cannot be passed to a tool"
                    )
            elif param.kind is param.VAR_KEYWORD:
                out.update(value)
            elif param.kind is param.POSITIONAL_ONLY:
                raise TypeError(
                    f"{self._text}: positional-only parameter {param_name!r} cannot be "
                    "passed to a tool by keyword"
                )
            else:
                out[param_name] = value
        return out


def binder_for(projection: ToolProjection) -> ArgumentBinder:
    """Build the :class:`ArgumentBinder` for a projection.

    Uses the projection's ``signature`` attribute when it has one, else
    ``inspect.signature(projection)`` when that names real parameters. Projections that
    inject parameters of their own (such as a tool context) expose a ``signature``
    without them.

    Args:
        projection: Any :class:`ToolProjection`.

    Returns:
        A binder; cheap to call many times.
    """
    signature = getattr(projection, "signature", None)
    if not isinstance(signature, inspect.Signature):
        try:
            signature = inspect.signature(projection)
        except (TypeError, ValueError):
            signature = None
        if signature is not None and all(
            p.kind is p.VAR_KEYWORD for p in signature.parameters.values()
        ):
            signature = None
    return ArgumentBinder(projection.name, signature)

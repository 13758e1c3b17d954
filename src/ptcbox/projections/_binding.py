"""Binding a snippet's call arguments to a tool's parameters.

Runtimes turn ``search("cats", limit=3)`` into keyword arguments
``{"query": "cats", "limit": 3}`` using the projection's signature. When the arguments do
not fit, the ``TypeError`` is worded exactly as CPython words it for a function of that
signature (``search() got an unexpected keyword argument 'q'``, ``missing 1 required
positional argument: 'query'`` ...), because CPython produces it: the binder compiles a
stub function with the tool's parameters (names, kinds, which have defaults; no
annotations, no default values) and calls it. ``inspect.Signature.bind`` words these
errors differently. The tool's full signature goes into a PEP 678 note on the error
(``e.add_note``), which tracebacks and ``CodeResult.render()`` show. The fast path
(keywords only, all known, all required present) calls nothing.
"""

from __future__ import annotations

import inspect
import keyword
from collections.abc import Callable, Mapping
from typing import Any

from ptcbox.projections._protocol import ToolProjection

__all__ = ["ArgumentBinder", "binder_for"]

_KEYWORDABLE = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_MISSING_NAME = "__ptc_missing__"


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


class ArgumentBinder:
    """Binds call arguments for one projection.

    Args:
        name: The tool's name, used in error messages.
        signature: The tool's signature, or ``None`` when unknown (keywords accepted as
            given; positional arguments refused, as by ``def name(**kwargs)``).
    """

    __slots__ = (
        "_accepts_any_keyword",
        "_name",
        "_names",
        "_required",
        "_signature",
        "_stub",
        "_text",
    )

    def __init__(self, name: str, signature: inspect.Signature | None) -> None:
        self._name = name
        self._signature = signature
        if signature is None:
            self._names: frozenset[str] = frozenset()
            self._required: frozenset[str] = frozenset()
            self._accepts_any_keyword = True
            self._text = f"{name}(**kwargs)"
        else:
            params = list(signature.parameters.values())
            self._names = frozenset(p.name for p in params if p.kind in _KEYWORDABLE)
            self._required = frozenset(
                p.name for p in params if p.kind in _KEYWORDABLE and p.default is p.empty
            )
            self._accepts_any_keyword = any(p.kind is p.VAR_KEYWORD for p in params)
            self._text = f"{name}{signature.replace(return_annotation=inspect.Signature.empty)}"
        self._stub = _compile_stub(name, signature)

    @property
    def signature(self) -> inspect.Signature | None:
        """The signature arguments are bound by, or ``None`` (keywords only)."""
        return self._signature

    @property
    def signature_text(self) -> str:
        """The call signature as shown in errors, e.g. ``search(query: str, limit: int = 10)``."""
        return self._text

    @property
    def note(self) -> str:
        """The PEP 678 note an argument error carries: the tool's signature."""
        return f"tool signature: {self._text}"

    def bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Return the keyword arguments for a call.

        Args:
            args: Positional arguments as the snippet passed them.
            kwargs: Keyword arguments as the snippet passed them.

        Returns:
            A new dict of parameter name to value.

        Raises:
            TypeError: If the arguments do not fit the signature, worded as CPython
                words it, with the tool's signature in a note (``__notes__``).
        """
        if (
            not args
            and (self._accepts_any_keyword or kwargs.keys() <= self._names)
            and self._required <= kwargs.keys()
        ):
            return dict(kwargs)
        try:
            return self._bind(args, kwargs)
        except TypeError as exc:
            error = TypeError(str(exc))
        error.add_note(self.note)
        raise error

    def _bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        if self._stub is None:  # parameter names no stub can have: inspect's binding
            assert self._signature is not None
            try:
                bound = self._signature.bind(*args, **kwargs).arguments
            except TypeError as exc:
                raise TypeError(f"{self._name}() {exc}") from None
        else:
            bound = self._stub(*args, **kwargs)
        signature = self._signature
        out: dict[str, Any] = {}
        for param_name, value in bound.items():
            if value is _MISSING:
                continue
            param = signature.parameters[param_name] if signature is not None else None
            if param is None or param.kind is param.VAR_KEYWORD:
                out.update(value)
            elif param.kind is param.VAR_POSITIONAL:
                if value:
                    raise TypeError(
                        f"{self._name}() got {len(value)} extra positional argument(s); "
                        "a tool takes no *args: pass them by name"
                    )
            elif param.kind is param.POSITIONAL_ONLY:
                raise TypeError(
                    f"{self._name}() has a positional-only parameter {param_name!r}, which "
                    "cannot be passed to a tool"
                )
            else:
                out[param_name] = value
        return out


def _compile_stub(
    name: str, signature: inspect.Signature | None
) -> Callable[..., dict[str, Any]] | None:
    """A function named ``name`` with the signature's parameters that returns its locals.

    Defaults are a sentinel (so only passed arguments come back) and annotations are
    left out; the source is built from parameter names only, each checked to be an
    identifier and no keyword. ``None`` when a name cannot be one.
    """
    if not _usable(name):
        return None
    if signature is None:
        params = [inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)]
    else:
        params = list(signature.parameters.values())
    pieces: list[str] = []
    star = False
    for index, param in enumerate(params):
        if not _usable(param.name):
            return None
        text = param.name
        if param.kind is param.VAR_POSITIONAL:
            text, star = "*" + text, True
        elif param.kind is param.VAR_KEYWORD:
            text = "**" + text
        elif param.kind is param.KEYWORD_ONLY and not star:
            pieces.append("*")
            star = True
        if param.default is not param.empty:
            text += "=" + _MISSING_NAME
        pieces.append(text)
        following = params[index + 1] if index + 1 < len(params) else None
        if param.kind is param.POSITIONAL_ONLY and (
            following is None or following.kind is not param.POSITIONAL_ONLY
        ):
            pieces.append("/")
    names = ", ".join(f"{p.name!r}: {p.name}" for p in params)
    source = f"def {name}({', '.join(pieces)}):\n    return {{{names}}}\n"
    namespace: dict[str, Any] = {_MISSING_NAME: _MISSING, "__builtins__": {}}
    try:
        exec(compile(source, f"<signature of {name}>", "exec"), namespace)
    except SyntaxError:  # pragma: no cover - every name was checked
        return None
    stub: Callable[..., dict[str, Any]] = namespace[name]
    return stub


def _usable(name: str) -> bool:
    return (
        isinstance(name, str)
        and name.isidentifier()
        and not keyword.iskeyword(name)
        and name != _MISSING_NAME
    )


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

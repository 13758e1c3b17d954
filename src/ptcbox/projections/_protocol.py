"""How a tool appears inside a snippet: the :class:`ToolProjection` protocol.

The contract comes from the toolregistry ``runtimes`` design: a projection is a named,
documented callable that takes keyword arguments. :class:`DirectProjection` wraps a plain
function; the agent glue adds validated projections on top of the same protocol.
"""

from __future__ import annotations

import inspect
import keyword
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = ["DirectProjection", "ToolProjection", "validate_namespace"]


@runtime_checkable
class ToolProjection(Protocol):
    """A tool as the snippet sees it.

    A projection may also expose ``signature: inspect.Signature | None``; runtimes use it
    to bind positional arguments and to report wrong arguments. ``__call__`` may return an
    awaitable (an async tool); runtimes await it on the host's event loop.
    """

    @property
    def name(self) -> str:
        """The name the snippet calls the tool by (a Python identifier)."""
        ...

    @property
    def doc(self) -> str | None:
        """What the tool does, for stubs and for ``help()``; ``None`` when unknown."""
        ...

    def __call__(self, **kwargs: Any) -> Any:
        """Run the tool with keyword arguments and return its result."""
        ...


class DirectProjection:
    """Expose a plain function (sync or async) as a tool, calling it directly.

    Args:
        name: The name the snippet calls it by; must be a valid, non-keyword identifier.
        fn: The function. A coroutine function is awaited by the runtime on the host's
            event loop (ThreadRuntime: ``anyio.from_thread``; SubprocessRuntime: the host
            side of the IPC channel).
        doc: Description for stubs; defaults to ``inspect.getdoc(fn)``.

    Example:
        >>> def add(a: int, b: int) -> int:
        ...     return a + b
        >>> DirectProjection(name="add", fn=add)(a=1, b=2)
        3
    """

    __slots__ = ("_doc", "_fn", "_name", "_signature")

    def __init__(self, name: str, fn: Callable[..., Any], doc: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self._name = name
        self._fn = fn
        self._doc = doc if doc is not None else inspect.getdoc(fn)
        self._signature = _signature_of(fn)

    @property
    def name(self) -> str:
        """The tool's name."""
        return self._name

    @property
    def doc(self) -> str | None:
        """The tool's description, or ``None``."""
        return self._doc

    @property
    def fn(self) -> Callable[..., Any]:
        """The wrapped function."""
        return self._fn

    @property
    def signature(self) -> inspect.Signature | None:
        """The function's signature, or ``None`` when Python cannot tell it."""
        return self._signature

    @property
    def is_async(self) -> bool:
        """``True`` when the function is a coroutine function."""
        return inspect.iscoroutinefunction(self._fn)

    def __call__(self, **kwargs: Any) -> Any:
        """Call the function with keyword arguments; an async function returns a coroutine."""
        return self._fn(**kwargs)

    def __repr__(self) -> str:
        return f"DirectProjection(name={self._name!r}, fn={self._fn!r})"


def _signature_of(fn: Callable[..., Any]) -> inspect.Signature | None:
    """The signature with string annotations resolved where possible.

    Under ``from __future__ import annotations`` a plain ``inspect.signature`` shows
    ``limit: 'int'``; stubs and argument errors should read ``limit: int``.
    """
    try:
        return inspect.signature(fn, eval_str=True)
    except (TypeError, ValueError):
        return None
    except Exception:  # an annotation that does not evaluate (e.g. a TYPE_CHECKING name)
        try:
            return inspect.signature(fn)
        except (TypeError, ValueError):
            return None


def validate_namespace(namespace: Mapping[str, ToolProjection]) -> None:
    """Check that a namespace of projections is well-formed.

    Args:
        namespace: Mapping of tool name to projection.

    Raises:
        ValueError: If a key differs from its projection's ``name``, or a name is not a
            valid Python identifier, is a keyword, or starts with an underscore (the
            sandbox refuses such names inside snippets).
        TypeError: If a value is not a :class:`ToolProjection`.
    """
    for key, projection in namespace.items():
        if not isinstance(projection, ToolProjection):
            raise TypeError(
                f"namespace[{key!r}] is a {type(projection).__name__}, not a ToolProjection "
                "(it needs name, doc and __call__(**kwargs))"
            )
        if key != projection.name:
            raise ValueError(
                f"namespace key {key!r} does not match projection name {projection.name!r}"
            )
        if not isinstance(key, str) or not key.isidentifier():
            raise ValueError(f"tool name {key!r} is not a valid Python identifier")
        if keyword.iskeyword(key) or keyword.issoftkeyword(key):
            raise ValueError(f"tool name {key!r} is a Python keyword")
        if key.startswith("_"):
            raise ValueError(
                f"tool name {key!r} starts with an underscore, which snippets cannot call"
            )

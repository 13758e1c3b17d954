"""What a tool call returns inside running asyncio code: :class:`AwaitableToolCall`.

Inside a coroutine (or a snippet with top-level ``await``) a tool call cannot block the
event loop, so it returns an awaitable. Model-written code often forgets the ``await``
(``u = get_user(id="u1")`` then ``u["name"]``); a bare coroutine would then fail with
``'coroutine' object is not subscriptable`` and a ``RuntimeWarning`` about ptcbox's
internals. This object instead raises a ``TypeError`` that says what to write, on every
misuse (subscript, iteration, attribute access, ``len``, ``bool``, ``str``/``format``,
comparison, arithmetic, calling it).

Eager start: the runtime starts the call when the tool is called, like
``asyncio.create_task``, so a call that is never awaited still runs (and is in the
trace). Before the execution ends the runtime waits for such calls, within the time
limit, and notes each one on stderr (:func:`unawaited_notes`). Both runtimes use this
class; it implements the coroutine protocol (``send``/``throw``/``close``), so
``asyncio.create_task``, ``gather``, ``wait_for`` and ``TaskGroup`` accept it.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Generator
from typing import Any, NoReturn

__all__ = ["AwaitableToolCall", "check_argument", "misuse_message", "unawaited_notes"]

_NEW, _AWAITED, _MISUSED = 0, 1, 2
_MAX_NOTES = 5
# Attribute names asyncio, inspect and similar introspection probe with getattr/hasattr;
# they must see an AttributeError, not a TypeError.
_PROBED_PREFIXES = ("_", "cr_", "gi_", "ag_")


def misuse_message(name: str, action: str) -> str:
    """The ``TypeError`` text for using ``name(...)``'s awaitable without awaiting it.

    Args:
        name: The tool's name.
        action: What the code tried, e.g. ``"subscripting it"``.
    """
    return (
        f"{name}(...) was called inside async code, where tool calls return awaitables: "
        f"write `await {name}(...)` (or gather several with `await asyncio.gather(...)`) "
        f"before {action}"
    )


class AwaitableToolCall(collections.abc.Coroutine):  # type: ignore[type-arg]
    """The result of a tool call made inside running asyncio code; await it for the value.

    The call has already started when this object exists. Awaiting it (directly, or
    through ``asyncio.gather``/``create_task``) returns the tool's value or raises its
    ``ToolError``; any other use raises a ``TypeError`` that says to write
    ``await tool(...)``.

    Args:
        name: The tool's name.
        wait: Returns a fresh generator that waits for the call's reply (the runtime's
            part: it yields asyncio futures and returns the value).
    """

    __slots__ = ("_ptc_gen", "_ptc_name", "_ptc_state", "_ptc_wait")

    def __init__(self, name: str, wait: Callable[[], Generator[Any, None, Any]]) -> None:
        self._ptc_name = name
        self._ptc_wait = wait
        self._ptc_state = _NEW
        self._ptc_gen: Generator[Any, None, Any] | None = None

    # Runtime-facing state, under names a restricted snippet cannot read.
    @property
    def _ptc_awaited(self) -> bool:
        """``True`` once something awaited (or started driving) this call."""
        return self._ptc_state == _AWAITED

    @property
    def _ptc_unawaited(self) -> bool:
        """``True`` when nothing awaited this call and the code did not misuse it."""
        return self._ptc_state == _NEW

    def _ptc_start(self) -> Generator[Any, None, Any]:
        gen = self._ptc_gen
        if gen is None:
            self._ptc_state = _AWAITED
            gen = self._ptc_gen = self._ptc_wait()
        return gen

    # --- the coroutine protocol -----------------------------------------------------
    def __await__(self) -> Generator[Any, None, Any]:
        if self._ptc_gen is not None:
            raise RuntimeError(f"{self._ptc_name}(...) was already awaited")
        return self._ptc_start()

    def send(self, value: Any) -> Any:
        """Drive the call (what an asyncio task does)."""
        return self._ptc_start().send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        """Throw an exception (a cancellation) into the waiting call."""
        gen = self._ptc_start()
        if val is None and tb is None:
            return gen.throw(typ)
        return gen.throw(typ, val, tb)  # pragma: no cover - the deprecated signature

    def close(self) -> None:
        """Stop waiting (the call itself is not undone)."""
        if self._ptc_gen is not None:
            self._ptc_gen.close()

    def __repr__(self) -> str:
        return f"<awaitable {self._ptc_name}(...) call: write `await {self._ptc_name}(...)`>"

    # --- every other use is a mistake ----------------------------------------------
    def _ptc_misuse(self, action: str) -> NoReturn:
        if self._ptc_state == _NEW:
            self._ptc_state = _MISUSED
        raise TypeError(misuse_message(self._ptc_name, action))

    def __getattr__(self, name: str) -> Any:
        if name.startswith(_PROBED_PREFIXES):
            raise AttributeError(name)
        self._ptc_misuse(f"reading its attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_ptc_"):
            self._ptc_misuse(f"setting its attribute {name!r}")
        object.__setattr__(self, name, value)

    def __getitem__(self, key: Any) -> NoReturn:
        self._ptc_misuse("subscripting it")

    def __setitem__(self, key: Any, value: Any) -> NoReturn:
        self._ptc_misuse("assigning items of it")

    def __delitem__(self, key: Any) -> NoReturn:
        self._ptc_misuse("deleting items of it")

    def __iter__(self) -> NoReturn:
        self._ptc_misuse("iterating over it")

    def __aiter__(self) -> NoReturn:
        self._ptc_misuse("iterating over it")

    def __contains__(self, item: Any) -> NoReturn:
        self._ptc_misuse("testing membership in it")

    def __len__(self) -> NoReturn:  # noqa: PLE0303 - it always raises
        self._ptc_misuse("taking its len()")

    def __bool__(self) -> NoReturn:  # noqa: PLE0304 - it always raises
        self._ptc_misuse("testing its truth value")

    def __str__(self) -> NoReturn:  # noqa: PLE0307 - it always raises
        self._ptc_misuse("converting it to text")

    def __format__(self, spec: str) -> NoReturn:
        self._ptc_misuse("formatting it")

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._ptc_misuse("calling it")

    def __int__(self) -> NoReturn:
        self._ptc_misuse("converting it to int")

    def __float__(self) -> NoReturn:
        self._ptc_misuse("converting it to float")

    def __index__(self) -> NoReturn:  # noqa: PLE0305 - it always raises
        self._ptc_misuse("using it as an index")

    def __hash__(self) -> int:
        return object.__hash__(self)  # identity: asyncio keeps awaitables in dicts/sets

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        self._ptc_misuse("comparing it")

    def __ne__(self, other: object) -> bool:
        if other is self:
            return False
        self._ptc_misuse("comparing it")

    def _ptc_binary(self, *args: Any) -> NoReturn:
        self._ptc_misuse("computing with it")

    __lt__ = __le__ = __gt__ = __ge__ = _ptc_binary
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _ptc_binary
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _ptc_binary
    __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _ptc_binary
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _ptc_binary
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _ptc_binary
    __neg__ = __pos__ = __abs__ = __invert__ = _ptc_binary


def check_argument(tool: str, value: Any) -> None:
    """Raise ``TypeError`` if ``value`` (an argument of ``tool``) is an un-awaited call."""
    if type(value) is AwaitableToolCall:
        value._ptc_misuse(f"passing it to {tool}(...)")


def unawaited_notes(calls: list[tuple[str, str | None]]) -> str:
    """The stderr text for calls that were never awaited (and not misused).

    Args:
        calls: ``(tool name, error or None)`` per such call, in call order.

    Returns:
        One line per call (at most five, then a count), or ``""``.
    """
    lines = []
    for name, error in calls[:_MAX_NOTES]:
        outcome = f"it failed: {error}" if error is not None else "its result was not used"
        lines.append(
            f"note: {name}(...) was called without `await` in async code; the call ran, "
            f"but {outcome} (write `await {name}(...)`)\n"
        )
    if len(calls) > _MAX_NOTES:
        lines.append(f"note: ... and {len(calls) - _MAX_NOTES} more calls without `await`\n")
    return "".join(lines)

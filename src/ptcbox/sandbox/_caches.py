"""Process-wide caches of the standard library that snippets must not fill (issue 12).

A cache shared by the whole process keeps what it is given after the execution that gave
it ends, and hands it to whoever asks with an *equal* key. A snippet controls equality
(``__eq__``/``__hash__`` of its own classes), so an entry it makes can be returned to
another execution or to the host: ``typing.Optional[K()]`` with a ``K`` that hashes like
``str`` and equals everything made the host's own ``typing.Optional[str]`` return the
snippet's alias, with the snippet's object (and the tool it held) inside.

``typing`` memoises every subscription (``List[X]``, ``Optional[X]``, ``Union[...]``,
``Literal[...]``, ``Generic.__class_getitem__`` ...) in ``functools.lru_cache`` objects
created by ``typing._tp_cache``, and calls them from inside other subscriptions too
(``Optional[X]`` is ``Union[X, None]``). :func:`install_typing_bypass` wraps each of those
caches, once per process, in a :class:`_Bypass` that raises ``TypeError`` in a thread that
runs snippet code (:func:`snippet_thread`): ``_tp_cache`` treats that as an unhashable
argument and calls the uncached function. So a snippet's subscriptions neither read nor
fill the caches, in any nesting; everyone else keeps them (one attribute read of cost).

The other process-wide caches a snippet reaches are keyed by type and value (``re``'s
compiled patterns: ``(type(pattern), pattern, flags)``), so a snippet's key never equals a
key of the host or of another execution; the ``re`` view also hands C only exact ``str``/
``bytes`` patterns (:mod:`ptcbox.sandbox._modspecs_text`). The audit is in the README.
"""

from __future__ import annotations

import gc
import threading
import typing
from typing import Any

__all__ = ["in_snippet_thread", "install_typing_bypass", "snippet_thread"]


class _State(threading.local):
    on = False


_state = _State()
_missing: int | None = None
_lock = threading.Lock()


class _Bypass:
    """Stands in for one of typing's ``lru_cache`` objects: the real cache, except in a
    snippet thread, where it raises ``TypeError`` so that typing calls the uncached
    function."""

    __slots__ = ("cached",)

    def __init__(self, cached: Any) -> None:
        self.cached = cached

    def __call__(self, *args: Any, **kwds: Any) -> Any:
        if _state.on:
            raise TypeError("typing's caches are not used by sandboxed code")
        return self.cached(*args, **kwds)

    def __getattr__(self, name: str) -> Any:  # cache_info(), cache_clear() ...
        return getattr(self.cached, name)


def snippet_thread(on: bool) -> None:
    """Mark the calling thread as running snippet code (``on``) or not.

    While marked, typing's subscription caches are bypassed in it (see the module
    docstring). Host code the thread runs meanwhile (a sync tool) gets correct, uncached
    results too.
    """
    _state.on = on


def in_snippet_thread() -> bool:
    """``True`` in a thread marked by :func:`snippet_thread` (running snippet code)."""
    return _state.on


def install_typing_bypass() -> int:
    """Wrap each of typing's subscription caches in a :class:`_Bypass` (once per process).

    Returns:
        How many of typing's caches could not be found and wrapped (0 on CPython 3.11
        to 3.13; a test checks it). Later calls return the first call's count.
    """
    global _missing
    with _lock:
        if _missing is not None:
            return _missing
        caches = {id(clear.__self__): clear.__self__ for clear in typing._cleanups}  # type: ignore[attr-defined]
        found: set[int] = set()
        table = getattr(typing, "_caches", None)
        if isinstance(table, dict):  # 3.12+: inner() looks its cache up in typing._caches
            for key, cached in list(table.items()):
                if id(cached) in caches:
                    table[key] = _Bypass(cached)
                    found.add(id(cached))
        # 3.11: the cache is a cell of inner()'s closure (inner is a method, a special
        # form's _getitem, a module function ...): find the cells by their content
        cell_type = type((lambda: caches).__closure__[0])  # type: ignore[index]
        for holder in gc.get_referrers(*caches.values()):
            if type(holder) is cell_type and id(holder.cell_contents) in caches:
                found.add(id(holder.cell_contents))
                holder.cell_contents = _Bypass(holder.cell_contents)
        _missing = len(caches) - len(found)
        return _missing

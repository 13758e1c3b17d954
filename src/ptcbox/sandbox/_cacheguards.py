"""Guards on the standard library's process-wide caches that snippets reach (issue 12).

A cache shared by the whole process keeps what it is given and hands it to whoever asks
with an *equal* key (see :mod:`ptcbox.sandbox._caches`). A snippet controls equality: a
``str`` subclass with ``__eq__ = str.__ne__`` (a builtin, so no check of the snippet's
own code runs) and a chosen ``__hash__`` equals every other string of that hash. Stored
as a key, it answers the host's own lookups with the snippet's value: the host's
``datetime.strptime(s, "%Y-%m-%d")`` parsed with the snippet's day-first regex, its
``struct.unpack("<i", ...)`` big-endian, ``ip_address("10.0.0.1").is_private`` False; and
with ``__eq__`` written in Python, every such host lookup raised.

So in a thread that runs snippet code (:func:`~ptcbox.sandbox._caches.snippet_thread`)
these caches are bypassed or fed exact builtin keys, process-wide, installed once by
:func:`install_cache_guards` (everyone else keeps them unchanged):

* ``functools.lru_cache`` functions ``fnmatch._compile_pattern`` and
  ``urllib.parse.urlsplit``: called with exact ``str``/``bytes``/``int`` arguments (their
  values are functions of the arguments' values), or uncached; ``ipaddress``'s cached
  properties (``is_private``, ``is_global``, keyed by the address object): uncached.
* ``_strptime._regex_cache`` (``time.strptime`` and ``datetime.strptime``): exact keys.
* ``ipaddress``'s netmask caches: exact ``str``/``int`` keys only.
* ``enum.Flag``'s pseudo-members (``re.RegexFlag(x)``): made for an exact ``int``.
* ``statistics.NormalDist.samples()`` without a seed: not from the host's global
  ``random`` generator (which a snippet would advance, and read).

Views pass exact keys to the caches they own or that live in C (``struct``'s format
cache, ``zoneinfo``'s per-class cache): see :func:`exact`.
"""

from __future__ import annotations

import enum
import fnmatch
import functools
import importlib
import ipaddress
import random
import statistics
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any

from ptcbox.sandbox._caches import in_snippet_thread

__all__ = ["exact", "install_cache_guards"]

_MARK = "_ptcbox_cache_guard"
_lock = threading.Lock()
_installed = False


def exact(value: Any) -> Any:
    """``value`` as its exact builtin type when it is a ``str``/``bytes``/``int``
    subclass (its own ``__eq__``/``__hash__`` gone); anything else unchanged."""
    kind = type(value)
    if kind is str or kind is int or kind is bytes or kind is bool:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bytes):
        return bytes.__getitem__(value, slice(None))
    if isinstance(value, int):
        return int.__index__(value)
    return value


_PLAIN = frozenset({str, bytes, int, bool, type(None)})


def _uncached(cached: Any, *, by_value: bool = True) -> Callable[..., Any]:
    """``cached`` (an ``lru_cache`` function), except in snippet threads: there the
    arguments go to the cache as exact builtin values when they all are ``str``/
    ``bytes``/``int`` (subclasses included: the cached value is a function of the value),
    else (or without ``by_value``) the function is called uncached."""
    uncached = cached.__wrapped__
    on = in_snippet_thread

    @functools.wraps(cached)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if not on():
            return cached(*args, **kwargs)
        if by_value and not kwargs and all(type(a) in _PLAIN for a in args):
            return cached(*args)  # the common case: exact values already
        if by_value:
            plain = [exact(a) for a in args]
            named = {k: exact(v) for k, v in kwargs.items()}
            if all(type(a) in _PLAIN for a in plain) and all(
                type(v) in _PLAIN for v in named.values()
            ):
                return cached(*plain, **named)
        return uncached(*args, **kwargs)

    for name in ("cache_info", "cache_clear", "cache_parameters"):
        setattr(guarded, name, getattr(cached, name))
    setattr(guarded, _MARK, True)
    return guarded


class _ExactKeys(dict):  # type: ignore[type-arg]
    """A dict used as a cache that snippet threads use with exact ``str`` keys only
    (its values are a function of the key's value), and not at all for other keys."""

    __slots__ = ()

    def get(self, key: Any, default: Any = None) -> Any:
        if in_snippet_thread():
            key = exact(key)
            if type(key) is not str:
                return default
        return dict.get(self, key, default)

    def __setitem__(self, key: Any, value: Any) -> None:
        if in_snippet_thread():
            key = exact(key)
            if type(key) is not str:
                return
        dict.__setitem__(self, key, value)


def _guard_netmask(cls: type) -> None:
    real = cls.__dict__["_make_netmask"].__func__

    def _make_netmask(owner: type, arg: Any) -> Any:
        if in_snippet_thread():
            if not isinstance(arg, str | int):
                raise ipaddress.NetmaskValueError(f"{arg!r} is not a valid netmask")
            arg = exact(arg)
        return real(owner, arg)

    setattr(_make_netmask, _MARK, True)
    cls._make_netmask = classmethod(_make_netmask)  # type: ignore[attr-defined]


def _guard_cached_properties(module: Any) -> None:
    for cls in vars(module).values():
        if not isinstance(cls, type) or cls.__module__ != module.__name__:
            continue
        for name, attr in list(vars(cls).items()):
            if isinstance(attr, property) and hasattr(attr.fget, "cache_info"):
                guarded = _uncached(attr.fget, by_value=False)  # keyed by the address object
                setattr(cls, name, property(guarded, doc=attr.__doc__))


def _guard_flag() -> None:
    real = enum.Flag.__dict__["_missing_"].__func__

    def _missing_(cls: type, value: Any) -> Any:
        if in_snippet_thread() and isinstance(value, int):
            value = exact(value)
        return real(cls, value)

    _missing_.__doc__ = real.__doc__
    enum.Flag._missing_ = classmethod(_missing_)  # type: ignore[assignment, method-assign]


def _guard_samples() -> None:
    real = statistics.NormalDist.samples

    def samples(self: Any, n: int, *, seed: Any = None) -> list[float]:
        if seed is None and in_snippet_thread():  # not the host's global generator
            return real(self, n, seed=random.Random().random())
        return real(self, n, seed=seed)

    samples.__doc__ = real.__doc__
    statistics.NormalDist.samples = samples  # type: ignore[method-assign, assignment]


def install_cache_guards() -> None:
    """Install the guards listed in the module docstring (once per process)."""
    global _installed
    if _installed:
        return
    with _lock:
        if _installed:
            return
        _installed = True
        patterns: Any = fnmatch
        if not getattr(patterns._compile_pattern, _MARK, False):
            patterns._compile_pattern = _uncached(patterns._compile_pattern)
        urls: Any = urllib.parse
        if not getattr(urls.urlsplit, _MARK, False):
            urls.urlsplit = _uncached(urls.urlsplit)
        strptime: Any = importlib.import_module("_strptime")
        if type(strptime._regex_cache) is dict:
            strptime._regex_cache = _ExactKeys(strptime._regex_cache)
        _guard_cached_properties(ipaddress)
        for cls in (ipaddress._BaseV4, ipaddress._BaseV6):
            _guard_netmask(cls)
        _guard_flag()
        _guard_samples()

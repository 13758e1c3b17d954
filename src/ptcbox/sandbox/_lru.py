"""A small thread-safe LRU map for the caches keyed on a snippet's source text.

``functools.lru_cache`` cannot tell whether a key is cached without computing its
value; the compile (:mod:`ptcbox.sandbox._compile`) and the host's pre-flight check
(``runtimes/_shared/_preflight``) need to, so that one parse of a new snippet serves
both while a repeated snippet parses nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["LruCache"]

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


class LruCache(Generic[K, V]):
    """At most ``maxsize`` entries; the least recently used one goes first.

    Args:
        maxsize: How many entries to keep (> 0).
    """

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.hits = 0
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, default: D) -> V | D:
        """The value of ``key`` (now the most recently used), else ``default``."""
        with self._lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            self.hits += 1
            return self._data[key]

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, dropping the least recently used beyond ``maxsize``."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._data.clear()
            self.hits = 0

    def __len__(self) -> int:
        return len(self._data)

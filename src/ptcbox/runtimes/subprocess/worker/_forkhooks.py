"""The template's at-fork hooks: run in a worker only where they change something.

``os.fork()`` runs every function modules registered with ``os.register_at_fork``:
``before`` hooks in the parent, ``after_in_child`` ones in the child. In a worker they
are its first Python code, and each object they touch is a page the child writes, so a
copy-on-write page fault (~3 us in this VM); for the template's modules that was ~180 more
faults and ~0.5 ms of CPU per worker, about the cost of the fork itself (measured:
fork + work + exit + reap 1.27-1.33 ms of CPU without them, 1.77-1.80 ms with them).

Most of them only repair thread and lock state after forking a multi-threaded parent
(``threading``, ``logging``, ptcbox's ThreadRuntime pools and background loop, listed in
:data:`THREAD_STATE_ONLY`). The template is single-threaded, so for it they change
nothing. The template's bootstrap (:mod:`~ptcbox.runtimes.subprocess._launch`) therefore
records registrations in a :class:`ForkHooks` instead of passing them to CPython, and
the template runs them around each fork itself: all of them while it has another
thread (as ``os.fork()`` would), else all but :data:`THREAD_STATE_ONLY`. Hooks it does
not know are always run (``random``'s re-seeding among them: every worker must draw
its own numbers).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

__all__ = ["THREAD_STATE_ONLY", "ForkHooks"]

THREAD_STATE_ONLY = frozenset(
    {
        ("threading", "_after_fork"),
        ("logging", "_acquireLock"),
        ("logging", "_releaseLock"),
        ("logging", "_after_at_fork_child_reinit_locks"),
        ("ptcbox.runtimes.thread._reaper", "Reaper.reset_after_fork"),
        ("ptcbox.runtimes.thread._pool", "_after_fork_in_child"),
        ("ptcbox._loop", "BackgroundLoop.forget"),
    }
)
"""``(module, qualified name)`` of hooks that only reset thread and lock state (threads
other than the forking one do not exist in a child; locks they held are re-made)."""

Hook = Callable[[], object]


def _name(hook: Hook) -> tuple[str, str]:
    """``(module, qualified name)`` of a hook (empty strings where it has none)."""
    return getattr(hook, "__module__", None) or "", getattr(hook, "__qualname__", None) or ""


class ForkHooks:
    """The at-fork hooks registered in the template, run by it around each fork.

    Args:
        recorded: The list the template's bootstrap appends the keyword arguments of
            each ``os.register_at_fork`` call to (from before anything is imported; read
            again at each fork); ``None``: the hooks were registered with CPython, and
            :meth:`fork` is ``os.fork()``.
    """

    def __init__(self, recorded: list[dict[str, Any]] | None = None) -> None:
        self._recorded = recorded
        self._seen = 0
        self._before: list[Hook] = []
        self._parent: list[Hook] = []
        self._child: list[Hook] = []
        self._lean: tuple[list[Hook], list[Hook], list[Hook]] | None = None

    def register(
        self,
        *,
        before: Hook | None = None,
        after_in_child: Hook | None = None,
        after_in_parent: Hook | None = None,
    ) -> None:
        """Record hooks, with ``os.register_at_fork``'s signature and checks."""
        hooks = (before, after_in_child, after_in_parent)
        if all(hook is None for hook in hooks):
            raise TypeError("At least one argument is required.")
        for name, hook in zip(("before", "after_in_child", "after_in_parent"), hooks, strict=True):
            if hook is not None and not callable(hook):
                raise TypeError(f"'{name}' must be callable, not {type(hook).__name__}")
        if before is not None:
            self._before.insert(0, before)  # CPython runs them in reverse order
        if after_in_child is not None:
            self._child.append(after_in_child)
        if after_in_parent is not None:
            self._parent.append(after_in_parent)
        self._lean = None

    @staticmethod
    def single_threaded() -> bool:
        """Whether this process has only the calling thread (Python's and the OS's view)."""
        if threading.active_count() != 1:
            return False
        with contextlib.suppress(OSError):
            return len(os.listdir("/proc/self/task")) == 1
        return False

    def _select(self) -> tuple[list[Hook], list[Hook], list[Hook]]:
        recorded = self._recorded or []
        while self._seen < len(recorded):  # registered since the last fork
            self._seen += 1
            self.register(**recorded[self._seen - 1])
        if not self.single_threaded():
            return self._before, self._parent, self._child
        if self._lean is None:
            before, parent, child = (
                [hook for hook in hooks if _name(hook) not in THREAD_STATE_ONLY]
                for hooks in (self._before, self._parent, self._child)
            )
            self._lean = (before, parent, child)
        return self._lean

    def fork(self) -> int:
        """``os.fork()`` with the hooks this process needs (see the module's notes).

        Returns:
            0 in the child, the child's pid in the parent.

        Raises:
            OSError: If the fork failed (the ``after_in_parent`` hooks have run).
        """
        if self._recorded is None:
            return os.fork()
        before, parent, child = self._select()
        for hook in before:
            _call(hook)
        try:
            pid = os.fork()
        except OSError:
            for hook in parent:
                _call(hook)
            raise
        for hook in child if pid == 0 else parent:
            _call(hook)
        return pid

    def child_hooks(self) -> list[tuple[str, str]]:
        """``(module, qualified name)`` of the ``after_in_child`` hooks a fork runs now."""
        return [_name(hook) for hook in self._select()[2]]


def _call(hook: Hook) -> None:
    """Run a hook as CPython does: an exception is reported on stderr, not raised."""
    try:
        hook()
    except Exception:
        print(f"Exception ignored in fork hook {hook!r}:", file=sys.stderr)
        traceback.print_exc()

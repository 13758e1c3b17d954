"""Reuse mode: one worker serves up to N executions (``max_executions_per_worker``).

A single-use worker needs no reset: the process ends with its execution. A reused one
runs each execution as follows, and says in its ``done`` (``"reuse": bool``) whether it
may serve another; the host retires it otherwise (and after N executions):

* the execution runs in a fresh :class:`contextvars.Context` (every context variable,
  the ``decimal`` context of the thread included, starts from its default);
* its globals are built anew (a snippet's functions, classes and names die with them);
  module views are read-only and the per-execution ones (``sys``, ``logging``,
  ``warnings``, output streams) are built per execution, as in ``ThreadRuntime``;
* afterwards (:meth:`Reuse.reset`, run after ``done`` is sent, before the worker reads
  its next message, so off the execution's critical path): ``decimal.DefaultContext``
  (which new contexts copy) is restored, the working directory is emptied (and made
  current again), the environment is restored, numpy's global generator gets a fresh
  seed and pandas' options their template values (:mod:`ptcbox.sandbox._datastate`), and
  the ``RLIMIT_CPU`` counter is re-armed by the next run (CPU used so far plus the
  policy's seconds; see ``apply_run_limits``). A worker whose reset fails exits with
  :data:`EXIT_RESET_FAILED` without reading anything more; the host runs a ``run`` it
  had already sent that worker on another one (nothing of it ran: see
  ``SubprocessRuntime._run``).

It is retired at once, never reused, after an execution that failed in any way (an
error, a limit, a timeout or a crash: the host kills it), whose output was truncated,
in which the sandbox refused anything (an import, a module attribute a view withholds,
or a :class:`~ptcbox.errors.PolicyViolation` or :class:`~ptcbox.errors.LimitExceeded`
was raised, even if the snippet caught it), which
left the process's address space or resident memory over what it was at start plus
:data:`RSS_SLACK_BYTES`, whose garbage kept coming back when collected (an execution's
objects are freed, finalizers included, before its ``done`` is sent, so that no code of
one execution runs in the next), which replaced ``os.environ``, or whose reset failed.
"""

from __future__ import annotations

import contextvars
import decimal
import gc
import os
import shutil
from collections.abc import Callable
from typing import Any

from ptcbox.errors import LimitExceeded, PolicyViolation
from ptcbox.runtimes.subprocess.worker import _timing as timing
from ptcbox.sandbox._cpuclocks import mark_cpu_start
from ptcbox.sandbox._datastate import PandasOptions, fresh_numpy_random
from ptcbox.sandbox._modules import REFUSED_IMPORTS
from ptcbox.sandbox._proxy import REFUSED_ATTRIBUTES

__all__ = ["EXIT_RESET_FAILED", "RSS_SLACK_BYTES", "Reuse", "count_refusals"]

EXIT_RESET_FAILED = 73
"""Exit status of a reused worker whose reset between executions failed (see above)."""

RSS_SLACK_BYTES = 64 << 20
"""Address space or resident memory an execution may leave behind (bytes) before its
worker is retired (``RLIMIT_AS`` was set once, at the worker's start)."""

_refusals = [0]
_DECIMAL_FIELDS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")


def _refusals_so_far() -> int:
    """Refusals in this process: errors raised, imports and view attributes refused."""
    return _refusals[0] + REFUSED_IMPORTS[0] + REFUSED_ATTRIBUTES[0]


def count_refusals() -> None:
    """Count every refusal and limit error made in this process from now on.

    ``__new__`` of :class:`PolicyViolation` and :class:`LimitExceeded` (and so of every
    subclass) increments a counter, so that a refusal a snippet caught still retires
    its worker.
    """

    def counting_new(cls: type[BaseException], *args: Any, **kwargs: Any) -> Any:
        _refusals[0] += 1
        return Exception.__new__(cls, *args, **kwargs)

    for cls in (PolicyViolation, LimitExceeded):
        cls.__new__ = counting_new  # type: ignore[method-assign]


def _memory_bytes(statm: int | None) -> tuple[int, int]:
    """This process's address space and resident memory (``RLIMIT_AS`` counts the first).

    ``statm``: a descriptor of ``/proc/self/statm`` kept open (one ``pread``: no
    ``open``, whose audit-hook check resolves the path, ~40-200 µs); ``None`` opens it.
    """
    try:
        if statm is None:
            with open("/proc/self/statm", "rb") as file:
                text = file.read()
        else:
            text = os.pread(statm, 256, 0)
        size, resident = text.split()[:2]
        return int(size) * _PAGE, int(resident) * _PAGE
    except (OSError, ValueError):
        return 1 << 62, 1 << 62  # unknown: never reuse


_PAGE = os.sysconf("SC_PAGE_SIZE")
_COLLECT_ROUNDS = 8


def _collect() -> bool:
    """Free the reference cycles left now: their finalizers (a suspended generator's
    ``finally``) run here, in this execution's time. ``True`` if each collection still
    found garbage (a finalizer that leaves new garbage behind each time it runs).

    Otherwise everything still tracked is reachable, and is frozen (``gc.freeze``):
    the next execution's collections then look at that execution's objects only, not
    at everything the worker ever kept (which made each round cost 30-60 µs). A frozen
    object is never collected: one that an execution leaves reachable and a later one
    drops is freed by reference counting or not at all, so no finalizer of one
    execution runs in another through the collector.
    """
    for _ in range(_COLLECT_ROUNDS):
        if not gc.collect():
            gc.freeze()
            return False
    return True


def _environ_data() -> dict[bytes, bytes] | None:
    """What ``os.environ`` holds, as its encoded entries (compared without decoding
    each one: ~1 µs, where comparing the mappings took ~100 µs); ``None`` if it is not
    the standard mapping any more."""
    environ = os.environ
    if type(environ) is not os._Environ:
        return None
    data = environ._data  # type: ignore[attr-defined]
    return data if type(data) is dict else None


class Reuse:
    """The reset between executions of one reused worker.

    Args:
        workdir: The worker's private working directory (emptied after each run).
        limit: Executions this worker may serve (the host counts them too).
    """

    def __init__(self, workdir: str, limit: int) -> None:
        self.workdir = workdir
        self.left = limit
        count_refusals()
        default = decimal.DefaultContext
        self._decimal = {name: getattr(default, name) for name in _DECIMAL_FIELDS}
        self._decimal_flags = dict(default.flags)
        self._decimal_traps = dict(default.traps)
        self._decimal_repr = repr(default)
        self._environ = dict(os.environ)
        self._environ_data = dict(_environ_data() or {})
        self._pandas_options = PandasOptions()
        try:
            self._statm: int | None = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self._statm = None
        size, resident = _memory_bytes(self._statm)
        self._memory_limits = (size + RSS_SLACK_BYTES, resident + RSS_SLACK_BYTES)

    def run(self, execute: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
        """Run ``execute(*args)`` (it returns the ``done`` message) in a fresh context,
        then reset; set ``done["reuse"]``."""
        refusals = _refusals_so_far()
        mark_cpu_start()  # the time view's CPU clocks start at zero for this run
        done = contextvars.Context().run(execute, *args)
        self.left -= 1
        # The execution's objects die now, before its ``done`` is sent: a finalizer (a
        # suspended generator's ``finally``) runs while the host still serves this
        # execution, never during the next one; a worker whose garbage keeps coming back
        # is retired.
        state = args[-1]
        state.globals = None
        state.injected = {}
        endless_garbage = _collect()
        if timing.ON:
            timing.mark("collected")
        clean = (
            self.left > 0
            and not endless_garbage
            and done.get("error") is None
            and not done.get("truncated")
            and _refusals_so_far() == refusals
        )
        size, resident = _memory_bytes(self._statm)
        small = size <= self._memory_limits[0] and resident <= self._memory_limits[1]
        done["reuse"] = clean and small and _environ_data() is not None
        return done

    def reset(self) -> bool:
        """Undo what an execution may leave in the process; ``False`` if it cannot.

        Called after ``done`` (with ``"reuse": True``) is sent: the host reads the
        result meanwhile. The worker exits on ``False`` (:data:`EXIT_RESET_FAILED`).
        """
        try:
            default = decimal.DefaultContext
            if repr(default) != self._decimal_repr:  # every field, flags and traps
                for name, value in self._decimal.items():
                    setattr(default, name, value)
                default.flags.update(self._decimal_flags)
                default.traps.update(self._decimal_traps)
            data = _environ_data()
            if data is None:  # os.environ was replaced: retire the worker
                return False
            if data != self._environ_data:
                os.environ.clear()
                os.environ.update(self._environ)
            fresh_numpy_random()
            if not self._pandas_options.restore():
                return False
            os.chdir(self.workdir)
            with os.scandir(self.workdir) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path)
                    else:
                        os.unlink(entry.path)
        except Exception:  # anything left behind: retire the worker
            return False
        return True

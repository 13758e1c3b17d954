"""`build_globals`: the namespace a compiled snippet runs in."""

from __future__ import annotations

import builtins
import sys
import threading
import types
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ptcbox.errors import ToolError
from ptcbox.sandbox._ablation import off
from ptcbox.sandbox._alive import ALIVE_ATTR, ALIVE_NAME
from ptcbox.sandbox._base import base_builtins, cached_limits
from ptcbox.sandbox._modules import AblatedImportHook, ImportHook
from ptcbox.sandbox._names import is_reserved
from ptcbox.sandbox._owner import SANDBOX_MARK, SANDBOX_MARK_NAME
from ptcbox.sandbox._policy import SandboxPolicy
from ptcbox.sandbox._streams import Streams

__all__ = ["TextSink", "add_globals", "build_globals"]


class TextSink(Protocol):
    """Where ``print`` output goes: anything with ``write(str)``."""

    def write(self, text: str, /) -> Any:
        """Receive ``text`` (a str, possibly containing lone surrogates)."""
        ...


_base_lock = threading.Lock()
# test-only ablation switches (see _ablation), read once
_IMPORT_HOOK = AblatedImportHook if off("module_views") or off("import_allowlist") else ImportHook
_ALIVE_OFF = off("alive")


_TRUSTED_BASE: dict[str, Any] = dict(vars(builtins))


def _make_print(
    stdout: TextSink,
    stderr: TextSink,
    getattr_: Callable[..., Any],
    streams: Streams | None = None,
) -> Callable[..., None]:
    write_out = stdout.write
    write_err = stderr.write
    real_out, real_err = sys.stdout, sys.stderr

    def print(
        *args: Any,
        sep: str | None = " ",
        end: str | None = "\n",
        file: Any = None,
        flush: bool = False,
    ) -> None:
        """print(*values, sep=' ', end='\\n', file=None, flush=False)

        Prints to the execution's stdout (or ``file``'s ``write``).
        """
        if sep is None:
            sep = " "
        elif type(sep) is not str:
            raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
        if end is None:
            end = "\n"
        elif type(end) is not str:
            raise TypeError(f"end must be None or a string, not {type(end).__name__}")
        text = sep.join([str(a) for a in args]) + end
        if file is None:
            if streams is None:
                write_out(text)
            else:
                streams.out(text)  # the current target (contextlib.redirect_stdout)
        elif file is real_out:
            write_out(text)
        elif file is real_err:
            write_err(text)
        else:
            getattr_(file, "write")(text)

    return print


def build_globals(
    policy: SandboxPolicy,
    *,
    tools: Mapping[str, Callable[..., Any]],
    extra_globals: Mapping[str, Any] | None = None,
    stdout: TextSink,
    stderr: TextSink,
    sleep: Callable[[float], None] | None = None,
    alive: Any = None,
    own_process: bool = False,
) -> dict[str, Any]:
    """Build the globals dict for one execution of a snippet compiled under ``policy``.

    The dict holds ``__name__ = "__main__"``, the tools, the extra globals and (in
    ``__builtins__``) the sandbox's builtins: the safe ones, the guarded ``getattr``/
    ``setattr``/``hasattr``/``delattr``/``type``/``pow``/``format``/``bytes``, ``print``
    writing to ``stdout``, ``ToolError``, and the guarded ``__import__`` (allowlisted
    modules as read-only proxies). Trusted policies get the real builtins, with only
    ``print`` redirected and ``ToolError`` added. Cheap: a few dict copies.

    Args:
        policy: The sandbox policy the snippet was compiled under.
        tools: Name -> callable, the runtime's tool callables (already recording and
            binding arguments). They win over ``extra_globals`` on name clashes.
        extra_globals: More names for the snippet (data, helpers).
        stdout: Receives ``print`` output (``write(str)``).
        stderr: Receives the snippet's error output: ``sys.stderr`` of the ``sys`` view,
            ``traceback.print_exc``, ``logging``, ``warnings`` (and, for trusted code,
            ``print(..., file=sys.stderr)``).
        sleep: Replacement for ``time.sleep`` (e.g. interruptible); ``None`` keeps it.
        alive: The object whose ``running`` attribute restricted code reads at the
            start of every function, ``except`` and ``finally`` block
            (:data:`~ptcbox.sandbox._alive.ALIVE_ATTR`); the read must raise when
            the code must not run (its execution has ended). A global, not a builtin,
            so that a session's functions use the current execution's. ``None``: an
            object whose ``running`` is always there.
        own_process: The execution has the process to itself (a ``SubprocessRuntime``
            worker): views of process-wide state that in-process executions would share
            (``decimal.getcontext``) are allowed.

    Returns:
        A fresh globals dict; sessions may keep reusing it.

    Raises:
        ValueError: A tool or extra global uses a name reserved for the sandbox
            (``_x_``-style names and dunders other than ``__doc__``).
    """
    if policy.restricted:
        base = base_builtins(policy.max_int_bits, policy.max_repeat_bytes)
        b = base.copy()
        streams = Streams(stdout.write, stderr.write)
        b["print"] = _make_print(stdout, stderr, base["_getattr_"], streams)
        b["__import__"] = _IMPORT_HOOK(
            policy.allowed_imports,
            cached_limits(policy.max_int_bits, policy.max_repeat_bytes),
            sleep,
            base,
            streams=streams,
            own_process=own_process,
        )
        g: dict[str, Any] = {
            "__name__": "__main__",
            "__builtins__": b,
            SANDBOX_MARK_NAME: SANDBOX_MARK,
            ALIVE_NAME: _ALWAYS_ALIVE if alive is None or _ALIVE_OFF else alive,
        }
        if _ALIVE_OFF:  # test-only ablation: the checks pass once the globals are cleared too
            b[ALIVE_NAME] = _ALWAYS_ALIVE
    else:
        b = _TRUSTED_BASE.copy()
        b["print"] = _make_print(stdout, stderr, getattr)
        b["ToolError"] = ToolError
        g = {"__name__": "__main__", "__builtins__": b}
    add_globals(g, policy, tools=tools, extra_globals=extra_globals)
    return g


def add_globals(
    g: dict[str, Any],
    policy: SandboxPolicy,
    *,
    tools: Mapping[str, Callable[..., Any]],
    extra_globals: Mapping[str, Any] | None = None,
    plain_tools: bool = False,
) -> None:
    """Add tools and extra globals to ``g``, as :func:`build_globals` does.

    For a globals dict built ahead of time with no tools and no extra globals (a
    subprocess worker builds it while it waits for a snippet). ``plain_tools``: every
    tool already is a plain closure that shows the snippet nothing but its name and
    docstring (a subprocess worker's stubs), so it is not wrapped in another (one
    Python call less per tool call).

    Raises:
        ValueError: A name is reserved for the sandbox (see :func:`build_globals`).
    """
    if extra_globals:
        _check_names(extra_globals, "extra_globals")
        g.update(extra_globals)
    if tools:
        _check_names(tools, "tools")
        if policy.restricted and not plain_tools:
            for name, fn in tools.items():
                g[name] = _wrap_tool(name, fn)
        else:
            g.update(tools)


_ALWAYS_ALIVE = types.SimpleNamespace(**{ALIVE_ATTR: True})


def _wrap_tool(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A plain closure around a tool: the snippet sees no attributes of the real callable
    (a ``functools.partial``'s ``func``/``args``, a bound method's owner, a function's
    ``__dict__``), only its name and docstring."""

    def tool(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = fn.__doc__
    return tool


def _check_names(names: Mapping[str, Any], what: str) -> None:
    for name in names:
        if type(name) is not str:
            raise ValueError(f"{what}: names must be str, got {name!r}")
        if name[:1] == "_" and is_reserved(name) and name != "__doc__":
            raise ValueError(
                f"{what}: {name!r} is reserved for the sandbox (names that start and end with '_')"
            )

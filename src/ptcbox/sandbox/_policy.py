"""`SandboxPolicy`: the immutable description of what a snippet may do."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

__all__ = ["DATA_IMPORTS", "DEFAULT_ALLOWED_IMPORTS", "SandboxPolicy", "check_policy_argument"]

DEFAULT_ALLOWED_IMPORTS: frozenset[str] = frozenset(
    {
        "abc",
        "array",
        "binascii",
        "calendar",
        "cmath",
        "collections.abc",
        "contextlib",
        "copy",
        "csv",
        "difflib",
        "fnmatch",
        "graphlib",
        "gzip",
        "html",
        "io",
        "ipaddress",
        "logging",
        "numbers",
        "pprint",
        "secrets",
        "shlex",
        "struct",
        "sys",
        "traceback",
        "types",
        "unicodedata",
        "urllib.parse",
        "warnings",
        "zlib",
        "zoneinfo",
        "asyncio",
        "base64",
        "bisect",
        "collections",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "itertools",
        "json",
        "math",
        "operator",
        "random",
        "re",
        "statistics",
        "string",
        "textwrap",
        "time",
        "typing",
        "uuid",
    }
)
"""Modules a snippet may import under the default policy (a safe stdlib subset).

Several are handed out in a restricted form; see :data:`ptcbox.sandbox.EXCLUDED_MODULES`
for what is left out of them and why.
"""

DATA_IMPORTS: frozenset[str] = frozenset(
    {"numpy", "numpy.linalg", "numpy.random", "numpy.fft", "pandas"}
)
"""What :meth:`SandboxPolicy.data` adds to the default allowlist (SubprocessRuntime only)."""

_STRICT_IMPORTS: frozenset[str] = frozenset(
    {
        "bisect",
        "collections",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "heapq",
        "itertools",
        "json",
        "math",
        "re",
        "statistics",
        "string",
        "textwrap",
        "typing",
    }
)


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """What a snippet may do, and the limits it runs under. Immutable.

    Presets: ``SandboxPolicy()`` (default: restricted compile, guards, a safe stdlib
    subset), :meth:`strict` (fewer modules, tighter limits) and :meth:`trusted` (plain
    ``compile``, real builtins and imports, for code you trust, at full speed). Derive
    variants with :meth:`replace`.

    The restricted mode builds on RestrictedPython (https://github.com/zopefoundation/
    RestrictedPython): its AST transformer, extended for async code, ``match``, augmented
    assignment and a trailing-expression value, with ptcbox's own guards.

    Attributes:
        restricted: Compile with the RestrictedPython-based transformer and run with
            guarded builtins. ``False`` means trusted code: no guards at all.
        allowed_imports: Module names a snippet may import (dotted names for submodules,
            e.g. ``"collections.abc"``). Ignored when ``restricted`` is ``False``.
        timeout: Default wall-clock limit of one execution, in seconds.
        max_output_bytes: Cap per stream (stdout, stderr) and for the error text, bytes.
        max_tool_calls: Tool calls allowed per execution.
        max_concurrent_tool_calls: Tool calls that may run at the same time (async code).
        max_memory_bytes: Address-space limit in bytes, enforced by ``SubprocessRuntime``
            (``RLIMIT_AS``); ``None`` for no limit. The thread runtime cannot enforce it.
        max_cpu_seconds: CPU-time limit in seconds, enforced by ``SubprocessRuntime``
            (``RLIMIT_CPU``); ``None`` for no limit.
        max_int_bits: Largest integer result, in bits, that ``**``, ``<<`` (and ``*`` on
            integers, ``pow``, ``math.factorial`` ...) may build; checked before the work
            starts.
        max_repeat_bytes: Largest result, in bytes, of sequence repetition and padding
            (``"a" * n``, ``[0] * n``, ``s.ljust(n)``, ``bytes(n)`` ...).
        max_code_chars: Longest snippet, in characters, that an execution runs; a
            longer one is refused before anything is compiled or run
            (``CodeSizeLimitExceeded``), since compiling cannot be interrupted.
        max_host_memory_bytes: What the host may hold on behalf of one
            ``SubprocessRuntime`` execution, in bytes of wire data: the arguments of
            tool calls in progress, tool results not yet read by the worker and
            buffered output. Past it the execution ends with ``LimitExceeded``
            (decoded Python objects can be a few times larger than their JSON).
    """

    restricted: bool = True
    allowed_imports: frozenset[str] = DEFAULT_ALLOWED_IMPORTS
    timeout: float = 30.0
    max_output_bytes: int = 1_000_000
    max_tool_calls: int = 1_000
    max_concurrent_tool_calls: int = 16
    max_memory_bytes: int | None = 1 << 30
    max_cpu_seconds: float | None = None
    max_int_bits: int = 4_000_000
    max_repeat_bytes: int = 64 << 20
    max_host_memory_bytes: int = 256 << 20
    max_code_chars: int = 200_000

    def __post_init__(self) -> None:
        if not isinstance(self.restricted, bool):
            raise ValueError(f"restricted must be a bool, got {self.restricted!r}")
        imports = self.allowed_imports
        if isinstance(imports, str) or not all(isinstance(m, str) for m in imports):
            raise ValueError(
                f"allowed_imports must be a collection of module names (str), got {imports!r}"
            )
        for name in imports:
            parts = name.split(".")
            if not all(p.isidentifier() for p in parts):
                raise ValueError(f"allowed_imports: {name!r} is not a valid module name")
        if not isinstance(imports, frozenset):
            object.__setattr__(self, "allowed_imports", frozenset(imports))
        _positive_number("timeout", self.timeout)
        _positive_int("max_output_bytes", self.max_output_bytes)
        _positive_int("max_tool_calls", self.max_tool_calls, allow_zero=True)
        _positive_int("max_concurrent_tool_calls", self.max_concurrent_tool_calls)
        if self.max_memory_bytes is not None:
            _positive_int("max_memory_bytes", self.max_memory_bytes)
            if self.max_memory_bytes < 32 << 20:
                raise ValueError(
                    "max_memory_bytes must be at least 32 MiB (33554432 bytes) so that "
                    f"Python can start, got {self.max_memory_bytes}"
                )
        if self.max_cpu_seconds is not None:
            _positive_number("max_cpu_seconds", self.max_cpu_seconds)
        _positive_int("max_int_bits", self.max_int_bits)
        _positive_int("max_repeat_bytes", self.max_repeat_bytes)
        _positive_int("max_host_memory_bytes", self.max_host_memory_bytes)
        _positive_int("max_code_chars", self.max_code_chars)

    @classmethod
    def strict(cls) -> SandboxPolicy:
        """A tighter preset for untrusted code you expect to be small.

        Fewer modules (no ``asyncio``, ``random``, ``time``, ``uuid``, ``hashlib``,
        ``base64``, ``operator``), a 10 s timeout, 100 kB of output, 100 tool calls,
        256 MiB of memory, 10 s of CPU, 100 000-bit integers, 1 MiB repetitions and
        snippets of at most 50 000 characters.
        """
        return cls(
            allowed_imports=_STRICT_IMPORTS,
            timeout=10.0,
            max_output_bytes=100_000,
            max_tool_calls=100,
            max_concurrent_tool_calls=4,
            max_memory_bytes=256 << 20,
            max_cpu_seconds=10.0,
            max_int_bits=100_000,
            max_repeat_bytes=1 << 20,
            max_code_chars=50_000,
        )

    @classmethod
    def trusted(cls) -> SandboxPolicy:
        """No sandbox: plain ``compile``, the real builtins and imports, full speed.

        Only for code you trust as much as your own. ``print`` still goes to the
        execution's stdout, the trailing-expression value is still returned, and the
        timeout, output and tool-call limits still apply.
        """
        return cls(restricted=False, max_memory_bytes=None)

    @classmethod
    def data(cls) -> SandboxPolicy:
        """The default policy plus ``numpy`` and ``pandas`` (``SubprocessRuntime`` only).

        Adds :data:`DATA_IMPORTS` (``numpy`` with ``numpy.linalg``, ``numpy.random`` and
        ``numpy.fft``, and ``pandas``) to the default allowlist; the worker template
        imports them before it forks, so an execution pays no import. Their file,
        pickle, ctypes and expression-evaluator routes are refused (see the README's
        data section); ``ThreadRuntime`` refuses this policy (their C code cannot be
        interrupted or memory-bounded in-process). The limits are the default ones
        (1 GiB of address space on top of what the libraries map).
        """
        return cls(allowed_imports=DEFAULT_ALLOWED_IMPORTS | DATA_IMPORTS)

    def replace(self, **changes: Any) -> SandboxPolicy:
        """Return a copy with ``changes`` applied (validated like the constructor).

        Raises:
            ValueError: A field name is unknown or a value is invalid.
        """
        names = {f.name for f in dataclasses.fields(self) if f.init}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ValueError(
                f"unknown SandboxPolicy field(s): {', '.join(unknown)}; "
                f"fields are: {', '.join(sorted(names))}"
            )
        return dataclasses.replace(self, **changes)


def check_policy_argument(policy: object) -> None:
    """Refuse a ``policy=`` argument that is neither ``None`` nor a :class:`SandboxPolicy`.

    The command line names presets (``--policy strict``), so ``policy="strict"`` is an
    easy slip; without this check it failed later with an unrelated ``AttributeError``.

    Raises:
        TypeError: Naming the preset method to call instead.
    """
    if policy is None or isinstance(policy, SandboxPolicy):
        return
    presets = {"default": "()", "strict": ".strict()", "data": ".data()", "trusted": ".trusted()"}
    example = "SandboxPolicy" + (
        presets.get(policy, ".strict()") if type(policy) is str else ".strict()"
    )
    raise TypeError(
        f"policy= takes a SandboxPolicy, e.g. {example} "
        f"(from ptcbox.sandbox import SandboxPolicy), got {type(policy).__name__} {policy!r}"
    )


def _positive_int(name: str, value: object, *, allow_zero: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}, got {value}")


def _positive_number(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number of seconds, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number of seconds > 0, got {value}")

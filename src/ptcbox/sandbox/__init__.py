"""The sandbox: policy, restricted compile, guarded builtins and read-only modules.

Runtimes use it in three steps::

    compiled = compile_snippet(code, policy)              # cached; may raise
    g = build_globals(policy, tools=..., stdout=..., stderr=...)
    exec(compiled.code, g)    # or: await eval(compiled.code, g) if compiled.is_async
    value = g.get(VALUE_NAME) if compiled.has_value else None

What the restricted policy guarantees (in any runtime): snippets cannot reach frames,
code objects, generator/coroutine internals, the event loop, dunder or private attributes
of objects they did not create (also not through ``str.format`` fields, whose lookups go
through the same guard; the few dunders readable on the snippet's own objects and
exceptions are judged per object in ``_dunders``), modules outside the allowlist (nor the
real module objects of allowed ones), or change modules and classes shared with the host;
``eval``/``exec``/``open``/``globals``/3-argument ``type`` are not builtins, ``vars`` works
only on the snippet's own objects, and no metaclass (a 3-argument ``type`` by another
name) is reachable (see :data:`EXCLUDED_BUILTINS` and :data:`EXCLUDED_MODULES` for every
exclusion and why). Guards judge the value they hand out (``str.format`` through a str
subclass or ``super()`` is still ``str.format``, and gets the guarded stand-in), and a
module re-exporting another's object gets the same replacement as the object's home module.

What the thread runtime cannot guarantee: the size guards stop the common one-call
bombs (``10 ** 10 ** 8``, ``"a" * 10 ** 10``, ``s.ljust(10 ** 10)``, ``bytes(n)``,
``math.factorial(n)``, huge format widths ...) before they start, and a pure-Python loop
is interrupted at the next bytecode, but a single C call that holds the GIL (a
pathological regular expression, ``int(Decimal("1e999999999"))`` or its positional
formatting ``f"{Decimal('1e999999999'):f}"``, sorting a huge list) runs to its end,
and memory in general is not bounded (``list(range(10 ** 10))``). The stdlib views check
the one-call results they can size beforehand (``zlib``/``gzip.decompress`` output,
``struct.pack``, ``secrets.token_bytes``, ``array`` repetition, ``calendar`` widths,
``pprint`` indentation, ``io`` seeks); what grows with its input in C is not bounded in
the thread runtime: ``array.array('d', range(10 ** 9))``, ``unicodedata.normalize`` of a
huge string, ``csv`` over a huge text, ``zlib.compress`` of a huge buffer (``difflib``
and ``ipaddress`` are Python code and stop at the time limit).

Script habits: ``sys.exit(0)``, ``exit()``, ``quit()`` and ``raise SystemExit`` end the
execution as a success (the output is kept); a non-zero code is a failure, a string code
is printed to stderr (as ``python script.py`` does). ``sys.argv`` is ``["<snippet>"]``.
Use ``SubprocessRuntime`` for untrusted code where that matters: it kills the process
at the deadline and enforces ``max_memory_bytes``/``max_cpu_seconds`` with rlimits.

This package is the language-level policy only; the kernel walls of the subprocess
runtime (rlimits, seccomp, Landlock, the audit hook) are in
:mod:`ptcbox.runtimes.subprocess.worker`, next to the only code that runs behind them.
"""

from ptcbox.sandbox._builtins import EXCLUDED_BUILTINS
from ptcbox.sandbox._compile import VALUE_NAME, CompiledSnippet, compile_snippet
from ptcbox.sandbox._globals import TextSink, build_globals
from ptcbox.sandbox._modules import EXCLUDED_MODULES
from ptcbox.sandbox._policy import DEFAULT_ALLOWED_IMPORTS, SandboxPolicy

__all__ = [
    "DEFAULT_ALLOWED_IMPORTS",
    "EXCLUDED_BUILTINS",
    "EXCLUDED_MODULES",
    "VALUE_NAME",
    "CompiledSnippet",
    "SandboxPolicy",
    "TextSink",
    "build_globals",
    "compile_snippet",
]

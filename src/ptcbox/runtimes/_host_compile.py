"""Compile small snippets in the host and ship the code object to the worker.

A worker is a fresh process, and its CPU caches are cold when it runs a snippet: the
RestrictedPython transform and ``compile`` of ``print(1)`` take 300-420 µs there against
~55 µs in the warm host (measured, see issue 3's notes), and the host keeps an LRU cache
of what it compiled. So the host compiles snippets of up to :data:`HOST_COMPILE_MAX_CHARS`
characters itself, with the same transform and the same policy, and sends the code
object ``marshal``-ed (base64 in the JSON ``run`` message). Longer snippets, and any
snippet the host fails to compile, are compiled by the worker, which reports errors as
it always does; the host never reports a compile error itself.

Only the host produces this data and only the worker reads it, so nothing the worker
sends is ever unmarshalled. The worker falls back to compiling the source when the
bytecode magic number differs (another Python version).
"""

from __future__ import annotations

import binascii
import functools
import importlib.util
import marshal
from typing import Any

from ptcbox.runtimes._common import SNIPPET_FILENAME
from ptcbox.sandbox import CompiledSnippet, SandboxPolicy, compile_snippet

__all__ = ["HOST_COMPILE_MAX_CHARS", "decode_compiled", "encode_compiled", "host_compiled"]

HOST_COMPILE_MAX_CHARS = 2048
"""Longest snippet the host compiles (characters). A realistic 500-character snippet
compiles in ~1.7 ms in the host; beyond this size the event loop would stall for
several milliseconds, so the worker compiles instead (on its own CPU)."""

_MAGIC = importlib.util.MAGIC_NUMBER.hex()
_CACHE_SIZE = 256


def encode_compiled(compiled: CompiledSnippet) -> list[Any]:
    """``[magic, base64 marshal of the code, is_async, has_value]`` for the ``run`` message."""
    data = binascii.b2a_base64(marshal.dumps(compiled.code), newline=False).decode("ascii")
    return [_MAGIC, data, compiled.is_async, compiled.has_value]


def decode_compiled(fields: Any) -> CompiledSnippet | None:
    """The snippet :func:`encode_compiled` encoded; ``None`` if absent or from another Python.

    Raises:
        ValueError: Malformed fields (the host sent something else).
    """
    if fields is None:
        return None
    magic, data, is_async, has_value = fields
    if magic != _MAGIC:
        return None
    code = marshal.loads(binascii.a2b_base64(data))
    return CompiledSnippet(code=code, is_async=bool(is_async), has_value=bool(has_value))


def host_compiled(code: str, policy: SandboxPolicy) -> list[Any] | None:
    """:func:`encode_compiled` of ``code`` compiled as a worker would, or ``None``.

    ``None`` when the snippet is longer than :data:`HOST_COMPILE_MAX_CHARS` or does not
    compile (the worker then compiles it and reports the error). Cached (LRU, 256).
    """
    if len(code) > HOST_COMPILE_MAX_CHARS:
        return None
    return _host_compiled(code, policy.restricted)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _host_compiled(code: str, restricted: bool) -> list[Any] | None:
    policy = SandboxPolicy() if restricted else SandboxPolicy.trusted()
    try:
        compiled = compile_snippet(code, policy, filename=SNIPPET_FILENAME, os_enforced_limits=True)
    except Exception:  # the worker compiles it again and reports the error
        return None
    return encode_compiled(compiled)

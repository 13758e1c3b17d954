"""Compile repeated short snippets in the host and ship the code object to the worker.

A worker is a fresh process: it compiles every snippet from scratch, with cold CPU
caches (the RestrictedPython transform and ``compile`` of ``print(1)`` take 300-420 µs
there). The host can keep what it compiled. So when a short snippet comes back (a
retry, an evaluation harness, a benchmark), the host compiles it once, with the same
transform and policy, keeps it in an LRU cache, and sends the code object
``marshal``-ed (base64 in the JSON ``run`` message).

A snippet's first run is still compiled by the worker: measured at a 20 ms pace, the
host is as cold as the worker then (no gain), and compiling in the host blocks its
event loop (a red-team pass found 2 KiB snippets that took 0.7 s to transform before
the transform was fixed, and ones that constant-fold into a 1 MiB code object). For
the same reasons the host leaves to the worker snippets over
:data:`HOST_COMPILE_MAX_CHARS`, ones it fails to compile (the worker reports the error
as it always does) and ones whose code is over :data:`HOST_COMPILE_MAX_BYTES`.

Only the host produces this data and only the worker reads it, so nothing the worker
sends is ever unmarshalled. The worker falls back to compiling the source when the
bytecode magic number differs (another Python version).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any

from ptcbox.runtimes._shared._error_text import SNIPPET_FILENAME
from ptcbox.runtimes.subprocess.worker._config import encode_compiled
from ptcbox.sandbox import SandboxPolicy, compile_snippet

__all__ = [
    "HOST_COMPILE_MAX_BYTES",
    "HOST_COMPILE_MAX_CHARS",
    "host_compiled",
]

HOST_COMPILE_MAX_CHARS = 2048
"""Longest snippet the host compiles (characters)."""

HOST_COMPILE_MAX_BYTES = 64 * 1024
"""Largest marshalled code the host keeps and sends (bytes); constant folding can make
a short source into a large code object."""

_CACHE_SIZE = 256
_SEEN_SIZE = 1024


_seen: OrderedDict[tuple[str, bool], None] = OrderedDict()


def host_compiled(code: str, policy: SandboxPolicy) -> list[Any] | None:
    """The encoded ``code`` compiled as a worker would, or ``None``.

    The fields are those of
    :func:`~ptcbox.runtimes.subprocess.worker._config.encode_compiled`.

    ``None`` (the worker compiles) the first time the host sees ``code`` under this
    kind of policy, and for snippets it does not compile (see the module docstring).
    Cached: an LRU of 256 compiled snippets, and of the last 1,024 sources seen.
    """
    if len(code) > HOST_COMPILE_MAX_CHARS:
        return None
    key = (code, policy.restricted)
    if key not in _seen:
        _seen[key] = None
        if len(_seen) > _SEEN_SIZE:
            _seen.popitem(last=False)
        return None
    return _host_compiled(code, policy.restricted)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _host_compiled(code: str, restricted: bool) -> list[Any] | None:
    policy = SandboxPolicy() if restricted else SandboxPolicy.trusted()
    try:
        compiled = compile_snippet(
            code, policy, filename=SNIPPET_FILENAME, os_enforced_limits=True, cache=False
        )
        fields = encode_compiled(compiled)
    except Exception:  # the worker compiles it again and reports the error
        return None
    return fields if len(fields[1]) <= HOST_COMPILE_MAX_BYTES * 4 // 3 + 4 else None

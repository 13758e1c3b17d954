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

The runtime never compiles on its event loop (``block=False``): the second sight of a
snippet starts the compile in a background thread and still leaves this run to the
worker; later runs get the code object. A long compile then costs the loop no more
than the interpreter's switch interval at a time (issue 13, item 3).

Only the host produces this data and only the worker reads it, so nothing the worker
sends is ever unmarshalled. The worker falls back to compiling the source when the
bytecode magic number differs (another Python version).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict, deque
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
_ready: OrderedDict[tuple[str, bool], list[Any] | None] = OrderedDict()  # off-loop results
_pending: set[tuple[str, bool]] = set()
_lock = threading.Lock()
_queue: deque[tuple[str, bool]] = deque()
_compiling = False


def host_compiled(code: str, policy: SandboxPolicy, *, block: bool = True) -> list[Any] | None:
    """The encoded ``code`` compiled as a worker would, or ``None``.

    The fields are those of
    :func:`~ptcbox.runtimes.subprocess.worker._config.encode_compiled`.

    ``None`` (the worker compiles) the first time the host sees ``code`` under this
    kind of policy, and for snippets it does not compile (see the module docstring).
    Cached: an LRU of 256 compiled snippets, and of the last 1,024 sources seen.

    Args:
        code: The snippet.
        policy: The runtime's policy (only whether it is restricted matters).
        block: ``False`` never compiles in the calling thread: a snippet not compiled
            yet is handed to a background thread and ``None`` returned (the worker
            compiles it this time).
    """
    if len(code) > HOST_COMPILE_MAX_CHARS:
        return None
    key = (code, policy.restricted)
    if key not in _seen:
        _seen[key] = None
        if len(_seen) > _SEEN_SIZE:
            _seen.popitem(last=False)
        return None
    if block:
        return _host_compiled(code, policy.restricted)
    return _compiled_off_thread(key)


def _compiled_off_thread(key: tuple[str, bool]) -> list[Any] | None:
    global _compiling  # one compile thread at a time, for the process
    with _lock:
        if key in _ready:
            _ready.move_to_end(key)
            return _ready[key]
        if key in _pending:
            return None
        _pending.add(key)
        _queue.append(key)
        if not _compiling:  # the thread ends when the queue is empty: none is left idle
            _compiling = True
            threading.Thread(target=_compile_queued, name="ptcbox-compile", daemon=True).start()
    return None


def _compile_queued() -> None:
    global _compiling
    while True:
        with _lock:
            if not _queue:
                _compiling = False
                return
            key = _queue.popleft()
        fields = None
        try:
            fields = _host_compiled(*key)
        finally:
            with _lock:
                _pending.discard(key)
                _ready[key] = fields
                if len(_ready) > _CACHE_SIZE:
                    _ready.popitem(last=False)


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

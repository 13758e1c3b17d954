"""Compile snippets in the host and ship the code object to the worker.

A worker is a fresh process (or, reused, one idle for a while): it compiles a snippet
from scratch with cold CPU caches (the RestrictedPython transform and ``compile`` of
``print(1)`` take ~0.2 ms there, of a 13-line snippet with 9 tool calls ~0.7-0.9 ms).
The host compiles it instead, with the same transform and policy, and sends the code
object ``marshal``-ed (base64 in the JSON ``run`` message), in two cases:

* a short new snippet (up to :data:`HOST_INLINE_MAX_CHARS`), compiled on the calling
  thread (``inline=True``) from the syntax tree the host's pre-flight check has just
  parsed (see :mod:`ptcbox.runtimes.subprocess._prepared`, which measured why): one
  parse instead of two, and the worker decodes instead of compiling. The transform is
  linear in the source: ~0.8 ms per KiB; of 19 shapes of 1 KiB tried (nested lambdas,
  comparison and attribute chains, nested blocks, ``match`` ...) the slowest took 3.3
  ms on a loaded machine, so the event loop is held for a few milliseconds at most
  (constant folding of repeated sequences held it ~45 ms: such snippets are left to
  the worker, see :func:`_may_fold_large`);
* a repeated snippet (up to :data:`HOST_COMPILE_MAX_CHARS`): its second sight starts
  the compile in a background thread (``block=False``) and still leaves that run to
  the worker; later runs get the code object. A long compile costs the loop no more
  than the interpreter's switch interval at a time (issue 13, item 3).

Results are kept in an LRU cache. The host leaves to the worker snippets over
:data:`HOST_COMPILE_MAX_CHARS`, ones it fails to compile (the worker reports the error
as it always does) and ones whose code is over :data:`HOST_COMPILE_MAX_BYTES`
(constant folding can make 2 KiB of source into a 1 MiB code object).

Only the host produces this data and only the worker reads it, so nothing the worker
sends is ever unmarshalled. The worker falls back to compiling the source when the
bytecode magic number differs (another Python version).
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import threading
from collections import OrderedDict, deque
from typing import Any

from ptcbox.runtimes._shared._error_text import SNIPPET_FILENAME
from ptcbox.runtimes.subprocess.worker._config import encode_compiled
from ptcbox.sandbox import SandboxPolicy, compile_snippet

__all__ = [
    "HOST_COMPILE_MAX_BYTES",
    "HOST_COMPILE_MAX_CHARS",
    "HOST_INLINE_MAX_CHARS",
    "host_compiled",
]

HOST_COMPILE_MAX_CHARS = 2048
"""Longest snippet the host compiles (characters)."""

HOST_INLINE_MAX_CHARS = 1024
"""Longest new snippet the host compiles on the calling thread (characters)."""

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


def host_compiled(
    code: str,
    policy: SandboxPolicy,
    *,
    block: bool = True,
    inline: bool = False,
    tree: ast.Module | None = None,
) -> list[Any] | None:
    """The encoded ``code`` compiled as a worker would, or ``None``.

    The fields are those of
    :func:`~ptcbox.runtimes.subprocess.worker._config.encode_compiled`.

    ``None`` (the worker compiles) the first time the host sees ``code`` under this
    kind of policy unless ``inline``, and for snippets it does not compile (see the
    module docstring). Cached: an LRU of 256 compiled snippets, and of the last 1,024
    sources seen.

    Args:
        code: The snippet.
        policy: The runtime's policy (only whether it is restricted matters).
        block: ``False`` never compiles in the calling thread: a snippet not compiled
            yet is handed to a background thread and ``None`` returned (the worker
            compiles it this time). ``inline`` overrides it for short snippets.
        inline: Compile a snippet of up to :data:`HOST_INLINE_MAX_CHARS` now, on the
            calling thread, even the first time (the caller has just checked it).
        tree: ``code`` parsed (``ast.parse``), which the compile then takes instead of
            parsing it again; it may be changed. Only with ``inline``.
    """
    if len(code) > HOST_COMPILE_MAX_CHARS:
        return None
    key = (code, policy.restricted)
    if inline and len(code) <= HOST_INLINE_MAX_CHARS:
        if code.count("*") > _FEW_STARS and tree is None:  # parsed once, used twice
            tree = _parsed(code)
            if tree is None:  # the worker compiles it and reports what it must
                return None
        if not _may_fold_large(code, tree):
            return _compiled_now(key, tree)
    if key not in _seen:
        _seen[key] = None
        if len(_seen) > _SEEN_SIZE:
            _seen.popitem(last=False)
        return None
    if block:
        return _host_compiled(code, policy.restricted)
    return _compiled_off_thread(key)


def _may_fold_large(code: str, tree: ast.Module | None) -> bool:
    """Whether ``compile`` may fold a repetition of a sequence (``'a' * 4096``, ``(s,) *
    256``) in ``code``. It folds ``+`` of the results without a size limit: 1 KiB of
    such source held the event loop ~45 ms (redteam17: ``(s,) * 256``, ``s`` the sum of
    105 ``'a' * 4096``; compile interns each of the 256 references, scanning 430 KB each
    time), other shapes of 1 KiB ~1-3 ms. Those are left to the worker, as before.

    Up to :data:`_FEW_STARS` ``*`` in the text fold ~2 ms at most (seven ``'a' * 4096``
    added, in a 256-tuple): the walk of the tree (~0.14 ms for 750 characters, a
    quarter of their compile) is only for snippets with more."""
    if code.count("*") <= _FEW_STARS or tree is None:
        return False
    nodes: list[ast.AST] = []  # every node before its descendants
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(ast.iter_child_nodes(node))
    kinds: dict[int, int] = {}  # id(node): its kind, found for descendants first
    for node in reversed(nodes):  # one pass: a chain of 500 '*' stays linear
        kind = _kind(node, kinds)
        if kind:
            kinds[id(node)] = kind
            if kind == _SEQUENCE and isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                return True
    return False


_FEW_STARS = 8
_NOT_CONSTANT, _NUMBER, _SEQUENCE = 0, 1, 2


def _kind(node: ast.AST, kinds: dict[int, int]) -> int:
    """What the compiler's constant folding may make of ``node`` (its children's kinds
    in ``kinds``): no constant, a number (ints fold to 128 bits at most), or a
    str/bytes/tuple."""
    if isinstance(node, ast.Constant):
        return _SEQUENCE if isinstance(node.value, str | bytes) else _NUMBER
    if isinstance(node, ast.Tuple):
        every = all(kinds.get(id(e)) for e in node.elts)
        return _SEQUENCE if every else _NOT_CONSTANT
    if isinstance(node, ast.UnaryOp):
        return kinds.get(id(node.operand), _NOT_CONSTANT)
    if isinstance(node, ast.BinOp):
        left = kinds.get(id(node.left), _NOT_CONSTANT)
        right = kinds.get(id(node.right), _NOT_CONSTANT)
        return max(left, right) if left and right else _NOT_CONSTANT
    return _NOT_CONSTANT


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


def _compiled_now(key: tuple[str, bool], tree: ast.Module | None) -> list[Any] | None:
    """Compile ``key``'s snippet on this thread unless it is cached; cache the result."""
    with _lock:
        if key in _ready:
            _ready.move_to_end(key)
            return _ready[key]
    fields = _compile_fields(*key, tree)
    with _lock:
        _seen[key] = None
        _seen.move_to_end(key)
        if len(_seen) > _SEEN_SIZE:
            _seen.popitem(last=False)
        _ready[key] = fields
        if len(_ready) > _CACHE_SIZE:
            _ready.popitem(last=False)
    return fields


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _host_compiled(code: str, restricted: bool) -> list[Any] | None:
    return _compile_fields(code, restricted, None)


@functools.cache
def _policy(restricted: bool) -> SandboxPolicy:
    """The policy of each kind, made once (its checks cost ~40 µs per construction);
    nothing in it but ``restricted`` changes the compiled code."""
    return SandboxPolicy() if restricted else SandboxPolicy.trusted()


def _compile_fields(code: str, restricted: bool, tree: ast.Module | None) -> list[Any] | None:
    policy = _policy(restricted)
    if _NEW_PARSER_WARNINGS and _PARSE_MAY_WARN.search(code) is not None:
        return None  # its parse may warn: the worker's parse must (see _parsed)
    if _may_warn(code):
        tree = tree or _parsed(code)
        if tree is None or _compile_may_warn(tree):  # the worker compiles it
            return None
    try:
        compiled = compile_snippet(
            code,
            policy,
            filename=SNIPPET_FILENAME,
            os_enforced_limits=True,
            cache=False,
            tree=tree,
        )
        fields = encode_compiled(compiled)
    except Exception:  # the worker compiles it again and reports the error
        return None
    return fields if len(fields[1]) <= HOST_COMPILE_MAX_BYTES * 4 // 3 + 4 else None


def _parsed(code: str) -> ast.Module | None:
    """``code`` parsed, or ``None`` if it does not parse or its parse may warn (from 3.12
    on, of invalid escapes and number suffixes): a worker given the code object does not
    parse, so the warning would be the host's, not the snippet's."""
    if _NEW_PARSER_WARNINGS and _PARSE_MAY_WARN.search(code) is not None:
        return None
    try:
        return ast.parse(code, filename=SNIPPET_FILENAME, mode="exec")
    except Exception:
        return None


def _may_warn(code: str) -> bool:
    """Whether the text has what :func:`_compile_may_warn` looks for: ``is``,
    ``assert``, or a bracket after a literal's last character (a quote, ``)``, ``]``,
    ``}``, a number, ``None``/``True``/``False``). A comment between a literal and its bracket
    (``("a"  # why`` then ``(1))``) is not looked through. ~12 µs per 240 characters."""
    if "is" in code and _IS.search(code) is not None:
        return True
    if "assert" in code:
        return True
    for match in _BRACKET.finditer(code):  # what precedes each bracket: linear
        end = match.start()
        while end and code[end - 1] in " \t\f\r\n\\":
            end -= 1
        last = code[end - 1] if end else ""
        if last in "'\")]}":
            return True
        if last.isalnum() or last in "_.":
            start = end - 1
            while start and (code[start - 1].isalnum() or code[start - 1] in "_."):
                start -= 1
            token = code[start:end]
            if token.lstrip(".")[:1].isdigit() or token in ("None", "True", "False", "..."):
                return True
    return False


_IS = re.compile(r"\bis\b")
_BRACKET = re.compile(r"[(\[]")
_NEW_PARSER_WARNINGS = sys.version_info >= (3, 12)
_PARSE_MAY_WARN = re.compile(r"\\|\d[^\W\d]")
_MAY_FOLD = (ast.Constant, ast.Tuple, ast.UnaryOp, ast.BinOp)
_DISPLAYS = (ast.List, ast.ListComp, ast.Set, ast.SetComp, ast.Dict, ast.DictComp)
_NOT_CALLABLE = (*_MAY_FOLD, *_DISPLAYS, ast.GeneratorExp, ast.JoinedStr)
_NOT_SUBSCRIPTABLE = (ast.Set, ast.SetComp, ast.GeneratorExp, ast.Lambda, ast.UnaryOp, ast.BinOp)
_SEQUENCES = (ast.Constant, ast.Tuple, ast.List, ast.ListComp, ast.JoinedStr)


def _compile_may_warn(tree: ast.Module) -> bool:
    """Whether CPython's compiler may issue a ``SyntaxWarning`` for ``tree`` (``x is
    1``, ``assert (x, "why")``, ``[1, 2](3)``, ``{1}[0]``, ``"ab"["a"]``: compile.c's
    checks).

    Such a snippet is left to the worker: its compile there writes the warning to the
    snippet's stderr (the result's ``stderr``); the host's wrote it to the host's
    stderr and the result had none (redteam17). Conservative: what may fold to a
    constant counts as one."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            if any(isinstance(op, ast.Is | ast.IsNot) for op in node.ops) and any(
                _literal(e) for e in (node.left, *node.comparators)
            ):
                return True
        elif isinstance(node, ast.Assert):
            if isinstance(node.test, ast.Tuple) and node.test.elts:
                return True
        elif isinstance(node, ast.Call):
            if isinstance(node.func, _NOT_CALLABLE):
                return True
        elif isinstance(node, ast.Subscript) and _subscript_may_warn(node):
            return True
    return False


def _subscript_may_warn(node: ast.Subscript) -> bool:
    value, index = node.value, node.slice
    if isinstance(value, _NOT_SUBSCRIPTABLE):
        return True
    if isinstance(value, ast.Constant) and not isinstance(value.value, str | bytes | tuple):
        return True
    sequence = isinstance(value, _SEQUENCES)
    int_index = isinstance(index, ast.Constant) and type(index.value) is int
    return sequence and isinstance(index, (*_NOT_CALLABLE, ast.Lambda)) and not int_index


def _literal(node: ast.expr) -> bool:
    """Whether ``node`` may fold to a constant other than ``None``/``True``/``False``/
    ``...`` (the operands of ``is`` the compiler leaves unwarned)."""
    if isinstance(node, ast.Constant):
        value = node.value
        return not (value is None or value is True or value is False or value is ...)
    return isinstance(node, _MAY_FOLD)

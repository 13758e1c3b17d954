"""Attribute and variable names the sandbox treats specially (shared by compile and guards)."""

from __future__ import annotations

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

__all__ = [
    "ALLOWED_DUNDER_DEFS",
    "ALLOWED_DUNDER_NAMES",
    "ALLOWED_DUNDER_READS",
    "DATA_GUARDED_ATTRS",
    "FORMAT_METHODS",
    "NATIVE_ATTRS",
    "NOT_NATIVE_ATTRS",
    "OWNER_ONLY_ATTRS",
    "RESTRICTED_ATTRS",
    "SIZE_GUARDED_METHODS",
    "VALUE_CHECKED_ATTRS",
    "is_dunder",
    "is_private",
    "is_reserved",
    "restricted_reason",
]

RESTRICTED_ATTRS: frozenset[str] = (frozenset(INSPECT_ATTRIBUTES) - {"tb_next"}) | frozenset(
    {
        # frames, code, tracebacks, generators, coroutines, async generators: every
        # attribute that hands out an interpreter-internal object
        "f_back",
        "f_builtins",
        "f_code",
        "f_generator",
        "f_globals",
        "f_locals",
        "f_trace",
        "f_trace_lines",
        "f_trace_opcodes",
        "tb_frame",
        "co_code",
        "co_consts",
        "co_names",
        "co_lnotab",
        "co_linetable",
        "co_exceptiontable",
        "gi_code",
        "gi_frame",
        "gi_yieldfrom",
        "gi_suspended",
        "cr_await",
        "cr_code",
        "cr_frame",
        "cr_origin",
        "cr_suspended",
        "ag_await",
        "ag_code",
        "ag_frame",
        "ag_suspended",
        # Python 2 spellings that some code generators still emit
        "func_globals",
        "func_code",
        "func_closure",
        "func_defaults",
        "func_dict",
        "im_func",
        "im_self",
        "im_class",
        # asyncio objects lead to the event loop, coroutines and frames through these
        "get_loop",
        "get_coro",
        "get_stack",
        "print_stack",
        "_loop",
        # class-hierarchy traversal (B08): reaching base classes such as the real
        # enum.Enum, whose functional API builds classes from arbitrary dunder names
        "mro",
    }
)
"""Attribute names no snippet may read or write, on any object (frame, code, traceback,
generator, coroutine and async-generator internals; routes to the event loop; ``mro``).
``tb_next`` is not among them: a traceback's next entry is another traceback (plain line
data; its ``tb_frame`` stays refused)."""

FORMAT_METHODS: frozenset[str] = frozenset({"format", "format_map"})
"""``str.format``/``format_map`` traverse attributes of their arguments (CVE-2023-41039)."""

SIZE_GUARDED_METHODS: frozenset[str] = frozenset(
    {
        # str / bytes / bytearray
        "ljust", "rjust", "center", "zfill", "expandtabs", "replace", "join", "translate",
        "to_bytes",  # int
        "digest", "hexdigest",  # hashlib.shake_128/256 (XOF: any output length)
        "sub", "subn", "expand",  # re.Pattern / re.Match
    }
)  # fmt: skip
"""Names of C methods whose result size is checked against ``max_repeat_bytes`` (the
guard wraps the value when it is such a C method; see ``_strsize.GUARDED_KINDS``)."""

OWNER_ONLY_ATTRS: frozenset[str] = frozenset({"register"})
"""Methods that change shared state of their owner (ABC registries); only allowed when the
owner was created by the snippet."""

VALUE_CHECKED_ATTRS: frozenset[str] = FORMAT_METHODS | SIZE_GUARDED_METHODS | OWNER_ONLY_ATTRS
"""Names whose value the getattr guard inspects (and refuses or wraps) before handing it
out: compiled code never reads them natively (augmented assignment, ``match`` patterns)."""

DATA_GUARDED_ATTRS: frozenset[str] = frozenset({"tofile", "dump", "dumps", "ctypes"})
"""Names refused on numpy/pandas objects (``_dataspecs.DATA_ATTRS``); on other objects
the guard hands them out unchanged."""

NOT_NATIVE_ATTRS: frozenset[str] = RESTRICTED_ATTRS | VALUE_CHECKED_ATTRS | DATA_GUARDED_ATTRS
"""Public names that must never be read without the getattr guard."""

ALLOWED_DUNDER_READS: frozenset[str] = frozenset(
    {"__name__", "__qualname__", "__doc__", "__module__", "__init__"}
)
"""Dunder attributes a snippet may read (``__init__`` only on ``super()`` and on the
snippet's own classes and instances)."""

ALLOWED_DUNDER_NAMES: frozenset[str] = frozenset({"__name__", "__debug__"})
"""Dunder variable names a snippet may read (``if __name__ == "__main__":``)."""

ALLOWED_DUNDER_DEFS: frozenset[str] = frozenset(
    {
        "__init__",
        "__post_init__",
        "__getattr__",
        "__init_subclass__",
        "__class_getitem__",
        "__repr__",
        "__str__",
        "__format__",
        "__bytes__",
        "__hash__",
        "__bool__",
        "__len__",
        "__length_hint__",
        "__iter__",
        "__next__",
        "__reversed__",
        "__contains__",
        "__getitem__",
        "__setitem__",
        "__delitem__",
        "__missing__",
        "__call__",
        "__enter__",
        "__exit__",
        "__aenter__",
        "__aexit__",
        "__aiter__",
        "__anext__",
        "__await__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__index__",
        "__int__",
        "__float__",
        "__complex__",
        "__round__",
        "__trunc__",
        "__floor__",
        "__ceil__",
        "__neg__",
        "__pos__",
        "__abs__",
        "__invert__",
        *(
            f"__{prefix}{op}__"
            for op in (
                "add",
                "sub",
                "mul",
                "matmul",
                "truediv",
                "floordiv",
                "mod",
                "divmod",
                "pow",
                "lshift",
                "rshift",
                "and",
                "xor",
                "or",
            )
            for prefix in ("", "r", "i")
        ),
    }
)
"""Special methods a snippet class may define (``__slots__`` may be bound to a literal, see
``_transform``). Left out on purpose: ``__del__`` (would run snippet code at garbage
collection, outside the time limit), ``__getattribute__``, ``__setattr__``,
``__delattr__`` (the guards' own reads and writes must not run snippet code first),
``__set_name__``, ``__reduce__`` and the rest of the pickle/copy protocol. ``__getattr__``
only runs when ordinary lookup fails; the sandbox's marks are never read by lookup."""

NATIVE_ATTRS: frozenset[str] = frozenset(
    {
        # list / dict / set / deque / Counter: the methods hot loops use
        "append",
        "appendleft",
        "extend",
        "insert",
        "pop",
        "popleft",
        "popitem",
        "remove",
        "discard",
        "add",
        "update",
        "get",
        "setdefault",
        "items",
        "keys",
        "values",
        "copy",
        "clear",
        "sort",
        "reverse",
        "index",
        "count",
        "most_common",
        "union",
        "intersection",
        "difference",
        "issubset",
        "issuperset",
        # str
        "split",
        "rsplit",
        "splitlines",
        "strip",
        "lstrip",
        "rstrip",
        "lower",
        "upper",
        "title",
        "capitalize",
        "casefold",
        "startswith",
        "endswith",
        "find",
        "rfind",
        "isdigit",
        "isalpha",
        "isalnum",
        "isspace",
        "isnumeric",
        "isdecimal",
        "isupper",
        "islower",
        "encode",
        "decode",
        "partition",
        "rpartition",
        "removeprefix",
        "removesuffix",
        # re.Match / datetime / numbers
        "group",
        "groups",
        "groupdict",
        "start",
        "end",
        "span",
        "year",
        "month",
        "day",
        "hour",
        "minute",
        "second",
        "microsecond",
        "isoformat",
        "strftime",
        "real",
        "imag",
        "numerator",
        "denominator",
        "is_integer",
        "bit_length",
    }
)
"""Attribute names compiled to plain (unguarded) attribute access, for speed in hot loops.

Reading them is safe on every object a snippet can reach: they are public, never name a
module, frame, code object or event loop (``tests/sandbox/test_guards.py`` checks this
over every module the default policy allows), and are not size- or format-guarded.
"""


def restricted_reason(name: str) -> str:
    """Why attribute ``name`` (in :data:`RESTRICTED_ATTRS`) is refused."""
    if name == "mro":
        return "class-hierarchy traversal is off limits"
    if name in ("get_loop", "get_coro", "get_stack", "print_stack", "_loop"):
        return "it leads to the event loop, coroutines or frames"
    return "frame, code, traceback and generator internals are off limits"


def is_dunder(name: str) -> bool:
    """``__x__``."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def is_reserved(name: str) -> bool:
    """Names reserved for the sandbox's own guards: ``_x_`` and dunders (``_`` is free)."""
    return len(name) > 1 and name.startswith("_") and name.endswith("_")


def is_private(name: str) -> bool:
    """``_x`` or ``__x`` (not reserved): allowed on the snippet's own objects only."""
    return name.startswith("_") and not name.endswith("_")

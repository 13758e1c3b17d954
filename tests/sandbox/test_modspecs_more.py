"""csv, calendar, zoneinfo, struct, zlib, gzip, secrets, shlex, copy and the refusals."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ptcbox.errors import ArithmeticLimitExceeded, PolicyViolation
from ptcbox.runtimes._shared._error_text import format_snippet_error
from ptcbox.sandbox import EXCLUDED_BUILTINS, SandboxPolicy, compile_snippet
from ptcbox.sandbox._refusals import BUILTIN_HINTS

SMALL = SandboxPolicy().replace(max_repeat_bytes=1 << 16, max_int_bits=1 << 12)


@pytest.mark.parametrize(
    "code",
    [
        "import struct\nstruct.Struct('100000s')",
        "import struct\nstruct.pack('100000x')",
        "import secrets\nsecrets.token_bytes(10**6)",
        "import secrets\nsecrets.token_hex(10**6)",
        "import secrets\nsecrets.randbits(10**6)",
        "import calendar\ncalendar.month(2024, 1, w=10**6)",
        "import zlib\nzlib.decompress(zlib.compress(bytes(1 << 17)))",
        "import gzip\ngzip.decompress(gzip.compress(b'a') + gzip.compress(bytes(1 << 17)))",
        "import array\narray.array('b', [0]) * 10**6",
    ],
)
def test_one_call_results_are_size_checked(sandbox_run: Callable, code: str) -> None:
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run(code, SMALL)


def test_decompress_keeps_cpythons_errors(sandbox_run: Callable) -> None:
    with pytest.raises(Exception, match="Error -5 while decompressing data"):
        sandbox_run("import zlib\nzlib.decompress(zlib.compress(b'abc')[:-3])")


def test_csv_leaves_out_process_wide_registries(sandbox_run: Callable) -> None:
    with pytest.raises(AttributeError, match="process-wide"):
        sandbox_run("import csv\ncsv.register_dialect('x', delimiter=';')")
    assert sandbox_run("import csv\nlist(csv.reader(['a;b'], delimiter=';'))").value == [["a", "b"]]


def test_shlex_split_never_reads_stdin(sandbox_run: Callable) -> None:
    with pytest.raises(ValueError, match="must not be None"):
        sandbox_run("import shlex\nshlex.split(None)")
    with pytest.raises(AttributeError, match="reads stdin"):
        sandbox_run("import shlex\nshlex.shlex")


def test_zoneinfo_from_file_is_refused(sandbox_run: Callable) -> None:
    with pytest.raises(PolicyViolation, match="from_file is not available"):
        sandbox_run("import io, zoneinfo\nzoneinfo.ZoneInfo.from_file(io.BytesIO(b''))")


def test_deepcopy_of_the_snippets_own_objects(sandbox_run: Callable) -> None:
    code = "import copy\nclass P:\n    def __init__(self):\n        self.items = [1]\n"
    code += "p = P()\nq = copy.deepcopy(p)\nq.items.append(2)\nr = copy.copy(p)\n"
    code += "(p.items, q.items, r.items is p.items, type(q) is P)"
    assert sandbox_run(code).value == ([1], [1, 2], True, True)


@pytest.mark.parametrize("name", sorted(BUILTIN_HINTS))
def test_missing_builtins_say_why_in_the_error_text(name: str) -> None:
    assert name in EXCLUDED_BUILTINS
    code = f"{name}()"
    exc = NameError(f"name {name!r} is not defined", name=name)
    text, _ = format_snippet_error(exc, code, 10_000)
    assert text.splitlines()[-1] == BUILTIN_HINTS[name]
    assert "not available in the sandbox" in BUILTIN_HINTS[name]


def test_eval_refusal_says_what_to_do() -> None:
    with pytest.raises(PolicyViolation, match="write the code in the snippet itself"):
        compile_snippet("eval('1')", SandboxPolicy())
    with pytest.raises(PolicyViolation, match="use an import statement"):
        compile_snippet("__import__('os')", SandboxPolicy())


def test_refused_import_says_why_and_lists_the_allowed(sandbox_run: Callable) -> None:
    with pytest.raises(ImportError, match=r"'os' is not allowed in the sandbox: no access to"):
        sandbox_run("import os")

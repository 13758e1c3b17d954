"""The sandbox's ``re``: CPython's API and results, matched under the deadline."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._regexview import set_deadline

SAME_AS_CPYTHON = r"""
import re
out = []
p = re.compile(r"(?P<word>\w+)@(\d+)", re.I)
m = p.search("see Foo@12 and bar@3")
out += [repr(m), m.group(0), m.group(1, 2), m["word"], m.groups(), m.groupdict(), m.span(2)]
out += [m.start(), m.end(1), m.lastindex, m.lastgroup, m.pos, m.endpos, m.regs, m.string]
out += [m.expand(r"\2-\g<word>"), m.re is p, bool(m), isinstance(m, re.Match)]
out += [p.pattern, p.flags, p.groups, dict(p.groupindex), repr(p), isinstance(p, re.Pattern)]
out += [p.findall("a@1 b@2"), [x.group() for x in p.finditer("a@1 b@2")]]
out += [re.split(r"\s*,\s*", "a , b,c"), re.split("x*", "axbc"), re.sub("x*", "-", "abxd")]
out += [re.sub(r"(\d+)", lambda m: str(int(m.group(1)) * 2), "a1 b22"), re.subn("a", "b", "aaa")]
out += [re.match("a", "ba"), re.fullmatch("[a-c]+", "abc").span(), re.escape("a.b")]
out += [re.findall(rb"\d", b"a1b2"), re.match("(a)|(b)", "b").groups("-"), re.I | re.M]
out += [re.search("é", "CAFÉ", re.I).group(), re.match(r"\w+", "abc", re.A).group()]
out += [str(re.Pattern[str]).startswith("re.Pattern"), re.Match[bytes] is not None]
out += [re.compile("a", re.X).flags, re.compile(b"a").flags, p == re.compile(p.pattern, re.I)]
try:
    re.compile("(")
except re.error as e:
    out.append(("error", str(e), e.pos))
print(out)
"""


def test_results_are_cpythons(sandbox_run: Callable) -> None:
    plain: dict[str, list[object]] = {}
    exec(SAME_AS_CPYTHON.replace("print(out)", ""), plain)
    assert sandbox_run(SAME_AS_CPYTHON).stdout == f"{plain['out']}\n"


def test_a_catastrophic_pattern_raises_at_the_deadline(sandbox_run: Callable) -> None:
    end = time.perf_counter() + 0.3
    set_deadline(lambda: end)  # a function: the execution's clock may be paused
    started = time.perf_counter()
    try:
        with pytest.raises(TimeoutError):
            sandbox_run('import re\nre.match(r"(a|aa)+$", "a" * 80 + "b")')
    finally:
        set_deadline(None)
    assert time.perf_counter() - started < 5  # exponential: hours without the deadline


def test_a_str_subclass_pattern_reaches_the_caches_as_exact_str(sandbox_run: Callable) -> None:
    code = """\
import re
class S(str):
    def __hash__(self):
        return 1
p = re.compile(S("a+"))
print(type(p.pattern).__name__, p.match("aa").group())
"""
    assert sandbox_run(code).stdout == "str aa\n"
    assert all(type(key[1]) in (str, bytes) for key in re._cache)  # type: ignore[attr-defined]


def test_substitutions_keep_their_size_check(sandbox_run: Callable) -> None:
    policy = SandboxPolicy().replace(max_repeat_bytes=1 << 16)
    for code in (
        'import re\nre.sub("", "x" * 1000, "a" * 1000)',
        'import re\nre.compile("(a)").sub(lambda m: "x" * 10000, "a" * 100)',
        'import re\nre.match("(a+)", "a" * 1000).expand(r"\\1" * 1000)',
    ):
        with pytest.raises(Exception, match="limit") as info:
            sandbox_run(code, policy)
        assert type(info.value).__name__ == "ArithmeticLimitExceeded", code
    assert re.sub("a", "b", "a") == "b"  # the host's re is untouched

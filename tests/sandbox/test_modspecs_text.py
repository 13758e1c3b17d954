"""json / textwrap / re / collections / uuid / itertools views: host helpers that run a
size-guarded operation with a size the snippet picks are checked too (F6's kind)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from ptcbox.errors import ArithmeticLimitExceeded
from ptcbox.sandbox import SandboxPolicy

SMALL = SandboxPolicy().replace(max_repeat_bytes=1 << 20)


@pytest.mark.parametrize(
    "code",
    [
        "import json\njson.dumps([1], indent=10**8)",
        "import json\njson.dumps([1], indent=' ' * 5000)",
        "import json\njson.JSONEncoder(indent=10**8).encode([1])",
        "import json\nclass E(json.JSONEncoder):\n    pass\ne = E()\ne.indent = 10**8\n"
        "e.encode([1])",
        "import json\nclass N:\n    def __index__(self):\n        return 10**8\n"
        "json.dumps([1], indent=N())",
        "import textwrap\ntextwrap.fill('a\\tb', tabsize=10**8)",
        "import textwrap\ntextwrap.wrap('a\\tb', tabsize=10**8)",
        "import textwrap\nw = textwrap.TextWrapper()\nclass W(textwrap.TextWrapper):\n    pass\n"
        "w = W()\nw.tabsize = 10**8\nw.fill('a\\tb')",
        "import re\nre.sub('', 'x' * 1000, 'a' * 10000)",
        "import re\nre.subn('', 'x' * 1000, 'a' * 10000)",
        "import re\nre.compile('').sub('x' * 1000, 'a' * 10000)",
        "import re\nbig = 'x' * 100000\nre.sub('', lambda m: big, 'a' * 100)",
        "import re\nre.sub('(a+)', '\\\\1' * 1000, 'a' * 10000)",
        "import re\nre.sub('(?=(a*))', '\\\\1', 'a' * 5000)",
        "import re\nm = re.match('(a+)', 'a' * 10000)\nm.expand('\\\\1' * 1000)",
        "import re\nre.Match.expand(re.match('(a+)', 'a' * 10000), '\\\\g<1>' * 1000)",
        "import re\nre.sub(b'', b'x' * 1000, b'a' * 10000)",
        "import itertools\nitertools.tee([], 10**6)",
        "import hashlib\nhashlib.shake_256(b'').hexdigest(10**6)",
        "import hashlib\nh = hashlib.new('shake_128')\nh.digest(10**7)",
        "import hashlib\nh = hashlib.shake_128()\ntype(h).digest(h, 10**7)",
        "import uuid\nuuid.bytes_(10**7)",
        "import statistics\nstatistics.mul('a', 10**7)",
        # Fraction("1e...") computes 10 ** exponent in one C call
        "import fractions\nfractions.Fraction('1e99999999')",
        "import fractions\nfractions.Fraction(' -2.5E+99_999_999 ')",
        "import fractions\ntype(fractions.Fraction(1))('1e-99999999')",
        "import fractions\nclass F(fractions.Fraction):\n    pass\nF('1e99999999')",
        "import statistics\nstatistics.Fraction('1e99999999')",
        "import fractions, decimal\nfractions.Fraction(decimal.Decimal('1e99999999'))",
    ],
)
def test_host_helpers_with_snippet_chosen_sizes_are_checked(
    sandbox_run: Callable, code: str
) -> None:
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run(code, SMALL)


def test_checked_helpers_still_work(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        r"""
        import json, re, textwrap, itertools, hashlib
        class E(json.JSONEncoder):
            def default(self, o):
                return sorted(o)
        text = "word " * 50000
        [
            json.dumps({"a": [1]}, indent=2),
            json.dumps({3, 1}, cls=E),
            json.dumps([1], indent="\t"),
            textwrap.fill("a\tb c", width=5, tabsize=4),
            textwrap.shorten("hello   world  again", width=12),
            re.sub(r"(\w+)", r"<\1>", "ab cd"),
            re.sub("b", lambda m: "X", "abcb", count=1),
            re.subn(b"b", b"Y", b"abcb"),
            len(re.sub(r"(\w+)", r"[\1]", text)),
            len(re.sub("(?=(o))", r"\1", text)),
            re.match("(a)(b)", "ab").expand(r"\2\1"),
            [len(list(t)) for t in itertools.tee([1, 2], 3)],
            len(hashlib.shake_128(b"x").hexdigest(8)),
        ]
        """
    )
    value = sandbox_run(code, SMALL).value
    assert value[0] == '{\n  "a": [\n    1\n  ]\n}'
    assert value[1:4] == ["[1, 3]", "[\n\t1\n]", "a   b\nc"]
    assert value[4:8] == ["hello [...]", "<ab> <cd>", "aXcb", (b"aYcY", 2)]
    assert value[8] == 350000 and value[9] == 300000  # exact paths for large inputs
    assert value[10:] == ["ba", [2, 2, 2], 16]


def test_user_string_and_list_are_left_out(sandbox_run: Callable) -> None:
    for name in ("UserString", "UserList"):
        with pytest.raises(AttributeError, match="host code"):
            sandbox_run(f"import collections\ncollections.{name}('a')")
    assert sandbox_run("import collections\ncollections.UserDict(a=1)['a']").value == 1


def test_uuid_node_and_uuid1_work_without_starting_processes(sandbox_run: Callable) -> None:
    code = (
        "import uuid\n"
        "[uuid.getnode() == uuid.getnode(), uuid.uuid1().version, uuid.uuid1(clock_seq=1).version]"
    )
    assert sandbox_run(code).value == [True, 1, 1]


def test_fraction_stays_a_class_to_snippets(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        import fractions, statistics
        F = fractions.Fraction
        class Half(F):
            pass
        f = F("1.5e3")
        [f, isinstance(f, F), type(f) is F, F.from_float(0.5), F(3, 6) + 1,
         isinstance(Half(1, 2), F), issubclass(Half, F), statistics.Fraction is F,
         statistics.mean([F(1, 2), F(3, 2)])]
        """
    )
    from fractions import Fraction

    assert sandbox_run(code).value == [
        Fraction(1500),
        True,
        True,
        Fraction(1, 2),
        Fraction(3, 2),
        True,
        True,
        True,
        Fraction(1),
    ]

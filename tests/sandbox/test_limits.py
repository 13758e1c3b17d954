"""Size guards on runaway arithmetic and repetition (the thread runtime's protection)."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable

import pytest

from ptcbox.errors import ArithmeticLimitExceeded
from ptcbox.sandbox import SandboxPolicy


def test_B15_huge_integer_power_is_refused_before_computing(sandbox_run: Callable) -> None:
    start = time.perf_counter()
    with pytest.raises(ArithmeticLimitExceeded) as info:
        sandbox_run("x = 10 ** (10 ** 8)")
    assert time.perf_counter() - start < 5  # it never started the power
    err = info.value
    assert err.operation == "**" and err.unit == "bits"
    assert err.limit == 4_000_000 and err.observed > 300_000_000
    assert "4,000,000 bits" in str(err)


@pytest.mark.parametrize(
    "code",
    [
        "x = 10 ** (10 ** 8)",
        "b, e = 10, 10 ** 8\nx = b ** e",
        "x = pow(10, 10 ** 8)",
        "x = 3\nx **= 10 ** 8",
        "import operator\noperator.pow(7, 10 ** 8)",
        "from fractions import Fraction\nFraction(3, 2) ** 10 ** 8",
        "from fractions import Fraction\n10 ** Fraction(10 ** 8)",
        "x = 2 << 10 ** 9",
        "n = 10 ** 9\nx = 1 << n",
        "x = 1\nx <<= 10 ** 9",
        "import operator\noperator.lshift(1, 10 ** 9)",
        "def sq(a):\n    return a * a\nsq(2 ** 3_000_000)",
        "import functools, operator\nfunctools.reduce(operator.mul, [2 ** 3_000_000] * 2)",
    ],
)
def test_B15_every_route_to_a_huge_integer(sandbox_run: Callable, code: str) -> None:
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run(code)


def test_products_of_provably_numeric_names_stay_native(sandbox_run: Callable) -> None:
    """Documented trade-off: a * b on names the compiler proved numeric is not guarded
    (each product at most doubles the size; a loop of them is interruptible)."""
    ran = sandbox_run("a = 2 ** 3_000_000\nb = a * a\nb.bit_length()")
    assert ran.value == 6_000_001


def test_ordinary_arithmetic_is_unaffected(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        a = 2 ** 1000
        b = pow(3, 10 ** 9, 7)
        c = 1 << 100
        d = 2.0 ** 1000.5 if False else 2.0 ** 10
        e = (-2) ** 3
        f = 10 ** -2
        g = [a.bit_length(), b, c.bit_length(), d, e, f]
        g
        """
    )
    assert sandbox_run(code).value == [1001, pow(3, 10**9, 7), 101, 1024.0, -8, 0.01]


def test_B17_sequence_repetition_is_refused(sandbox_run: Callable) -> None:
    with pytest.raises(ArithmeticLimitExceeded) as info:
        sandbox_run('s = "a" * 10**10')
    assert info.value.unit == "bytes"
    assert info.value.limit == 64 << 20


@pytest.mark.parametrize(
    "code",
    [
        's = "a" * 10**10',
        "s = 10**10 * 'a'",
        "s = [0] * 10**10",
        "s = (0,) * 10**10",
        'n = 10**10\ns = b"x" * n',
        "s = bytearray(b'x') * 10**10",
        "import collections\ncollections.deque([1]) * 10**10",
        's = "ab"\ns *= 10**10',
        "class A:\n    pass\na = A()\na.v = 'x'\na.v *= 10**10",
        "d = {'k': 'x'}\nd['k'] *= 10**10",
        "import operator\noperator.mul('a', 10**10)",
        "import operator\noperator.imul(['a'], 10**10)",
        '"a".ljust(10**10)',
        '"a".rjust(10**10)',
        '"x".center(10**10)',
        '"x".zfill(10**10)',
        'str.ljust("a", 10**10)',
        '"\\t".expandtabs(10**10)',
        'b"\\t".expandtabs(10**10)',
        '("a" * 60000).replace("a", "a" * 60000)',
        '"".replace("", "x" * 10**8)',
        '("x" * 60000).join([""] * 60000)',
        '("a" * 10**6).translate({97: "b" * 1000})',
        'str.translate("a" * 10**6, str.maketrans({"a": "b" * 1000}))',
        '"-".join("" for _ in range(10**8))',
        "bytes(10**10)",
        "bytearray(10**10)",
        "type(b'')(10**10)",
        "(1).to_bytes(10**10, 'big')",
        'f"{1:>10000000000}"',
        'w = 10**10\nf"{1:>{w}}"',
        'format(1, ">10000000000")',
        '"%10000000000d" % 1',
        '"%*d" % (10**10, 1)',
        'fmt = "%.10000000000f"\nfmt % 1.0',
        'b"%10000000000d" % 1',
    ],
)
def test_B17_every_route_to_a_huge_sequence(sandbox_run: Callable, code: str) -> None:
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run(code)


def test_ordinary_repetition_and_padding_work(sandbox_run: Callable) -> None:
    code = textwrap.dedent(
        """
        n = 3
        r = ["-" * 10, [0] * n, n * "ab", "x".ljust(4, "."), "7".zfill(3), "a\\tb".expandtabs(4),
             ", ".join(str(i) for i in range(3)), "a-b".replace("-", "+"),
             "ab".translate({97: "xy"}), bytes(2), f"{1.5:>8.2f}",
             "%5s|%-3d|" % ("a", 2), format(255, "08b"), (5).to_bytes(2, "big")]
        r
        """
    )
    assert sandbox_run(code).value == [
        "----------", [0, 0, 0], "ababab", "x...", "007", "a   b", "0, 1, 2", "a+b", "xyb",
        b"\x00\x00", "    1.50", "    a|2  |", "11111111", b"\x00\x05",
    ]  # fmt: skip


def test_limits_come_from_the_policy(sandbox_run: Callable) -> None:
    tight = SandboxPolicy(max_int_bits=64, max_repeat_bytes=100)
    with pytest.raises(ArithmeticLimitExceeded, match="100 bytes"):
        sandbox_run("s = 'ab' * 51", tight)
    assert sandbox_run("s = 'ab' * 50\nlen(s)", tight).value == 100
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run("x = 2 ** 65", tight)
    assert sandbox_run("x = 2 ** 63\nx", tight).value == 2**63
    assert sandbox_run("s = 'ab' * 51\nlen(s)").value == 102


def test_B18_int_to_str_digit_limit_stays_on(sandbox_run: Callable) -> None:
    start = time.perf_counter()
    with pytest.raises(ValueError, match="digits"):
        sandbox_run("print(10 ** 5000)")
    with pytest.raises(ValueError, match="digits"):
        sandbox_run('int("9" * 5000)')
    assert time.perf_counter() - start < 5


def test_os_enforced_limits_leave_arithmetic_to_the_os(sandbox_run: Callable) -> None:
    """Under SubprocessRuntime the guards are compiled out: moderate sizes just work."""
    tight = SandboxPolicy(max_int_bits=64, max_repeat_bytes=100)
    ran = sandbox_run(
        "x = 2 ** 10\ns = 'a' * 1000\ny = x * x * x * x * x * x * x\n(y.bit_length(), len(s))",
        tight,
        os_enforced_limits=True,
    )
    assert ran.value == (71, 1000)
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run("x = 10 ** (10 ** 8)", os_enforced_limits=True)


EVIL = textwrap.dedent(
    """
    class Evil:
        calls = 0
        def __index__(self):
            Evil.calls += 1
            return 1 if Evil.calls == 1 else 10 ** 10
    class Big:
        def __index__(self):
            return 10 ** 10
    class I(int):
        pass
    class S(str):
        def __len__(self):
            return 0
        def count(self, sub):
            return 0
    """
)


@pytest.mark.parametrize(
    "code",
    [
        '"a" * Big()',
        "[0] * Big()",
        'Big() * b"x"',
        '"a" * I(10**10)',
        "2 ** I(10**8)",
        "I(2) ** (10**8)",
        "1 << I(10**9)",
        "x = 'a'\nx *= Big()",
        '"a".ljust(Big())',
        '"a".center(width=Big())',
        '"a".zfill(I(10**10))',
        '"\\t".expandtabs(Big())',
        "bytes(Big())",
        "bytearray(I(10**10))",
        "(1).to_bytes(Big(), 'big')",
        "S('a' * 10**6) * 1000",
        "S('a' * 60000).replace('a', 'a' * 60000)",
        "S('x' * 60000).join([S('')] * 60000)",
        '"%*d" % (I(10**10), 1)',
        "import math\nmath.factorial(I(10**7))",
        "import math\nmath.factorial(Big())",
        "import math\nmath.comb(Big(), 5 * 10**9)",
        "import random\nrandom.getrandbits(Big())",
        "import random\nrandom.randbytes(I(10**10))",
        "import itertools\nitertools.product('ab', repeat=Big())",
        "import decimal\ndecimal.localcontext(prec=I(10**9))",
        "import decimal\ndecimal.Context(Big())",
        "import operator\noperator.mul('a', Big())",
    ],
)
def test_int_like_objects_and_subclasses_cannot_fake_sizes(
    sandbox_run: Callable, code: str
) -> None:
    """__index__ is read once and the real call gets the checked value; builtin len/count
    of str/bytes subclasses are used, never their overrides."""
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run(EVIL + code)


def test_index_is_read_once_so_a_changing_answer_cannot_fool_the_check(
    sandbox_run: Callable,
) -> None:
    """Evil answers 1 to the first __index__ call and 10**10 after: the check and the
    real operation both see 1."""
    for code in ['"a" * Evil()', '"a".ljust(Evil())', "bytes(Evil())", "[0] * Evil()"]:
        assert len(sandbox_run(EVIL + code).value) == 1


def test_int_like_arguments_still_work(sandbox_run: Callable) -> None:
    code = EVIL + textwrap.dedent(
        """
        class Three:
            def __index__(self):
                return 3
        ["ab" * Three(), "x".ljust(Three(), "."), bytes(Three()), [0] * I(2), 2 ** I(3),
         (1).to_bytes(Three(), "big")]
        """
    )
    assert sandbox_run(code).value == ["ababab", "x..", b"\x00\x00\x00", [0, 0], 8, b"\x00\x00\x01"]

"""Size guards keyed on the value read, not on the object it was read from (F6's kind).

``S.ljust`` for a str subclass ``S`` is the same C method as ``str.ljust``; so is
``super(S, s).ljust``. Guards that asked ``obj in (str, bytes, bytearray)`` or trusted a
subclass's own ``__contains__``/``__iter__``/``values()``/``__bytes__`` let one C call
build gigabytes.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ptcbox.errors import ArithmeticLimitExceeded
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._limits import Limits
from ptcbox.sandbox._strsize import is_size_guarded

SMALL = SandboxPolicy().replace(max_repeat_bytes=1 << 20, max_int_bits=100_000)
N = 10**7


@pytest.mark.parametrize(
    "code",
    [
        # unbound C methods through subclasses (F6)
        f"class S(str): pass\nS.ljust('a', {N})",
        f"class S(str): pass\nS.center('a', {N})",
        f"class S(str): pass\nS.zfill('1', {N})",
        f"class B(bytes): pass\nB.rjust(b'a', {N})",
        f"class B(bytearray): pass\nB.ljust(bytearray(b'a'), {N})",
        f"class I(int): pass\nI.to_bytes(1, {N}, 'big')",
        f"class S(str): pass\nS.expandtabs('\\t' * 100, {N // 10})",
        f"class S(str): pass\nS.join(S('x' * 1000), ['a'] * {N // 1000})",
        f"class S(str): pass\nS.replace('a' * 1000, 'a', 'b' * {N // 1000})",
        f"class S(str): pass\nS.translate('a' * 1000, {{97: 'b' * {N // 1000}}})",
        # bound methods of subclass instances and super()
        f"class S(str): pass\nS('a').ljust({N})",
        f"class S(str):\n    def ljust(self, n):\n        return super().ljust(n)\n"
        f"S('a').ljust({N})",
        f"class S(str): pass\nsuper(S, S('a')).center({N})",
        f"class S(str): pass\nm = getattr(S('a'), 'rjust')\nm({N})",
        f"class S(str): pass\nlist(map(S.ljust, ['a'], [{N}]))",
        f"import functools\nclass S(str): pass\nfunctools.partial(S.ljust, 'a')({N})",
        "class S(str): pass\nclass X:\n    def __radd__(self, other):\n        global leak\n"
        f"        leak = other\n        return 1\ns = S('a')\ns.ljust += X()\nleak({N})",
        # constructors
        f"class B(bytes): pass\nB({N})",
        f"class B(bytearray): pass\nB({N})",
        f"class B(bytearray):\n    def __init__(self, n):\n        super().__init__(n)\nB({N})",
        f"bytes(source={N})",
        f"bytearray(source={N})",
        f"type(b'')({N})",
        # an __index__ object that also iterates is still a count (CPython's order)
        f"class I(int):\n    def __iter__(self):\n        return iter([1])\nbytes(I({N}))",
        "class J:\n    def __index__(self):\n        return 10**7\n"
        "    def __iter__(self):\n        return iter([1])\nbytearray(J())",
        "class K:\n    def __index__(self):\n        return 10**7\n"
        "    def __bytes__(self):\n        return b''\nbytearray(K())",
        # subclasses that lie to the checks
        f"class T(dict):\n    def values(self):\n        return []\n"
        f"('a' * 100).translate(T({{97: 'x' * {N // 100}}}))",
        f"class S(str):\n    def __contains__(self, x):\n        return False\nS('%{N}s') % 'a'",
        f"class B(bytes):\n    def __contains__(self, x):\n        return False\n"
        f"B(b'%{N}s') % b'a'",
        f"class B(bytes):\n    def __bytes__(self):\n        return b''\nB(b'%{N}s') % b'a'",
        f"class T(tuple):\n    def __iter__(self):\n        return iter([1, 'a'])\n"
        f"'%*s' % T(({N}, 'a'))",
        f"class S(str): pass\nformat(1, S('{N}'))",
        f"class S(str):\n    def __len__(self):\n        return 0\nformat(1, S('>{N}'))",
        # int subclasses and bools
        "class I(int): pass\nx = I(2**60000) * I(2**60000)",
        "class I(int): pass\nx = I(2**60000)\nx *= 2**60000",
        "import operator\nclass I(int): pass\noperator.mul(I(2**60000), I(2**60000))",
    ],
)
def test_size_guards_hold_for_subclasses_super_and_lying_helpers(
    sandbox_run: Callable, code: str
) -> None:
    with pytest.raises(ArithmeticLimitExceeded):
        sandbox_run(code, SMALL)


def test_subclass_methods_still_work_when_small(sandbox_run: Callable) -> None:
    code = (
        "class S(str): pass\nclass B(bytes): pass\nclass BA(bytearray): pass\n"
        "[S.ljust('a', 3), S('a').center(3), super(S, S('a')).zfill(3), B(3), B(b'ab'), "
        "BA(2), bytes(source=2), S.join('-', ['a', 'b']), isinstance(B(1), bytes)]"
    )
    assert sandbox_run(code, SMALL).value == [
        "a  ",
        " a ",
        "00a",
        b"\x00\x00\x00",
        b"ab",
        bytearray(b"\x00\x00"),
        b"\x00\x00",
        "a-b",
        True,
    ]


def test_own_methods_named_like_guarded_ones_are_not_wrapped(sandbox_run: Callable) -> None:
    code = "class P:\n    def center(self, n):\n        return n * 2\nP().center(21)"
    assert sandbox_run(code, SMALL).value == 42


def test_value_recognition() -> None:
    class S(str):
        pass

    assert is_size_guarded(S.ljust) and is_size_guarded(S("a").ljust)
    assert is_size_guarded(super(S, S("a")).center) and is_size_guarded((1).to_bytes)
    assert not is_size_guarded(str.upper) and not is_size_guarded(len)

    class Sneaky:
        def __eq__(self, other: object) -> bool:
            raise AssertionError("compared with a guarded C method")

        def __hash__(self) -> int:
            return hash(str.ljust)

    assert not is_size_guarded(Sneaky())  # no dict lookup with a snippet object
    lim = Limits(10**6, 1 << 20)
    assert lim.size_wrapper(Sneaky()) is None

"""Size guards for runaway arithmetic and repetition (thread-runtime protection).

Compiled snippets call these instead of ``**``, ``<<``, ``*`` and ``%`` where the compiler
cannot prove the operands are small numbers; each checks the *estimated* size of the result
before computing it and raises :class:`~ptcbox.errors.ArithmeticLimitExceeded` when it is
over the policy's ``max_int_bits`` / ``max_repeat_bytes``. The idea is simpleeval's
``MAX_POWER`` check (https://github.com/danthedeckie/simpleeval, issue 122), applied to
every operator that can build a huge object in one C call that holds the GIL.

Under ``SubprocessRuntime`` (``os_enforced_limits=True``) the OS limits memory and CPU and
these guards are compiled out.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from ptcbox.errors import ArithmeticLimitExceeded
from ptcbox.sandbox._strsize import SEQ_LEN, as_index, real_len, size_checked_method

__all__ = ["Limits", "as_index"]

_PERCENT_FIELD: Final = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_BYTE_PERCENT_FIELD: Final = re.compile(rb"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS: Final = re.compile(r"\d+")
_EXPONENT: Final = re.compile(r"[eE]([-+]?\d[\d_]*)\s*\Z")
_LOG2_10: Final = math.log2(10)
_log2 = math.log2


def _int_pow_bits(base: int, exp: int) -> float:
    if exp <= 1 or -1 <= base <= 1:
        return 0.0
    bits = base.bit_length()
    if bits * exp <= 64:
        return float(bits * exp)
    return exp * _log2(abs(base))


class Limits:
    """Size-checked operators for one ``(max_int_bits, max_repeat_bytes)`` pair.

    Args:
        max_int_bits: Largest integer result allowed, in bits.
        max_repeat_bytes: Largest repeated/padded sequence allowed, in bytes.
    """

    def __init__(self, max_int_bits: int, max_repeat_bytes: int) -> None:
        self.max_int_bits = max_int_bits
        self.max_repeat_bytes = max_repeat_bytes

    # -- integers -------------------------------------------------------------------

    def int_bits(self, operation: str, bits: float) -> None:
        """Raise when an integer result of ``bits`` bits is over the limit."""
        if bits > self.max_int_bits:
            raise ArithmeticLimitExceeded(operation, self.max_int_bits, int(bits), "bits")

    def pow_bits(self, base: Any, exp: Any) -> float:
        """Estimated bits of ``base ** exp`` (0 when it cannot be a huge exact power)."""
        if isinstance(exp, Fraction) and exp.denominator == 1:
            exp = exp.numerator
        if not isinstance(exp, int):
            return 0.0
        exp = int.__index__(exp)
        if isinstance(base, int):
            return _int_pow_bits(int.__index__(base), abs(exp))
        if isinstance(base, Fraction):
            return _int_pow_bits(max(abs(base.numerator), base.denominator), abs(exp))
        return 0.0

    def pow(self, base: Any, exp: Any) -> Any:
        """``base ** exp`` with the result size checked first."""
        if type(base) is float or type(exp) is float:
            return base**exp
        bits = self.pow_bits(base, exp)
        if bits > self.max_int_bits:
            raise ArithmeticLimitExceeded("**", self.max_int_bits, int(bits), "bits")
        return base**exp

    def builtin_pow(self, base: Any, exp: Any, mod: Any = None) -> Any:
        """pow(base, exp, mod=None) -- sandboxed: results over max_int_bits are refused."""
        if mod is not None:
            return pow(base, exp, mod)
        return self.pow(base, exp)

    def _shift_bits(self, a: Any, b: Any) -> None:
        if isinstance(a, int) and isinstance(b, int):
            shift = int.__index__(b)
            if shift > 0:
                self.int_bits("<<", int.__index__(a).bit_length() + shift)

    def lshift(self, a: Any, b: Any) -> Any:
        """``a << b`` with the result size checked first."""
        self._shift_bits(a, b)
        return a << b

    # -- repetition -----------------------------------------------------------------

    def repeat_bytes(self, operation: str, nbytes: int) -> None:
        """Raise when a sequence result of ``nbytes`` bytes is over the limit."""
        if nbytes > self.max_repeat_bytes:
            raise ArithmeticLimitExceeded(operation, self.max_repeat_bytes, nbytes, "bytes")

    def mul(self, a: Any, b: Any) -> Any:
        """``a * b`` with sequence repetition and integer products size-checked."""
        ta, tb = type(a), type(b)
        if ta is float or tb is float:
            return a * b
        if ta is int and tb is int:
            if a.bit_length() + b.bit_length() > self.max_int_bits:
                self.int_bits("*", a.bit_length() + b.bit_length())
            return a * b
        if isinstance(a, int) and isinstance(b, int):  # bool, int subclasses
            self._product_bits(a, b)
            return a * b
        seq_len = real_len(a)
        if seq_len is not None:
            n = as_index(b)
            if n is not None:
                self._check_repeat(a, seq_len, n)
                return a * n
        else:
            seq_len = real_len(b)
            if seq_len is not None:
                n = as_index(a)
                if n is not None:
                    self._check_repeat(b, seq_len, n)
                    return n * b
        return a * b

    def _product_bits(self, a: int, b: int) -> None:
        bits = int.bit_length(a) + int.bit_length(b)  # int's own, not a subclass override
        if bits > self.max_int_bits:
            self.int_bits("*", bits)

    def _check_repeat(self, seq: Any, length: int, n: int) -> None:
        if n > 1:
            size = next(size for kind, _, size in SEQ_LEN if isinstance(seq, kind))
            self.repeat_bytes("*", length * n * size)

    def imul(self, a: Any, b: Any) -> Any:
        """``a *= b`` (in place where the type supports it), size-checked."""
        seq_len = real_len(a)
        if seq_len is not None:
            n = as_index(b)
            if n is not None:
                self._check_repeat(a, seq_len, n)
                return operator.imul(a, n)  # type: ignore[no-untyped-call]
        elif isinstance(a, int) and isinstance(b, int):
            self._product_bits(a, b)
        elif real_len(b) is not None:
            return self.mul(a, b)
        return operator.imul(a, b)  # type: ignore[no-untyped-call]

    def ipow(self, a: Any, b: Any) -> Any:
        """``a **= b``, size-checked."""
        bits = self.pow_bits(a, b)
        if bits > self.max_int_bits:
            raise ArithmeticLimitExceeded("**", self.max_int_bits, int(bits), "bits")
        return operator.ipow(a, b)  # type: ignore[no-untyped-call]

    def ilshift(self, a: Any, b: Any) -> Any:
        """``a <<= b``, size-checked."""
        self._shift_bits(a, b)
        return operator.ilshift(a, b)  # type: ignore[no-untyped-call]

    # -- formatting -----------------------------------------------------------------

    def _check_percent(self, fmt: str | bytes | bytearray, args: Any) -> None:
        text = isinstance(fmt, str)
        pattern = _PERCENT_FIELD if text else _BYTE_PERCENT_FIELD
        star: str | bytes = "*" if text else b"*"
        largest = 0
        for width, precision in pattern.findall(fmt):  # type: ignore[arg-type]
            for value in (width, precision):
                if value and value != star:
                    largest = max(largest, int(value))
                elif value == star:
                    # tuple's own iterator: a subclass could iterate other items than
                    # the ones % formats
                    values = tuple.__iter__(args) if isinstance(args, tuple) else (args,)
                    for item in values:
                        if isinstance(item, int):
                            largest = max(largest, abs(int.__index__(item)))
        self.repeat_bytes("%", largest)

    def mod(self, a: Any, b: Any) -> Any:
        """``a % b``; for %-formatting, field widths/precisions are size-checked.

        The tests use the builtin types' own methods: a subclass could answer ``"%" in a``
        or ``bytes(a)`` with something other than what ``%`` then formats.
        """
        if isinstance(a, str):
            if str.find(a, "%") >= 0:
                self._check_percent(a, b)
        elif isinstance(a, bytes):
            if bytes.find(a, b"%") >= 0:
                self._check_percent(a, b)
        elif isinstance(a, bytearray) and bytearray.find(a, b"%") >= 0:
            self._check_percent(a, b)
        return a % b

    def imod(self, a: Any, b: Any) -> Any:
        """``a %= b``, formatting size-checked."""
        return self.mod(a, b)

    def check_format_spec(self, spec: str) -> None:
        """Raise when a format spec asks for a width/precision over the limit."""
        if type(spec) is str and len(spec) > 5:
            for digits in _DIGITS.findall(spec):
                if len(digits) > 6:
                    self.repeat_bytes("format", int(digits))

    def format(self, value: Any, spec: str = "", /) -> str:
        """format(value, format_spec='') -- sandboxed: huge widths are refused."""
        if type(spec) is not str and isinstance(spec, str):
            spec = str.__str__(spec)  # the exact characters a str subclass holds
        self.check_format_spec(spec)
        return format(value, spec)

    def fstring_format(self, value: Any, spec: str, conversion: int) -> str:
        """An f-string field with a dynamic or large format spec."""
        if conversion == 114:  # !r
            value = repr(value)
        elif conversion == 115:  # !s
            value = str(value)
        elif conversion == 97:  # !a
            value = ascii(value)
        self.check_format_spec(spec)
        return format(value, spec)

    # -- str / bytes / int methods: see _strsize.py ----------------------------------

    def size_wrapper(self, value: Any) -> Callable[..., Any] | None:
        """A size-checked stand-in for a guarded C method (``s.ljust``, ``str.ljust``,
        ``n.to_bytes`` ...), else ``None``."""
        return size_checked_method(self, value)

    # -- constructors -----------------------------------------------------------------

    def check_sized_constructor(
        self, kind: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``bytes(n)`` / ``bytearray(source=n)`` allocate n bytes: check n (read once)."""
        if not args and "source" in kwargs:
            rest = {k: v for k, v in kwargs.items() if k != "source"}
            return self.check_sized_constructor(kind, (kwargs["source"],), rest)
        return self._check_sized_args(kind, args), kwargs

    def _check_sized_args(self, kind: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
        if args:
            first = args[0]
            tp = type(first)
            # CPython's order: bytes() asks __bytes__ first, then __index__ (an object
            # that also iterates is still a count); bytearray() asks __index__ first
            if tp is int or (
                hasattr(tp, "__index__")
                and not isinstance(first, str | bytes | bytearray)
                and (kind == "bytearray" or not hasattr(tp, "__bytes__"))
            ):
                n = as_index(first)
                if n is not None:
                    self.repeat_bytes(f"{kind}(n)", n)
                    return (n, *args[1:])
        return args

    def check_fraction(
        self, kind: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``Fraction("1e999999999")`` computes ``10 ** exponent`` in one C call (as does
        ``Fraction(Decimal("1e999999999"))``): check the exponent's size first."""
        value = args[0] if args else kwargs.get("numerator")
        if isinstance(value, str):
            found = _EXPONENT.search(value)
            if found is not None:
                exponent = int(found.group(1))  # int()'s own digit limit applies
                self.int_bits("Fraction", abs(exponent) * _LOG2_10)
        elif isinstance(value, Decimal) and value.is_finite():
            self.int_bits("Fraction", abs(value.adjusted()) * _LOG2_10)
        return args, kwargs

    def check_decimal_precision(self, prec: Any) -> Any:
        """A decimal context precision (digits) must stay within max_int_bits."""
        n = as_index(prec)
        if n is None:
            return prec
        self.int_bits("decimal precision", n * 3.33)
        return n

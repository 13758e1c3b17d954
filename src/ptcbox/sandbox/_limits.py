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
from collections import deque
from collections.abc import Callable
from fractions import Fraction
from itertools import islice
from typing import Any, Final

from ptcbox.errors import ArithmeticLimitExceeded

__all__ = ["Limits"]

_SEQ_ITEM_BYTES: Final = {str: 1, bytes: 1, bytearray: 1, list: 8, tuple: 8, deque: 8}
_PERCENT_FIELD: Final = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_BYTE_PERCENT_FIELD: Final = re.compile(rb"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS: Final = re.compile(r"\d+")
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
        """Estimated bits of ``base ** exp`` (0 when it is not an exact power)."""
        tb = type(exp)
        if tb is Fraction and exp.denominator == 1:
            exp, tb = exp.numerator, int
        if tb is not int and tb is not bool:
            return 0.0
        ta = type(base)
        if ta is int or ta is bool:
            return _int_pow_bits(base, abs(exp))
        if ta is Fraction:
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

    def lshift(self, a: Any, b: Any) -> Any:
        """``a << b`` with the result size checked first."""
        if type(a) is int and type(b) is int and b > 0:
            bits = a.bit_length() + b
            if bits > self.max_int_bits:
                raise ArithmeticLimitExceeded("<<", self.max_int_bits, bits, "bits")
        return a << b

    # -- repetition -----------------------------------------------------------------

    def repeat_bytes(self, operation: str, nbytes: int) -> None:
        """Raise when a sequence result of ``nbytes`` bytes is over the limit."""
        if nbytes > self.max_repeat_bytes:
            raise ArithmeticLimitExceeded(operation, self.max_repeat_bytes, nbytes, "bytes")

    def _check_mul(self, a: Any, b: Any) -> None:
        ta, tb = type(a), type(b)
        if ta is int and tb is int:
            if a.bit_length() + b.bit_length() > self.max_int_bits:
                self.int_bits("*", a.bit_length() + b.bit_length())
            return
        if tb is int or tb is bool:
            seq, n = a, b
        elif ta is int or ta is bool:
            seq, n = b, a
        else:
            return
        if n <= 1:
            return
        for kind, size in _SEQ_ITEM_BYTES.items():
            if isinstance(seq, kind):
                self.repeat_bytes("*", len(seq) * n * size)
                return

    def mul(self, a: Any, b: Any) -> Any:
        """``a * b`` with sequence repetition and integer products size-checked."""
        if type(a) is float or type(b) is float:
            return a * b
        self._check_mul(a, b)
        return a * b

    def imul(self, a: Any, b: Any) -> Any:
        """``a *= b`` (in place where the type supports it), size-checked."""
        self._check_mul(a, b)
        return operator.imul(a, b)  # type: ignore[no-untyped-call]

    def ipow(self, a: Any, b: Any) -> Any:
        """``a **= b``, size-checked."""
        self.pow(a, 0)  # type check only
        bits = self.pow_bits(a, b)
        if bits > self.max_int_bits:
            raise ArithmeticLimitExceeded("**", self.max_int_bits, int(bits), "bits")
        return operator.ipow(a, b)  # type: ignore[no-untyped-call]

    def ilshift(self, a: Any, b: Any) -> Any:
        """``a <<= b``, size-checked."""
        if type(a) is int and type(b) is int and b > 0:
            self.int_bits("<<", a.bit_length() + b)
        return operator.ilshift(a, b)  # type: ignore[no-untyped-call]

    # -- formatting -----------------------------------------------------------------

    def _check_percent(self, fmt: str | bytes, args: Any) -> None:
        pattern = _PERCENT_FIELD if isinstance(fmt, str) else _BYTE_PERCENT_FIELD
        star = b"*" if isinstance(fmt, bytes) else "*"
        largest = 0
        for width, precision in pattern.findall(fmt):  # type: ignore[arg-type]
            for value in (width, precision):
                if value and value != star:
                    largest = max(largest, int(value))
                elif value == star:
                    values = args if isinstance(args, tuple) else (args,)
                    for item in values:
                        if type(item) is int:
                            largest = max(largest, abs(item))
        self.repeat_bytes("%", largest)

    def mod(self, a: Any, b: Any) -> Any:
        """``a % b``; for %-formatting, field widths/precisions are size-checked."""
        if isinstance(a, str):
            if "%" in a:
                self._check_percent(a, b)
        elif isinstance(a, bytes | bytearray) and b"%" in a:
            self._check_percent(bytes(a), b)
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

    # -- str / bytes / int methods ----------------------------------------------------

    def size_wrapper(self, obj: Any, name: str) -> Callable[..., Any] | None:
        """A size-checked ``obj.name`` for str/bytes/int methods, else ``None``."""
        if isinstance(obj, str | bytes | bytearray):
            return self._bound(getattr(obj, name), obj, name)
        if obj is str or obj is bytes or obj is bytearray:
            method = getattr(obj, name)

            def unbound(self_: Any, *args: Any, **kwargs: Any) -> Any:
                if isinstance(self_, str | bytes | bytearray):
                    self._estimate(self_, name, args, kwargs)
                return method(self_, *args, **kwargs)

            return unbound
        if isinstance(obj, int) and name == "to_bytes":
            return self._bound(obj.to_bytes, obj, name)
        if obj is int and name == "to_bytes":

            def to_bytes(self_: Any, *args: Any, **kwargs: Any) -> Any:
                self._estimate(self_, name, args, kwargs)
                return int.to_bytes(self_, *args, **kwargs)

            return to_bytes
        return None

    def _bound(self, method: Callable[..., Any], obj: Any, name: str) -> Callable[..., Any]:
        estimate = self._estimate

        def checked(*args: Any, **kwargs: Any) -> Any:
            args = estimate(obj, name, args, kwargs)
            return method(*args, **kwargs)

        checked.__name__ = name
        checked.__doc__ = method.__doc__
        return checked

    def _estimate(
        self, obj: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, ...]:
        """Raise if ``obj.name(*args, **kwargs)`` would be too large; may return new args."""
        if name in ("ljust", "rjust", "center", "zfill"):
            width = args[0] if args else kwargs.get("width", 0)
            if type(width) is int:
                self.repeat_bytes(f"str.{name}", width)
        elif name == "expandtabs":
            tabsize = args[0] if args else kwargs.get("tabsize", 8)
            if type(tabsize) is int and tabsize > 0:
                tab = "\t" if isinstance(obj, str) else b"\t"
                self.repeat_bytes("expandtabs", len(obj) + obj.count(tab) * tabsize)
        elif name == "replace" and len(args) >= 2:
            old, new = args[0], args[1]
            count = args[2] if len(args) > 2 else kwargs.get("count", -1)
            if isinstance(old, str | bytes | bytearray) and isinstance(
                new, str | bytes | bytearray
            ):
                grow = len(new) - len(old)
                if grow > 0:
                    hits = obj.count(old) if old else len(obj) + 1
                    if type(count) is int and count >= 0:
                        hits = min(hits, count)
                    self.repeat_bytes("replace", len(obj) + hits * grow)
        elif name == "join" and args:
            items = args[0]
            if not isinstance(items, list | tuple):
                cap = self.max_repeat_bytes // 8 + 1
                items = list(islice(items, cap + 1))
                if len(items) > cap:
                    self.repeat_bytes("join", len(items) * 8)
                args = (items, *args[1:])
            try:
                total = sum(map(len, items)) + max(len(items) - 1, 0) * len(obj)
            except TypeError:
                return args  # join itself raises the proper TypeError
            self.repeat_bytes("join", total)
        elif name == "to_bytes":
            length = args[0] if args else kwargs.get("length", 1)
            if type(length) is int:
                self.repeat_bytes("int.to_bytes", length)
        return args

    # -- constructors -----------------------------------------------------------------

    def check_sized_constructor(self, kind: str, args: tuple[Any, ...]) -> None:
        """``bytes(n)`` / ``bytearray(n)`` allocate n bytes: check n."""
        if args and type(args[0]) is int:
            self.repeat_bytes(f"{kind}(n)", args[0])

    def check_decimal_precision(self, prec: Any) -> None:
        """A decimal context precision (digits) must stay within max_int_bits."""
        if type(prec) is int:
            self.int_bits("decimal precision", prec * 3.33)

"""numpy arrays over a buffer the snippet chooses (SandboxPolicy.data()), and the real
class behind a checked builtin.

``numpy.ndarray(shape, dtype, buffer, offset)`` accepts a negative offset, so it reads and
writes memory outside its buffer, and with ``dtype=object`` it turns any address into an
object (the real ``eval`` and from there the real ``sys``: a red-team finding of this
stop). The sandbox hands out a checked stand-in for numpy's array classes on every route
(the module view, ``type(arr)``, a snippet subclass, a library subclass met later) that
refuses the buffer arguments. The positive control runs the same snippet under the
trusted policy in SubprocessRuntime, where it reads the bytes or the object; the data
policy refuses it with the guard's message on the attack's line.

``Cls.__mro__`` of a snippet class deriving from ``bytes`` listed the real ``bytes``
behind the checked one, so ``B.__mro__[2](10**8)`` built 100 MB in one call past the
size guard; it now lists the stand-in, as the class statement saw it.
"""

from __future__ import annotations

import pytest

import ptcbox
from ptcbox import SandboxPolicy

pytest.importorskip("numpy")
pytest.importorskip("pandas")

DATA = SandboxPolicy.data()
TRUSTED = SandboxPolicy.trusted().replace(allowed_imports=DATA.allowed_imports)

P = "import struct\nimport numpy as np\nimport pandas as pd\n"  # 3 lines
ADDRESS = 'secret = "s3cr3t"\nbuf = bytearray(struct.pack("<Q", id(secret)))\n'  # 2 lines
SAME = "print('same object', v is secret)"


def _refusal(kind: str) -> str:
    return (
        f"{kind}(shape, dtype, buffer=...) is not available in the sandbox: an array over a "
        "buffer views raw memory"
    )


# id: (snippet, line of the attack, the stand-in's name, what the trusted run prints)
ATTACKS: dict[str, tuple[str, int, str, str]] = {
    "negative_offset": (
        P + "b = bytearray(b'abc')\nv = np.ndarray((64,), dtype=np.uint8, buffer=b, offset=-64)\n"
        "print('read', len(v.tobytes()))",
        5, "numpy.ndarray", "read 64",
    ),
    "object_dtype": (
        P + ADDRESS + "v = np.ndarray((1,), object, buf)[0]\n" + SAME,
        6, "numpy.ndarray", "same object True",
    ),
    "type_of_an_array": (
        P + ADDRESS + "T = type(np.zeros(1))\nv = T((1,), dtype=object, buffer=buf)[0]\n" + SAME,
        7, "numpy.ndarray", "same object True",
    ),
    "recarray": (
        P + ADDRESS + "v = np.recarray((1,), dtype=[('a', 'O')], buf=buf)[0][0]\n" + SAME,
        6, "numpy.recarray", "same object True",
    ),
    "type_of_to_records": (
        P + ADDRESS + "T = type(pd.DataFrame({'a': [1]}).to_records())\n"
        "v = T((1,), dtype=[('a', 'O')], buf=buf)[0][0]\n" + SAME,
        7, "numpy.recarray", "same object True",
    ),
    "snippet_subclass": (
        P + ADDRESS + "class A(np.ndarray):\n    pass\nv = A((1,), object, buf)[0]\n" + SAME,
        8, "numpy.ndarray", "same object True",
    ),
}  # fmt: skip


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_array_over_a_chosen_buffer_is_refused(attack: str) -> None:
    code, line, kind, leaked = ATTACKS[attack]
    trusted = ptcbox.execute(code, policy=TRUSTED, runtime="subprocess", timeout=60)
    assert leaked in trusted.stdout, trusted  # the route is real
    result = ptcbox.execute(code, policy=DATA, runtime="subprocess", timeout=60)
    assert result.error_type == "PolicyViolation", result
    error = result.error or ""
    assert f'File "<snippet>", line {line}, in <module>' in error, error
    assert error.rstrip().splitlines()[-1].startswith(f"PolicyViolation: {_refusal(kind)}")
    assert result.stdout == ""


def test_array_classes_still_work_as_classes() -> None:
    code = (
        "import numpy as np\nimport pandas as pd\n"
        "a = np.arange(6).reshape(2, 3)\n"
        "print(type(a).__name__, type(a) is np.ndarray, isinstance(a, np.ndarray))\n"
        "print(type(a) == np.ndarray, isinstance(a, (np.ndarray, list)))\n"
        "print(np.ndarray((2,)).shape, np.ndarray((2, 2), dtype=np.int8).dtype)\n"
        "class A(np.ndarray):\n    pass\n"
        "print(np.zeros(3).view(A).sum(), np.frombuffer(b'ab', dtype=np.uint8).tolist())\n"
        "print(type(pd.Series([1]).values).__name__)\n"
    )
    expected = "ndarray True True\nTrue True\n(2,) int8\n0.0 [97, 98]\nndarray\n"
    result = ptcbox.execute(code, policy=DATA, runtime="subprocess", timeout=60)
    assert result.ok and result.stdout == expected, result


BYTES_MRO = "class B(bytes):\n    pass\nbase = B.__mro__[-2]\nprint(len(base(10**8)))"


@pytest.mark.parametrize("runtime", ["thread"])
def test_the_mro_of_a_bytes_subclass_lists_the_checked_bytes(runtime: str) -> None:
    trusted = ptcbox.execute(BYTES_MRO, policy=SandboxPolicy.trusted(), runtime=runtime)
    assert trusted.stdout == "100000000\n", trusted  # the real bytes builds it at once
    shown = ptcbox.execute("class B(bytes):\n    pass\nprint(B.__mro__)", runtime=runtime)
    assert shown.stdout == "(<class '__main__.B'>, <class 'bytes'>, <class 'object'>)\n"
    result = ptcbox.execute(BYTES_MRO, runtime=runtime)
    assert result.error_type == "ArithmeticLimitExceeded", result
    assert 'File "<snippet>", line 4, in <module>' in (result.error or "")
    assert "result size of 'bytes(n)' exceeded" in (result.error or "")

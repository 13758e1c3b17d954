"""A failing tool raises its own exception type (``runtimes/_shared/_tool_errors.py``).

Unit checks of payload and rebuild for every builtin exception class that can be a base,
then real tools in both runtimes: sync and async, ``gather(return_exceptions=True)``,
OSError fields, host-defined classes, and that no host object or frame comes along.
"""

from __future__ import annotations

import errno
import json
from typing import Any

import pytest

from ptcbox import DirectProjection, ToolError
from ptcbox.runtimes._shared._tool_errors import (
    BUILTIN_EXCEPTIONS,
    exception_payload,
    rebuild_tool_error,
)
from ptcbox.sandbox import SandboxPolicy

pytestmark = pytest.mark.anyio


def sample(cls: type[Exception]) -> Exception:
    """An instance of ``cls`` built the way its constructor wants."""
    special: dict[type[Exception], Exception] = {
        UnicodeDecodeError: UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
        UnicodeEncodeError: UnicodeEncodeError("ascii", "\xe9", 0, 1, "ordinal not in range"),
        UnicodeTranslateError: UnicodeTranslateError("\xe9", 0, 1, "no mapping"),
        ExceptionGroup: ExceptionGroup("two", [KeyError("a"), ValueError("b")]),
    }
    if cls in special:
        return special[cls]
    if issubclass(cls, SyntaxError):
        return cls("bad", ("f.py", 1, 2, "x y", 1, 3))
    if issubclass(cls, OSError):
        return cls(errno.ENOENT, "No such file or directory", "x.csv")
    return cls("msg", 2)


@pytest.mark.parametrize("name", sorted(BUILTIN_EXCEPTIONS))
def test_every_builtin_exception_class_can_be_a_base(name: str) -> None:
    cls = BUILTIN_EXCEPTIONS[name]
    original = sample(cls)
    payload = json.loads(json.dumps(exception_payload(original)))  # crosses as JSON
    rebuilt = rebuild_tool_error(payload, "tool", "text")
    assert isinstance(rebuilt, cls) and isinstance(rebuilt, ToolError)
    assert type(rebuilt).__name__ == type(original).__name__
    assert str(rebuilt) == str(original)
    assert repr(rebuilt) == repr(original)
    if cls is not ExceptionGroup:  # its args hold (rebuilt) exception objects
        assert rebuilt.args == original.args
    assert rebuilt.tool_name == "tool"  # type: ignore[attr-defined]
    if cls is not ExceptionGroup:  # its own ``message`` attribute wins
        assert rebuilt.message == "text"  # type: ignore[attr-defined]


def test_host_classes_keep_their_name_and_text() -> None:
    class UserNotFoundError(LookupError):
        pass

    class Quota(RuntimeError):
        def __str__(self) -> str:
            return f"quota exceeded, retry in {self.args[1]}s"

    user = rebuild_tool_error(exception_payload(UserNotFoundError("u42")), "t", "m")
    assert type(user).__name__ == "UserNotFoundError" and isinstance(user, LookupError)
    assert repr(user) == "UserNotFoundError('u42')"
    quota = rebuild_tool_error(exception_payload(Quota("slow", 30)), "t", "m")
    assert str(quota) == "quota exceeded, retry in 30s" and quota.args == ("slow", 30)
    for base in (SystemExit, KeyboardInterrupt):  # never the snippet's own exit
        rebuilt = rebuild_tool_error(exception_payload(base(3)), "t", "m")
        assert not isinstance(rebuilt, base) and isinstance(rebuilt, Exception)


@pytest.mark.parametrize(
    "payload",
    [None, "x", {"args": "no"}, {"base": "KeyError", "args": [{"$t": "pickle", "v": ""}]}],
)
def test_a_malformed_payload_gives_a_plain_tool_error(payload: Any) -> None:
    rebuilt = rebuild_tool_error(payload, "get_price", "KeyError: 'x'")
    assert type(rebuilt) is ToolError
    assert str(rebuilt) == "tool 'get_price' failed: KeyError: 'x'"


# --- real tools, both runtimes ------------------------------------------------------------


class UserNotFoundError(LookupError):
    """A host-defined tool exception."""


def get_price(sku: str) -> float:
    """Raises KeyError for unknown SKUs."""
    return {"a": 1.5}[sku]


def fetch(name: str) -> str:
    """Raises FileNotFoundError."""
    raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)


def flaky(n: int) -> str:
    """Raises ConnectionResetError."""
    raise ConnectionResetError(f"reset #{n}")


def find_user(uid: str) -> dict[str, str]:
    """Raises a host-defined class."""
    raise UserNotFoundError(uid)


def boom(kind: str) -> None:
    """Raises the builtin exception class named ``kind``."""
    raise sample(BUILTIN_EXCEPTIONS[kind])


def tools() -> dict[str, DirectProjection]:
    fns = [get_price, fetch, flaky, find_user, boom]
    return {fn.__name__: DirectProjection(fn.__name__, fn) for fn in fns}


CATCHING = """
try:
    get_price("zz")
except KeyError as e:
    print("KeyError", e, repr(e), e.args, isinstance(e, ToolError), isinstance(e, LookupError))
try:
    get_price(sku="zz")
except (ValueError, LookupError) as e:
    print("tuple", type(e).__name__)
try:
    fetch("q.csv")
except FileNotFoundError as e:
    print("fnf", e.errno, e.strerror, e.filename, str(e))
try:
    flaky(1)
except ConnectionError as e:
    print("conn", type(e).__name__, e)
try:
    find_user("u9")
except LookupError as e:
    print("user", type(e).__name__, e.args, e.tool_name)
try:
    fetch("x")
except ToolError as e:
    print("toolerror", e.message)
"""


async def test_tool_exceptions_are_caught_by_their_own_type(runtime: Any) -> None:
    result = await runtime.execute(CATCHING, tools())
    assert result.ok, result.error
    assert result.stdout.splitlines() == [
        "KeyError 'zz' KeyError('zz') ('zz',) True True",
        "tuple KeyError",
        "fnf 2 No such file or directory q.csv [Errno 2] No such file or directory: 'q.csv'",
        "conn ConnectionResetError reset #1",
        "user UserNotFoundError ('u9',) find_user",
        "toolerror FileNotFoundError: [Errno 2] No such file or directory: 'x'",
    ]
    assert result.tool_calls[0].error == "KeyError: 'zz'"  # the trace stays readable


async def test_every_builtin_base_in_the_runtime(runtime: Any) -> None:
    kinds = sorted(BUILTIN_EXCEPTIONS)
    code = (
        f"for kind in {kinds!r}:\n"
        "    try:\n"
        "        boom(kind)\n"
        "    except Exception as e:\n"
        "        print(kind, type(e).__name__, isinstance(e, ToolError), str(e))\n"
    )
    result = await runtime.execute(code, tools())
    assert result.ok, result.error
    expected = [
        f"{kind} {type(sample(BUILTIN_EXCEPTIONS[kind])).__name__} True "
        f"{sample(BUILTIN_EXCEPTIONS[kind])}"
        for kind in kinds
    ]
    assert result.stdout.splitlines() == "\n".join(expected).splitlines()


async def test_uncaught_tool_exception_reports_its_type(runtime: Any) -> None:
    result = await runtime.execute('print("a")\nget_price("SKU-9")', tools())
    assert result.stdout == "a\n"
    assert result.error_type == "KeyError"
    assert result.error is not None and result.error.endswith("KeyError: 'SKU-9'")
    assert "During handling" not in result.error


async def test_async_tools_and_gather_keep_exception_types(runtime: Any) -> None:
    async def aprice(sku: str) -> float:
        """Async get_price."""
        return get_price(sku)

    code = (
        "import asyncio\n"
        "r = await asyncio.gather(aprice('a'), aprice('b'), return_exceptions=True)\n"
        "print(r[0], type(r[1]).__name__, repr(r[1]), isinstance(r[1], ToolError))\n"
        "try:\n"
        "    await aprice('c')\n"
        "except KeyError as e:\n"
        "    print('caught', e)\n"
    )
    result = await runtime.execute(code, {"aprice": DirectProjection("aprice", aprice)})
    assert result.ok, result.error
    assert result.stdout == "1.5 KeyError KeyError('b') True\ncaught 'c'\n"


async def test_no_host_object_or_frame_reaches_the_snippet(make_runtime: Any) -> None:
    secret = object()

    def leaky(x: int) -> None:
        """Raises with a host object in its args and its __dict__, chained to another."""
        try:
            raise ValueError("inner")
        except ValueError as inner:
            exc = KeyError("k", secret)
            exc.host = secret  # type: ignore[attr-defined]
            raise exc from inner

    # the trusted policy lets the snippet look at everything an exception carries
    runtime = make_runtime(SandboxPolicy.trusted())
    code = (
        "try:\n"
        "    leaky(1)\n"
        "except KeyError as e:\n"
        "    print(e.args, sorted(vars(e)), e.__cause__, e.__context__)\n"
        "    tb, names = e.__traceback__, []\n"
        "    while tb is not None:\n"
        "        names.append(tb.tb_frame.f_code.co_name)\n"
        "        tb = tb.tb_next\n"
        "    print('leaky' in names)\n"
    )
    result = await runtime.execute(code, {"leaky": DirectProjection("leaky", leaky)})
    assert result.ok, result.error
    args, _, rest = result.stdout.partition(" [")
    assert args == "('k', '<object object>')"  # data only: the object became its name
    assert rest == "'_ptc_text', 'message', 'tool_name'] None None\nFalse\n"

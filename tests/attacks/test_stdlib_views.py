"""Attacks on the stdlib views issue 11 opened (sys, traceback, io, pprint, copy, logging,
warnings, contextlib, calendar, operator getters, zoneinfo, zlib/gzip/struct sizes).

Each proves its guard: a positive control (``SandboxPolicy.trusted()`` or plain Python)
does the forbidden thing, and the default policy refuses it with the guard's own message,
on the line the attack targets.
"""

from __future__ import annotations

import base64
import calendar
import contextlib
import copy
import decimal
import gzip
import logging
import struct
import sys
import traceback
import types
import warnings
import zlib
import zoneinfo
from collections.abc import Iterator
from typing import Any

import pytest

from ptcbox import resolve_tools
from ptcbox.errors import PolicyViolation
from ptcbox.runtimes import ThreadRuntime
from ptcbox.sandbox import SandboxPolicy
from ptcbox.sandbox._modspecs_more import FROM_FILE_REFUSED, _copy_module
from ptcbox.sandbox._owner import register_class
from ptcbox.sandbox._specbase import ModuleContext

from ._proof import Attack, control_output

pytestmark = pytest.mark.anyio

THIS_FILE = "test_stdlib_views.py"


def boom() -> None:
    """A tool that fails inside host code (this file's frames)."""
    raise ValueError("host failure")


def stdout_is_host() -> bool:
    """Whether the host's sys.stdout is still the one the test started with."""
    return sys.stdout is _ORIGINAL[0]


_ORIGINAL: list[Any] = [None]
TOOLS = resolve_tools([boom, stdout_is_host])


async def run(runtime: Any, code: str, **kwargs: Any) -> Any:
    return await runtime.execute(code, TOOLS, timeout=20, **kwargs)


async def trusted(make_runtime: Any, code: str, in_process: bool = False, **kwargs: Any) -> Any:
    """The positive control: the same code under the trusted policy, in a child Python
    (``_proof``: a control never runs in the test process). With ``extra_globals`` (host
    objects a child cannot receive) or ``in_process`` (this file's tools) it runs here, and
    the recursion limit is put back."""
    if not kwargs and not in_process:
        proof = Attack("control", code, 1, "", "", "attribute", "", control="trusted")
        stdout, error = control_output(proof)
        return types.SimpleNamespace(stdout=stdout, error=error)
    limit = sys.getrecursionlimit()
    rt = make_runtime(SandboxPolicy.trusted())
    try:
        return await run(rt, code, **kwargs)
    finally:
        sys.setrecursionlimit(limit)


def refused(result: Any, error_type: str, message: str, line: int) -> None:
    assert result.return_code == 1, (result.stdout, result.error)
    assert result.error_type == error_type, result.error
    assert message in result.error, result.error
    assert f"line {line}," in result.error, result.error


# -- sys: no route to modules, frames or the host's streams --------------------------------


@pytest.mark.parametrize(
    ("attack", "error_type", "message"),
    [
        ("sys.modules['os']", "AttributeError", "sys.modules is not available in the sandbox"),
        ("sys._getframe(0)", "PolicyViolation", "private attribute '_getframe'"),
        ("sys.settrace(None)", "AttributeError", "sys.settrace is not available"),
        # the control runs in-process in ThreadRuntime: set the limit it already has (a
        # raised limit turned a later deep-recursion test into a segfault of pytest)
        (
            "sys.setrecursionlimit(sys.getrecursionlimit())",
            "AttributeError",
            "sys.setrecursionlimit is not",
        ),
        ("sys.stdout.buffer", "AttributeError", "'SnippetStream' object has no attribute"),
        ("getattr(sys.stdout, '_sink')", "PolicyViolation", "private attribute '_sink'"),
        ("sys.stdin.read()", "AttributeError", "there is no stdin in the sandbox"),
    ],
)
async def test_sys_view_reaches_no_module_frame_or_host_stream(
    runtime: Any, make_runtime: Any, attack: str, error_type: str, message: str
) -> None:
    code = f"import sys\nx = {attack}\nprint('reached')"
    if attack.startswith(("sys.modules", "sys._", "sys.set")):
        control = await trusted(make_runtime, code)
        assert control.stdout == "reached\n", control.error  # the real sys hands it out
    refused(await run(runtime, code), error_type, message, 2)


async def test_sys_stdout_is_the_executions_capture_not_the_hosts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = "import sys, pprint\nsys.stdout.write('out\\n')\nsys.stderr.write('err\\n')\n"
    code += "pprint.pprint({'k': 1})"
    async with ThreadRuntime() as rt:
        result = await run(rt, code)
    assert (result.stdout, result.return_code) == ("out\n{'k': 1}\n", 0)
    assert result.stderr == "err\n"
    host = capsys.readouterr()
    assert "out" not in host.out and "err" not in host.err


# -- traceback: the snippet's own frames only --------------------------------------------

TB_CODE = """import traceback
try:
    boom()
except Exception:
    text = traceback.format_exc()
print(text)
"""


async def test_traceback_shows_no_host_frames(runtime: Any, make_runtime: Any) -> None:
    control = await trusted(make_runtime, TB_CODE, in_process=True)  # needs boom()
    assert 'File "/' in control.stdout  # unguarded: host frames, with their paths
    result = await run(runtime, TB_CODE)
    assert result.return_code == 0, result.error
    assert 'File "/' not in result.stdout and THIS_FILE not in result.stdout
    assert 'File "<snippet>", line 3, in <module>' in result.stdout
    assert result.stdout.rstrip().endswith("host failure")


@pytest.mark.parametrize("name", ["walk_tb", "walk_stack", "clear_frames", "TracebackException"])
async def test_traceback_hands_out_no_frame_objects(
    runtime: Any, make_runtime: Any, name: str
) -> None:
    code = f"import traceback\nx = traceback.{name}\nprint('reached')"
    assert (await trusted(make_runtime, code)).stdout == "reached\n"
    refused(await run(runtime, code), "AttributeError", f"traceback.{name} is not available", 2)


async def test_extract_stack_holds_snippet_frames_only(runtime: Any) -> None:
    code = "import traceback\ndef f():\n    return traceback.extract_stack()\n"
    code += "print([(s.filename, s.lineno, s.name) for s in f()])"
    result = await run(runtime, code)
    assert result.stdout == "[('<snippet>', 4, '<module>'), ('<snippet>', 3, 'f')]\n"


# -- io / contextlib: memory only, no process-wide redirect -------------------------------


@pytest.mark.parametrize("name", ["open", "FileIO", "open_code", "TextIOWrapper"])
async def test_io_view_has_no_files(runtime: Any, make_runtime: Any, name: str) -> None:
    code = f"import io\nx = io.{name}\nprint('reached')"
    assert (await trusted(make_runtime, code)).stdout == "reached\n"
    refused(await run(runtime, code), "AttributeError", "files and file descriptors are not", 2)


async def test_redirect_stdout_never_touches_the_hosts_sys_stdout() -> None:
    code = "import contextlib, io\nbuf = io.StringIO()\n"
    code += "with contextlib.redirect_stdout(buf):\n    same = stdout_is_host()\n    print('in')\n"
    code += "print(same, repr(buf.getvalue()))"
    _ORIGINAL[0] = sys.stdout
    async with ThreadRuntime(SandboxPolicy.trusted()) as rt:
        control = await run(rt, code)
    assert "False" in control.stdout  # the real redirect swaps the process's stream
    async with ThreadRuntime() as rt:
        result = await run(rt, code)
    assert result.stdout == "True 'in\\n'\n", result.error


# -- copy: deepcopy of tools and views; reduced state only onto the snippet's objects -----


async def test_deepcopy_of_tools_and_views(runtime: Any) -> None:
    code = "import copy, sys, json\nprint(copy.deepcopy(boom) is boom)\n"
    code += "try:\n    copy.deepcopy(json)\nexcept TypeError as e:\n    print('module', e)\n"
    code += "try:\n    copy.deepcopy(sys.stdout)\nexcept TypeError as e:\n    print('stream', e)"
    result = await run(runtime, code)
    assert result.stdout == (
        "True\nmodule cannot pickle module 'json'\nstream cannot pickle or copy sys.stdout\n"
    ), result.error


def test_copy_reconstruct_refuses_state_on_objects_the_snippet_does_not_own() -> None:
    class Own:
        pass

    register_class(Own)  # as a snippet class statement would
    host = types.ModuleType("host_object")  # any object the snippet does not own
    # positive control: the stdlib's _reconstruct sets a __reduce__'s state on any object
    copy._reconstruct(Own(), None, lambda: host, (), {"planted": 1})  # type: ignore[attr-defined]
    assert host.planted == 1  # type: ignore[attr-defined]
    attrs, _ = _copy_module(copy, ModuleContext(limits=None, sleep=None))  # type: ignore[arg-type]
    reconstruct = attrs["copy"].__globals__["_reconstruct"]
    with pytest.raises(PolicyViolation, match="the snippet does not own"):
        reconstruct(Own(), None, lambda: host, (), {"planted": 2})
    assert host.planted == 1  # type: ignore[attr-defined]


# -- logging / warnings / calendar: the host's state is unchanged (thread runtime) ---------

LOGGING_CODE = """import logging
logging.basicConfig(level=logging.DEBUG, force=True)
logging.getLogger("asyncio").addHandler(logging.StreamHandler())
logging.getLogger().setLevel(1)
logging.getLogger("asyncio").setLevel(1)
logging.disable(logging.ERROR)
print(sorted(logging.Logger.manager.loggerDict))
"""


@contextlib.contextmanager
def _restored_logging() -> Iterator[None]:
    root, aio = logging.getLogger(), logging.getLogger("asyncio")
    saved = (root.handlers[:], root.level, aio.handlers[:], aio.level, root.manager.disable)
    try:
        yield
    finally:
        root.handlers[:], aio.handlers[:] = saved[0], saved[2]
        root.setLevel(saved[1])
        aio.setLevel(saved[3])
        logging.disable(saved[4])


async def test_logging_never_changes_the_hosts_loggers() -> None:
    root, aio = logging.getLogger(), logging.getLogger("asyncio")
    before = (root.handlers[:], root.level, aio.handlers[:], aio.level, root.manager.disable)
    with _restored_logging():
        async with ThreadRuntime(SandboxPolicy.trusted()) as rt:
            control = await run(rt, LOGGING_CODE)
        assert "asyncio" in control.stdout and root.manager.disable == logging.ERROR
    assert (root.handlers, root.level, aio.handlers, aio.level) == before[:4]
    async with ThreadRuntime() as rt:
        result = await run(rt, LOGGING_CODE + "logging.critical('to the snippet stderr')")
    assert result.stdout == "['asyncio']\n", result.error  # its own hierarchy only
    assert "to the snippet stderr" in result.stderr
    after = (root.handlers, root.level, aio.handlers, aio.level, root.manager.disable)
    assert after == before


async def test_warnings_filters_are_per_execution() -> None:
    code = "import warnings\nwarnings.simplefilter('error')\nwarnings.warn('w')"
    with warnings.catch_warnings():
        before = list(warnings.filters)
        async with ThreadRuntime(SandboxPolicy.trusted()) as rt:
            control = await run(rt, code)
        assert warnings.filters != before and control.error_type == "UserWarning"
    before = list(warnings.filters)
    async with ThreadRuntime() as rt:
        result = await run(rt, code)
        refused(result, "UserWarning", "UserWarning: w", 3)
        again = await run(rt, "import warnings\nwarnings.warn('shown')")
    assert warnings.filters == before
    assert again.stderr == "<snippet>:2: UserWarning: shown\n"


async def test_calendar_first_weekday_is_per_execution() -> None:
    code = "import calendar\ncalendar.setfirstweekday(6)\nprint(calendar.firstweekday())"
    host = calendar.firstweekday()
    try:
        async with ThreadRuntime(SandboxPolicy.trusted()) as rt:
            assert (await run(rt, code)).stdout == "6\n"
        assert calendar.firstweekday() == 6  # the real module's shared calendar
    finally:
        calendar.setfirstweekday(host)
    async with ThreadRuntime() as rt:
        assert (await run(rt, code)).stdout == "6\n"
        shared = await run(rt, "import calendar\ncalendar.c.setfirstweekday(5)")
        assert shared.return_code == 0, shared.error  # the view's c is the execution's
    assert calendar.firstweekday() == host


# -- operator getters, zoneinfo.from_file -------------------------------------------------


@pytest.mark.parametrize(
    "attack",
    [
        "operator.attrgetter('__class__.__subclasses__')(())",
        "operator.attrgetter('real', '__class__')(1)",
        "operator.methodcaller('__subclasses__')(object)",
    ],
)
async def test_operator_getters_go_through_the_attribute_guard(
    runtime: Any, make_runtime: Any, attack: str
) -> None:
    code = f"import operator\nx = {attack}\nprint('reached')"
    assert (await trusted(make_runtime, code)).stdout == "reached\n"
    refused(await run(runtime, code), "PolicyViolation", "is not allowed", 2)


async def test_zoneinfo_from_file_is_refused(runtime: Any, make_runtime: Any) -> None:
    code = "import io, zoneinfo, base64\n"
    code += "z = zoneinfo.ZoneInfo.from_file(io.BytesIO(base64.b64decode(tz)))\nprint(z)"
    with open(zoneinfo_path(), "rb") as f:
        data = base64.b64encode(f.read()).decode()
    control = await trusted(make_runtime, code, extra_globals={"tz": data})
    assert control.return_code == 0, control.error
    refused(await run(runtime, code, extra_globals={"tz": data}), "PolicyViolation",
            FROM_FILE_REFUSED, 2)  # fmt: skip


def zoneinfo_path() -> str:
    for root in zoneinfo.TZPATH:
        candidate = f"{root}/UTC"
        with contextlib.suppress(OSError), open(candidate, "rb"):
            return candidate
    pytest.skip("no tz database on this machine")


# -- sizes built in one C call ------------------------------------------------------------

SMALL = SandboxPolicy().replace(max_repeat_bytes=1 << 20)


@pytest.mark.parametrize(
    ("attack", "plain"),
    [
        ("zlib.decompress(bomb)", zlib.decompress),
        ("gzip.decompress(gbomb)", lambda b: gzip.decompress(gzip.compress(zlib.decompress(b)))),
        ("struct.pack('3000000s', b'')", lambda b: struct.pack("3000000s", b"")),
    ],
)
async def test_one_call_sizes_are_checked(make_runtime: Any, attack: str, plain: Any) -> None:
    bomb = zlib.compress(bytes(2 << 20))
    assert len(plain(bomb)) >= 2 << 20  # plain Python builds it in one call
    code = "import zlib, gzip, struct, base64\n"
    code += "bomb, gbomb = base64.b64decode(b1), base64.b64decode(b2)\n"
    code += f"x = {attack}\nprint(len(x))"
    rt = make_runtime(SMALL)
    b2 = gzip.compress(bytes(2 << 20))
    extra = {"b1": base64.b64encode(bomb).decode(), "b2": base64.b64encode(b2).decode()}
    refused(await run(rt, code, extra_globals=extra), "ArithmeticLimitExceeded", "exceeded", 3)


async def test_frame_summaries_never_read_host_files(runtime: Any, tmp_path: Any) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("HOST_SECRET = 'do-not-leak'\n")
    code = "import traceback\nfs = traceback.FrameSummary(path, 1, 'f')\n"
    code += "print(fs.line, traceback.format_list([(path, 1, 'f', None)]))\n"
    code += "print(type(traceback.extract_stack()[0])(path, 1, 'g').line)"
    extra = {"path": str(secret)}
    # positive control (plain Python; a trusted worker could not read tmp_path anyway):
    assert "do-not-leak" in traceback.FrameSummary(str(secret), 1, "f").line
    result = await run(runtime, code, extra_globals=extra)
    assert result.return_code == 0, result.error
    assert "do-not-leak" not in result.stdout
    assert result.stdout.startswith("None [")


async def test_decimal_getcontext_only_where_the_process_is_the_runs_own(
    runtime_name: str, runtime: Any, make_runtime: Any
) -> None:
    """ThreadRuntime: the thread's context would be shared with later executions on the
    same pool thread, so getcontext() is refused; a SubprocessRuntime worker is the run's."""
    code = "import decimal\ndecimal.getcontext().prec = 5\nprint(decimal.Decimal(1) / 7)"
    result = await run(runtime, code)
    if runtime_name == "subprocess":
        assert (result.return_code, result.stdout) == (0, "0.14286\n"), result.error
        return
    async with ThreadRuntime(SandboxPolicy.trusted()) as rt:  # positive control
        with decimal.localcontext():
            control = await run(rt, code)
    assert control.stdout == "0.14286\n", control.error
    refused(result, "AttributeError", "shared with other executions", 2)

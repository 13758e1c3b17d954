"""The fast paths of one tool call's round trip give what the general paths give.

The worker checks a call's arguments in one pass (``_plain_text_size``) instead of
building lists (``_plain`` / ``_plain_keywords``); the host decodes arguments only past
the first value that is not plain JSON. These tests hold each fast path to the general
one it replaces, over the edge values of each type.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import socket
from typing import Any

import pytest

from ptcbox._result import ToolCallRecord
from ptcbox.errors import WireProtocolError
from ptcbox.runtimes._shared._codec import encode
from ptcbox.runtimes._wire import KIND_JSON, KIND_STDOUT, FrameDecoder
from ptcbox.runtimes.subprocess._calls import decode_arguments
from ptcbox.runtimes.subprocess._calltrace import new_record
from ptcbox.runtimes.subprocess.worker._io import (
    WorkerChannel,
    _plain,
    _plain_keywords,
    _plain_text_size,
)


class _Text(str):
    pass


class _Int(int):
    pass


EDGE_VALUES = [
    0,
    -(2**62) + 1,
    -(2**62),  # just outside the worker's plain range
    2**62 - 1,
    2**62,
    2**64,
    True,
    False,
    None,
    1.5,
    math.inf,
    math.nan,
    "",
    "ascii text",
    "é",
    "\ud800",  # a lone surrogate
    _Text("subclass"),
    _Int(3),
    b"bytes",
    (1, 2),
    [1],
]


def _general(args: tuple[object, ...], kwargs: dict[str, object]) -> int | None:
    """What the worker decided before the one-pass check."""
    plain_args = _plain(args)
    if plain_args is None or not _plain_keywords(kwargs):
        return None
    return sum(len(value) for value in (*plain_args, *kwargs.values()) if type(value) is str)


@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_one_pass_check_agrees_with_the_general_one_for_each_value(value: object) -> None:
    for args, kwargs in [((value,), {}), ((), {"x": value}), ((1, value), {"a": "bc"})]:
        assert _plain_text_size(args, kwargs) == _general(args, kwargs), (args, kwargs)


def test_one_pass_check_agrees_on_pairs_and_non_ascii_keywords() -> None:
    for first, second in itertools.product(EDGE_VALUES, repeat=2):
        args, kwargs = (first,), {"k": second}
        assert _plain_text_size(args, kwargs) == _general(args, kwargs), (first, second)
    assert _plain_text_size((), {"ké": 1}) is None
    assert _general((), {"ké": 1}) is None
    assert _plain_text_size(("ab",), {"c": "def", "d": 4}) == 5  # the text is the size


def test_host_decodes_tagged_values_after_plain_ones() -> None:
    """Only values that are not plain JSON are decoded, wherever they stand."""
    tagged = encode((1, 2))
    args, kwargs = decode_arguments([1, "a", tagged], {"x": 1, "y": tagged})
    assert args == [1, "a", (1, 2)]
    assert kwargs == {"x": 1, "y": (1, 2)}
    plain_args, plain_kwargs = [1, "a", None], {"x": 2.5}
    assert decode_arguments(plain_args, plain_kwargs) == (plain_args, plain_kwargs)
    with pytest.raises(WireProtocolError, match="malformed tool arguments"):
        decode_arguments([1], {"x": 1, "y": {"$t": "tuple", "v": "not a list"}})


def test_a_call_frame_goes_after_the_output_written_before_it() -> None:
    ours, host = socket.socketpair()
    with ours, host:
        channel = WorkerChannel(ours)
        channel.timer_armed = True  # as if a flush were due: no SIGALRM in this process
        channel.stdout.write("before the call\n")
        channel.send_frame(b"\x00\x00\x00\x03J{}")  # any frame: its order is what counts
        channel.send_frame(b"\x00\x00\x00\x03J{}")  # nothing pending: the frame alone
        host.settimeout(10)
        data = b""
        while len(data) < 5 + len("before the call\n") + 14:
            data += host.recv(4096)
        frames = list(FrameDecoder().feed(data))
        assert frames == [
            (KIND_STDOUT, b"before the call\n"),
            (KIND_JSON, b"{}"),
            (KIND_JSON, b"{}"),
        ]


def _lookup(key: str) -> str:
    """Look a key up."""
    if key == "missing":
        raise KeyError(key)
    return key.upper()


@pytest.mark.anyio
@pytest.mark.parametrize("reuse", [1, 5], ids=["fresh", "reuse"])
async def test_the_snippet_sees_the_worker_stub_as_a_plain_function(reuse: int) -> None:
    """The worker adds its tool stubs to the globals unwrapped (``plain_tools``): the
    snippet still sees a plain function with the tool's name and docstring and no
    public attribute, a failing tool's traceback holds no worker frame, and the
    trace records each call."""
    from ptcbox import DirectProjection, SubprocessRuntime

    tools = {"lookup": DirectProjection(name="lookup", fn=_lookup)}
    code = (
        "seen = (type(lookup).__name__, lookup.__name__, lookup.__doc__,\n"
        "        [a for a in dir(lookup) if not a.startswith('_')], lookup(key='a'))\n"
        "try:\n    lookup(key='missing')\nexcept KeyError as exc:\n    seen += (repr(exc),)\n"
        "seen"
    )
    async with SubprocessRuntime(max_executions_per_worker=reuse) as runtime:
        for _ in range(2):  # reuse: the second run is on the same worker
            result = await runtime.execute(code, tools)
            assert result.ok, result.error
            assert result.value == [  # a tuple comes back as a list (JSON)
                "function",
                "lookup",
                "Look a key up.",
                [],
                "A",
                "KeyError('missing')",
            ]
            assert [(c.name, c.arguments, c.ok) for c in result.tool_calls] == [
                ("lookup", {"key": "a"}, True),
                ("lookup", {"key": "missing"}, False),
            ]
        failed = await runtime.execute("lookup(key='missing')", tools)
        assert failed.error_type == "KeyError"
        assert "_io.py" not in (failed.error or "") and "<snippet>" in (failed.error or "")


@pytest.mark.parametrize(
    "values",
    [
        ("ping", {"i": 1}, True, None, 0.25, None),
        ("ping", {}, False, "KeyError: 'x'", 0.0, {"i": 2}),
        ("slow", {"a": [1, "b"]}, None, "still running", 1.5, None),
    ],
)
def test_a_record_built_through_its_slots_equals_the_dataclass_one(
    values: tuple[Any, ...],
) -> None:
    """The host builds each call's ToolCallRecord with :func:`new_record`: the same
    record as the dataclass's ``__init__`` builds, field for field, still frozen."""
    record = new_record(*values)
    assert record == ToolCallRecord(*values)
    assert type(record) is ToolCallRecord
    assert [getattr(record, f.name) for f in dataclasses.fields(record)] == list(values)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.ok = False  # type: ignore[misc]

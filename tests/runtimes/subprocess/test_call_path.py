"""The fast paths of one tool call's round trip give what the general paths give.

The worker checks a call's arguments in one pass (``_plain_text_size``) instead of
building lists (``_plain`` / ``_plain_keywords``); the host decodes arguments only past
the first value that is not plain JSON. These tests hold each fast path to the general
one it replaces, over the edge values of each type.
"""

from __future__ import annotations

import itertools
import math
import socket

import pytest

from ptcbox.errors import WireProtocolError
from ptcbox.runtimes._shared._codec import encode
from ptcbox.runtimes._wire import KIND_JSON, KIND_STDOUT, FrameDecoder
from ptcbox.runtimes.subprocess._calls import decode_arguments
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

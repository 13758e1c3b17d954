"""The SubprocessRuntime wire protocol: framing, size caps, malformed input."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from typing import Any

import pytest

from ptcbox.errors import WireProtocolError
from ptcbox.runtimes._wire import (
    KIND_JSON,
    KIND_JSON_BIGINT,
    KIND_STDERR,
    KIND_STDOUT,
    MAX_FRAME_BYTES,
    FrameDecoder,
    SpinningReceiver,
    encode_message,
    encode_output,
    encode_plain_call,
    field,
    parse_message,
    reply_frame,
)


def _decode_all(data: bytes) -> list[tuple[int, bytes]]:
    return list(FrameDecoder().feed(data))


def test_message_round_trip() -> None:
    message = {"t": "call", "id": 7, "name": "search", "args": [1, "x"], "kwargs": {"q": None}}
    [(kind, payload)] = _decode_all(encode_message(message))
    assert kind == KIND_JSON
    assert parse_message(kind, payload) == message


def test_big_integers_cross_exactly() -> None:
    message = {"t": "result", "id": 1, "value": [2**100, -(3**90)]}
    [(kind, payload)] = _decode_all(encode_message(message))
    assert kind == KIND_JSON_BIGINT
    assert parse_message(kind, payload)["value"] == [2**100, -(3**90)]


def test_lone_surrogates_in_host_messages_cross_unchanged() -> None:
    message = {"t": "run", "code": "x = '\ud800'"}
    [(kind, payload)] = _decode_all(encode_message(message))
    assert kind == KIND_JSON_BIGINT
    assert parse_message(kind, payload) == message


def test_output_frames_and_split_reads() -> None:
    data = encode_output(KIND_STDOUT, "héllo\n".encode()) + encode_output(KIND_STDERR, b"warn")
    data += encode_message({"t": "done", "value": None})
    decoder = FrameDecoder()
    frames = []
    for i in range(len(data)):  # one byte at a time: frames only when complete
        frames.extend(decoder.feed(data[i : i + 1]))
    assert [kind for kind, _ in frames] == [KIND_STDOUT, KIND_STDERR, KIND_JSON]
    assert frames[0][1].decode() == "héllo\n"
    assert decoder.pending_bytes == 0


_CALL = encode_plain_call(1, "ping", (), {"i": 1})


@pytest.mark.parametrize(
    "data",
    [
        _CALL[:-1],  # a frame cut short
        _CALL + _CALL[:3],  # a frame and the start of the next
        _CALL + _CALL,  # two frames
        b"\x00\x00\x00\x00J",  # empty frame
        b"\x00\x00\x00\x03Z{}",  # unknown kind
        struct.pack(">IB", MAX_FRAME_BYTES + 1, KIND_JSON) + b"x" * (MAX_FRAME_BYTES),
        b"\x00\x00",
    ],
    ids=["cut", "and-a-head", "two", "empty", "kind", "oversized", "short"],
)
def test_whole_is_only_for_exactly_one_valid_frame(data: bytes) -> None:
    """Anything but one whole, valid frame goes to feed (which frames, or refuses, it)."""
    decoder = FrameDecoder()
    assert decoder.whole(data) is None
    assert decoder.pending_bytes == 0  # whole() never buffers


def test_whole_frame_equals_what_feed_yields_and_never_skips_a_buffered_head() -> None:
    for frame in (_CALL, encode_output(KIND_STDOUT, b"out"), reply_frame(3, [1, "x"])):
        assert [FrameDecoder().whole(frame)] == list(FrameDecoder().feed(frame))
    decoder = FrameDecoder()
    assert list(decoder.feed(_CALL[:7])) == []
    assert decoder.whole(_CALL) is None  # the buffered head comes first
    assert list(decoder.feed(_CALL[7:])) == [(KIND_JSON, _CALL[5:])]
    assert decoder.whole(_CALL) == (KIND_JSON, _CALL[5:])


def test_oversized_frame_is_refused_before_it_is_buffered() -> None:
    decoder = FrameDecoder()
    header = struct.pack(">IB", MAX_FRAME_BYTES + 1, KIND_JSON)
    with pytest.raises(WireProtocolError, match="exceeds"):
        list(decoder.feed(header))


def test_encoding_an_oversized_message_fails() -> None:
    with pytest.raises(WireProtocolError, match="frame limit"):
        encode_message({"t": "done", "value": "x" * MAX_FRAME_BYTES})


def test_tool_result_over_the_cap_is_an_error() -> None:
    with pytest.raises(WireProtocolError):
        reply_frame(1, "x" * MAX_FRAME_BYTES)


def test_reply_frame_converts_non_json_results_deterministically() -> None:
    frame = reply_frame(3, {"s": {3, 1, 2}, "t": (1, 2), "o": object()})
    [(kind, payload)] = _decode_all(frame)
    value = parse_message(kind, payload)["value"]
    assert value["t"] == {"$t": "tuple", "v": [1, 2]}  # tagged: the type survives
    assert value["s"]["$t"] == "set" and sorted(value["s"]["v"]) == [1, 2, 3]
    assert value["o"] == "<object object>"


@pytest.mark.parametrize(
    "data",
    [
        struct.pack(">IB", 1, 0x5A),  # unknown kind
        struct.pack(">I", 0) + b"J",  # empty frame
    ],
)
def test_malformed_frames_raise(data: bytes) -> None:
    with pytest.raises(WireProtocolError):
        _decode_all(data)


@pytest.mark.parametrize(
    "payload",
    [b"not json", b"[1, 2]", b'{"x": 1}', b'{"t": 5}', b"\xff\xfe", b'{"t": "a", "v": NaN}'],
)
def test_malformed_messages_raise(payload: bytes) -> None:
    for kind in (KIND_JSON, KIND_JSON_BIGINT):
        with pytest.raises(WireProtocolError):
            parse_message(kind, payload)


def test_output_frame_is_not_a_message() -> None:
    with pytest.raises(WireProtocolError, match="expected a message"):
        parse_message(KIND_STDOUT, b'{"t": "x"}')


def test_deeply_nested_json_is_a_protocol_error() -> None:
    payload = b'{"t": "x", "v": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    for kind in (KIND_JSON, KIND_JSON_BIGINT):
        with pytest.raises(WireProtocolError):
            parse_message(kind, payload)


def test_field_checks_types() -> None:
    message = {"t": "call", "id": True, "name": "x"}
    assert field(message, "name", str) == "x"
    with pytest.raises(WireProtocolError, match="has type bool"):
        field(message, "id", int)
    with pytest.raises(WireProtocolError, match="lacks field"):
        field(message, "args", list)


@pytest.mark.parametrize("spin_seconds", [0.0, 0.0002, 0.05])
def test_spinning_receiver_returns_what_is_there(spin_seconds: float) -> None:
    ours, peer = socket.socketpair()
    with ours, peer:
        receiver = SpinningReceiver(ours, 10, spin_seconds)
        peer.sendall(b"abc")
        assert receiver.recv() == b"abc"
        peer.close()
        assert receiver.recv() == b""  # the end of the stream


@pytest.mark.parametrize("spin_seconds", [0.0, 0.0002])
def test_spinning_receiver_blocks_after_polling(spin_seconds: float) -> None:
    """Past the polling window it blocks like recv: data sent much later still arrives,
    and the socket stays in blocking mode."""
    ours, peer = socket.socketpair()
    with ours, peer:
        sender = threading.Timer(0.2, peer.sendall, args=(b"late",))
        sender.start()
        started = time.monotonic()
        assert SpinningReceiver(ours, 10, spin_seconds).recv() == b"late"
        assert time.monotonic() - started >= 0.15
        assert ours.getblocking()
        sender.join()


def test_spinning_receiver_polls_only_for_its_window() -> None:
    """A long wait costs little CPU: the thread polls for the window, then sleeps."""
    ours, peer = socket.socketpair()
    with ours, peer:
        sender = threading.Timer(0.5, peer.sendall, args=(b"x",))
        sender.start()
        cpu = time.thread_time()
        assert SpinningReceiver(ours, 10, 0.0002).recv() == b"x"
        assert time.thread_time() - cpu < 0.25  # polling the whole 0.5 s would use ~0.5 s
        sender.join()


def test_spinning_receiver_backs_off_after_empty_polls() -> None:
    """Each wait that outlasted the window doubles how many later waits skip polling
    (1, 2, 4, ... up to 64); data found while polling resets it."""
    ours, peer = socket.socketpair()
    with ours, peer:
        receiver = SpinningReceiver(ours, 10, 0.0002)
        polled = []
        for _ in range(8):  # every wait outlasts the window
            timer = threading.Timer(0.01, peer.sendall, args=(b"x",))
            timer.start()
            skipping = receiver._skip > 0
            assert receiver.recv() == b"x"
            polled.append(not skipping)
            timer.join()
        assert polled == [True, False, True, False, False, True, False, False]
        assert receiver._backoff == 4
        receiver._skip = 0
        peer.sendall(b"y")  # found while polling
        assert receiver.recv() == b"y"
        assert (receiver._skip, receiver._backoff) == (0, 0)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ([], {"i": 5}),
        ([1, -(2**62) + 1, 2.5, 1e300, -0.0, True, False, None, 'a"b\\\n\x00'], {"k": "v"}),
        ([], {}),
    ],
)
def test_plain_call_frames_equal_the_general_encoding(
    args: list[Any], kwargs: dict[str, Any]
) -> None:
    fast = encode_plain_call(7, "lookup_café", args, kwargs)
    general = encode_message(
        {"t": "call", "id": 7, "name": "lookup_café", "args": args, "kwargs": kwargs},
        stdlib=True,
        orjson_safe=True,
    )
    assert fast[4] == general[4] == KIND_JSON
    [(kind, payload)] = _decode_all(fast)
    assert parse_message(kind, payload) == parse_message(kind, payload, stdlib=True)
    assert parse_message(kind, payload) == json.loads(general[5:])


@pytest.mark.parametrize("text", [b' {"t":"x"}', b'{"t":"x"} ', b'{"t":"x"}{}', b""])
def test_the_stdlib_decoder_takes_exactly_one_object(text: bytes) -> None:
    with pytest.raises(WireProtocolError, match="malformed message"):
        parse_message(KIND_JSON_BIGINT, text)


@pytest.mark.parametrize(
    "message",
    [
        {"t": "done", "value": None, "error": None, "error_type": None, "truncated": False},
        {"t": "done", "value": -(1 << 63), "error": 'E\n"q"\x01\\', "reuse": True, "n": "ab"},
        {"t": "done", "value": 1.5e300, "error": None, "truncated": True},
        {"t": "done", "value": -0.0, "error": "x"},
        {"t": "done", "value": 1 << 63, "error": None},  # past 64 bits: the encoder's
        {"t": "done", "value": "é", "error": None},  # not ASCII: the encoder's
        {"t": "done", "value": [1, {"a": 2}], "error": None},  # structured: the encoder's
        {"t": "done", "value": float("inf"), "error": None},
    ],
)
def test_a_flat_message_is_formatted_exactly_as_the_standard_encoder_does(
    message: dict[str, Any],
) -> None:
    """The worker formats a ``done`` of plain scalars directly (no encoder set-up); the
    bytes must be the ``json`` module's, and every other message goes to the encoder."""
    from ptcbox.runtimes._wire import _flat_text

    flat = _flat_text(message)
    try:
        expected = json.dumps(message, separators=(",", ":"), allow_nan=False)
    except ValueError:
        expected = None
    scalars = all(type(v) in (str, int, float, bool, type(None)) for v in message.values()) and all(
        type(v) is not str or v.isascii() for v in message.values()
    )
    value = message["value"]
    in_range = type(value) is not int or -(1 << 63) <= value < 1 << 63
    if scalars and expected is not None and in_range:
        assert flat == expected
    else:
        assert flat is None

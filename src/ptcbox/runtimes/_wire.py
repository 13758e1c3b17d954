"""The wire protocol between the host and a SubprocessRuntime worker (both sides).

A stream of frames over a Unix socket. Each frame is a 4-byte big-endian length ``N``
(counting what follows), a 1-byte kind and ``N - 1`` bytes of payload:

- kind ``J``: one message, a JSON object whose ``"t"`` field names its type (``run``,
  ``call``, ``result``, ``error``, ``done``), which the host decodes with orjson: every
  integer in it fits in 64 bits and its text has no lone surrogates. Host messages are
  encoded with orjson; the worker encodes with the standard ``json`` module and uses
  this kind for tool calls whose arguments are plain scalars (orjson does not check
  its allocations and crashes the process with SIGSEGV when one fails under
  ``RLIMIT_AS``, so the worker never runs it, and decodes with ``json`` too);
- kind ``j``: the same, decoded with the standard ``json`` module: every other message
  of the worker, and the rare host message orjson cannot encode (an integer beyond 64
  bits). (A worker that lies about the kind only changes its own values: orjson
  reads a huge integer as a float, and refuses a lone surrogate.)
- kind ``O`` / ``E``: a chunk of the snippet's stdout / stderr as UTF-8 text (lone
  surrogates already replaced by U+FFFD; the host decodes with ``errors="replace"``).

Only JSON-compatible values cross the boundary (tool values as the tagged JSON of
:mod:`ptcbox.runtimes._shared._codec`) and the host never unpickles anything a
worker sends: a worker is assumed hostile, so every frame is size-capped
(:data:`MAX_FRAME_BYTES`) and every message is checked field by field before use. A
frame that is too large, of an unknown kind, not valid JSON or of the wrong shape raises
:class:`~ptcbox.errors.WireProtocolError`, which ends that execution.

Length-prefixed framing follows the usual practice for stream sockets (e.g. the
``multiprocessing.connection`` framing), with JSON instead of pickle as in the
language-server and Jupyter messaging protocols.
"""

from __future__ import annotations

import json
import math
import os
import socket
import struct
import time
from collections.abc import Iterator, Sequence
from typing import Any, Final

import orjson

from ptcbox.errors import WireProtocolError
from ptcbox.runtimes._shared._codec import encode
from ptcbox.runtimes._shared._value import encode_json

__all__ = [
    "KIND_JSON",
    "KIND_JSON_BIGINT",
    "KIND_STDERR",
    "KIND_STDOUT",
    "MAX_FRAME_BYTES",
    "FrameDecoder",
    "SpinningReceiver",
    "encode_message",
    "encode_output",
    "encode_plain_call",
    "field",
    "parse_message",
    "plain_scalar",
    "reply_frame",
]

MAX_FRAME_BYTES: Final = 16 << 20
"""Largest frame either side accepts, in bytes (16 MiB)."""

KIND_JSON: Final = 0x4A  # "J"
KIND_JSON_BIGINT: Final = 0x6A  # "j"
KIND_STDOUT: Final = 0x4F  # "O"
KIND_STDERR: Final = 0x45  # "E"
_KINDS: Final = frozenset({KIND_JSON, KIND_JSON_BIGINT, KIND_STDOUT, KIND_STDERR})

SPIN_SECONDS: Final = 0.0002 if len(os.sched_getaffinity(0)) > 1 else 0.0
"""How long a :class:`SpinningReceiver` polls before it blocks, in seconds (0 on one CPU)."""

_HEADER: Final = struct.Struct(">IB")
_MESSAGE_KINDS: Final = frozenset({KIND_JSON, KIND_JSON_BIGINT})


def encode_message(
    message: dict[str, Any], *, stdlib: bool = False, orjson_safe: bool = False
) -> bytes:
    """Encode one JSON message as a frame.

    Args:
        message: A dict with a ``"t"`` key; values must be JSON-compatible (``str`` keys,
            no lone surrogates, ints within 64 bits unless ``stdlib``).
        stdlib: Encode with the standard ``json`` module (kind ``j``), as the worker
            does: orjson does not check its allocations, so under ``RLIMIT_AS`` a failed
            one crashes the process (SIGSEGV) where ``json`` raises ``MemoryError``.
        orjson_safe: With ``stdlib``: the caller knows every int fits in 64 bits and no
            text has a lone surrogate, so the frame is kind ``J`` and the host decodes
            it with orjson (about 2.5 µs faster for a tool call).

    Returns:
        The frame bytes.

    Raises:
        WireProtocolError: If the encoded frame is larger than :data:`MAX_FRAME_BYTES`.
        TypeError: If a value is not JSON-compatible.
        ValueError: If a value is not JSON-compatible (NaN, lone surrogates).
        MemoryError: With ``stdlib``, when the process is out of memory (callers bound
            the size of what they send first; see :mod:`ptcbox.runtimes._shared._value`).
    """
    if stdlib:
        kind = KIND_JSON if orjson_safe else KIND_JSON_BIGINT
        flat = _flat_text(message) if orjson_safe else None
        payload = encode_json(message) if flat is None else flat.encode("ascii")
    else:
        kind = KIND_JSON
        try:
            payload = orjson.dumps(message)
        except TypeError as exc:  # an int beyond 64 bits, or a lone surrogate in a str
            if "64-bit" not in str(exc) and "surrogates" not in str(exc):
                raise
            kind = KIND_JSON_BIGINT
            text = json.dumps(message, allow_nan=False, separators=(",", ":"))
            payload = text.encode("ascii")
    size = len(payload) + 1
    if size > MAX_FRAME_BYTES:
        raise WireProtocolError(
            f"message {message.get('t')!r} is {size:,} bytes, over the "
            f"{MAX_FRAME_BYTES:,}-byte frame limit"
        )
    return _HEADER.pack(size, kind) + payload


def encode_plain_call(
    call_id: int, name: str, args: Sequence[Any], kwargs: dict[str, Any]
) -> bytes:
    """Encode a ``call`` message whose arguments are plain scalars, as a kind-``J`` frame.

    What :func:`encode_message` with ``stdlib=True, orjson_safe=True`` produces for
    ``{"t": "call", "id": call_id, "name": name, "args": args, "kwargs": kwargs}``,
    formatted directly (no encoder set-up per message: ~1.3 µs less per tool call).

    Args:
        call_id: The call's id.
        name: The tool's name.
        args: ``str`` (ASCII), ``int`` (within 64 bits), finite ``float``, ``bool`` or
            ``None`` values.
        kwargs: The same, under ASCII keys.

    Returns:
        The frame bytes.

    Raises:
        WireProtocolError: If the frame is larger than :data:`MAX_FRAME_BYTES`.
    """
    args_text = ",".join(map(_json_scalar, args))
    kwargs_text = ",".join(
        f"{_json_text(key)}:{_json_scalar(value)}" for key, value in kwargs.items()
    )
    text = (
        f'{{"t":"call","id":{call_id:d},"name":{_json_text(name)},'
        f'"args":[{args_text}],"kwargs":{{{kwargs_text}}}}}'
    )
    payload = text.encode("ascii")
    size = len(payload) + 1
    if size > MAX_FRAME_BYTES:
        raise WireProtocolError(
            f"message 'call' is {size:,} bytes, over the {MAX_FRAME_BYTES:,}-byte frame limit"
        )
    return _HEADER.pack(size, KIND_JSON) + payload


_json_text = json.encoder.encode_basestring_ascii


def _flat_text(message: dict[str, Any]) -> str | None:
    """The JSON of a message whose values are all ASCII text, ints within 64 bits,
    finite floats, bools or ``None`` (a ``done`` without a structured value), formatted
    directly as :func:`encode_plain_call` does; ``None`` for any other message."""
    parts = []
    for key, value in message.items():
        if (
            type(key) is not str
            or not key.isascii()
            or not plain_scalar(value, -(1 << 63), 1 << 63)
        ):
            return None
        parts.append(f"{_json_text(key)}:{_json_scalar(value)}")
    return "{" + ",".join(parts) + "}"


def plain_scalar(value: Any, low: int, high: int) -> bool:
    """Whether ``value`` is ASCII text, an int with ``low <= value < high``, a finite
    float, a bool or ``None``: a value the fast JSON paths of both sides pass unchanged."""
    kind = type(value)
    if kind is str:
        return bool(value.isascii())
    if kind is int:
        return bool(low <= value < high)
    if kind is float:
        return math.isfinite(value)
    return kind is bool or value is None


def _json_scalar(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return _json_text(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return float.__repr__(value)
    return "null"


def encode_output(kind: int, data: bytes) -> bytes:
    """Encode a chunk of output as a frame.

    Args:
        kind: :data:`KIND_STDOUT` or :data:`KIND_STDERR`.
        data: UTF-8 text, at most ``MAX_FRAME_BYTES - 1`` bytes.

    Returns:
        The frame bytes.
    """
    return _HEADER.pack(len(data) + 1, kind) + data


def reply_frame(call_id: int, value: Any) -> bytes:
    """Encode a tool's return value as the ``result`` frame of call ``call_id``.

    The value is encoded with :func:`ptcbox.runtimes._shared._codec.encode` first, so it
    keeps its type (tuples, sets, bytes, datetimes, ``Decimal`` ... as tagged JSON;
    dataclasses and pydantic models as dicts, other objects ``"<TypeName object>"``).

    Raises:
        WireProtocolError: If the converted value is over :data:`MAX_FRAME_BYTES`.
    """
    return encode_message({"t": "result", "id": call_id, "value": encode(value)})


def parse_message(kind: int, payload: bytes, *, stdlib: bool = False) -> dict[str, Any]:
    """Decode the payload of a message frame.

    Args:
        kind: :data:`KIND_JSON` or :data:`KIND_JSON_BIGINT`.
        payload: The bytes after the kind byte.
        stdlib: Decode with the standard ``json`` module whatever the kind (the worker
            does: see :func:`encode_message`).

    Returns:
        The message, a dict whose ``"t"`` is a ``str``.

    Raises:
        WireProtocolError: If it is not a JSON object with a string ``"t"``.
    """
    if kind not in _MESSAGE_KINDS:
        raise WireProtocolError(f"expected a message frame, got kind {kind:#04x}")
    try:
        if kind == KIND_JSON and not stdlib:
            message = orjson.loads(payload)
        else:  # the scanner alone: no whitespace around the object, as both sides write
            text = payload.decode("utf-8")
            message, end = _SCAN(text, 0)
            if end != len(text):
                raise ValueError(f"extra data at character {end}")
    except StopIteration as exc:
        raise WireProtocolError(f"malformed message: no JSON value at {exc.value}") from None
    except (ValueError, RecursionError) as exc:
        raise WireProtocolError(f"malformed message: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("t"), str):
        raise WireProtocolError("malformed message: not an object with a string 't' field")
    return message


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__


def field(message: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    """Return ``message[name]`` after checking its type.

    Args:
        message: A parsed message.
        name: The field.
        kind: The accepted type(s); ``bool`` is never accepted for ``int``.

    Returns:
        The value.

    Raises:
        WireProtocolError: If the field is missing or of another type.
    """
    try:
        value = message[name]
    except KeyError:
        raise WireProtocolError(f"message {message['t']!r} lacks field {name!r}") from None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise WireProtocolError(
            f"message {message['t']!r}: field {name!r} has type {type(value).__name__}"
        )
    return value


class FrameDecoder:
    """Splits a byte stream into frames, incrementally.

    Feed it whatever the socket returned; it yields ``(kind, payload)`` pairs for every
    complete frame and keeps the rest. It never buffers more than one frame plus one read.

    Args:
        max_frame_bytes: Largest frame accepted, in bytes.
    """

    __slots__ = ("_buffer", "_max")

    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_frame_bytes

    @property
    def pending_bytes(self) -> int:
        """Bytes received that do not yet form a whole frame."""
        return len(self._buffer)

    def whole(self, data: bytes) -> tuple[int, bytes] | None:
        """The frame ``data`` is, when nothing is buffered and it is exactly one whole,
        valid frame (the usual read during a run of tool calls), else ``None``: then
        :meth:`feed` it. Called without a generator: ~1 us less per frame than ``feed``.
        """
        if self._buffer or len(data) < 5:
            return None
        size, kind = _HEADER.unpack_from(data)
        if len(data) == size + 4 and 0 < size <= self._max and kind in _KINDS:
            return kind, data[5:]
        return None

    def feed(self, data: bytes) -> Iterator[tuple[int, bytes]]:
        """Add received bytes and yield every complete frame.

        Args:
            data: Bytes as read from the socket.

        Yields:
            ``(kind, payload)`` for each complete frame, in order.

        Raises:
            WireProtocolError: On a frame longer than the limit, empty, or of an unknown
                kind.
        """
        buffer = self._buffer
        if not buffer and len(data) >= 5:  # the usual case: exactly one whole frame
            size, kind = _HEADER.unpack_from(data)
            if len(data) == size + 4 and 0 < size <= self._max and kind in _KINDS:
                yield kind, data[5:]
                return
        buffer += data
        offset = 0
        end = len(buffer)
        try:
            while end - offset >= 5:
                size, kind = _HEADER.unpack_from(buffer, offset)
                if size > self._max or size == 0:
                    raise WireProtocolError(
                        f"frame of {size:,} bytes exceeds the {self._max:,}-byte limit"
                        if size
                        else "empty frame"
                    )
                if kind not in _KINDS:
                    raise WireProtocolError(f"unknown frame kind {kind:#04x}")
                if end - offset - 4 < size:
                    break
                start = offset + 5
                offset += 4 + size
                yield kind, bytes(buffer[start:offset])
        finally:
            del buffer[:offset]


class SpinningReceiver:
    """``recv`` on a blocking socket that polls for a moment before it blocks.

    During a run of tool calls each side answers the other within tens of
    microseconds, while putting a thread to sleep and waking it again costs about as
    much again (and more on a virtual machine whose idle CPU has halted). So the side
    waiting for a tool call's reply, or for the next call, first polls with
    ``MSG_DONTWAIT`` for up to ``spin_seconds``, yielding the CPU between polls (the
    peer may be waiting to run on this very CPU); then it blocks as usual. A poll that
    came up empty makes the next ones skip polling (1, 2, 4, ... up to 64 waits), so a
    snippet that computes between its calls, or a machine whose CPUs are all busy,
    costs little. This is the spin-then-block waiting of adaptive mutexes (e.g.
    glibc's ``PTHREAD_MUTEX_ADAPTIVE_NP``) and of socket busy polling
    (``SO_BUSY_POLL``); with one CPU it would only delay the peer, so it is off.

    Args:
        sock: A connected socket in blocking mode.
        max_bytes: Most bytes one :meth:`recv` returns.
        spin_seconds: How long to poll before blocking, in seconds (0: never poll).
    """

    __slots__ = ("_backoff", "_max", "_skip", "_sock", "_spin")

    def __init__(
        self, sock: socket.socket, max_bytes: int, spin_seconds: float = SPIN_SECONDS
    ) -> None:
        self._sock = sock
        self._max = max_bytes
        self._spin = spin_seconds
        self._skip = 0
        self._backoff = 0

    def recv(self, *, poll: bool = True, spin_seconds: float | None = None) -> bytes:
        """Return what ``sock.recv(max_bytes)`` returns (``b""`` at the end of the stream).

        Args:
            poll: ``False`` blocks at once, e.g. in the middle of a frame, where a peer
                sending a byte at a time would otherwise keep this side polling.
            spin_seconds: This wait's polling window, if not the receiver's.

        Raises:
            OSError: As ``recv`` does.
        """
        sock = self._sock
        window = self._spin if spin_seconds is None or self._spin <= 0 else spin_seconds
        if poll and window > 0:
            if self._skip:
                self._skip -= 1
            else:
                end = time.perf_counter() + window
                while True:
                    try:
                        data = sock.recv(self._max, socket.MSG_DONTWAIT)
                    except BlockingIOError:
                        if time.perf_counter() > end:
                            break
                        os.sched_yield()  # the peer may be waiting for this very CPU
                    else:
                        self._backoff = 0
                        return data
                self._backoff = min(64, self._backoff * 2 or 1)
                self._skip = self._backoff
        return sock.recv(self._max)

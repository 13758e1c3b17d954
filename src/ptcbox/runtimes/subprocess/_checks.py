"""Checks the host applies to a worker's ``done`` message (the worker is not trusted).

The worker caps the value it returns to ``max_output_bytes`` of JSON and the error text
likewise; a compromised worker could send anything up to the frame limit (16 MiB of
JSON that decodes to hundreds of MB of small objects) and keep it alive in the
:class:`~ptcbox.CodeResult`. So the host refuses, as a ``WireProtocolError``, a
``done`` frame over :func:`done_bytes_limit` before decoding it, and a decoded value
whose JSON is over twice the cap (counted item by item, not by bytes), and, in a
session, a ``done`` without this execute's nonce.
"""

from __future__ import annotations

from typing import Any

from ptcbox.errors import WireProtocolError
from ptcbox.runtimes._shared._value import json_size_over

__all__ = ["check_done", "done_bytes_limit"]

_SLACK_BYTES = 1 << 20


def done_bytes_limit(max_output_bytes: int) -> int:
    """Largest frame other than a tool call the host decodes: value, error and slack."""
    return 4 * max_output_bytes + _SLACK_BYTES


def check_done(message: dict[str, Any], nonce: str | None, max_output_bytes: int) -> None:
    """Check a decoded ``done`` message.

    Args:
        message: The message.
        nonce: The execute's nonce (sessions), else ``None``.
        max_output_bytes: The policy's cap; the value may use twice that (encoding
            overhead of tagged values).

    Raises:
        WireProtocolError: A malformed field, a wrong nonce or a value over the cap.
    """
    error = message.get("error")
    error_type = message.get("error_type")
    if not isinstance(error, str | None) or not isinstance(error_type, str | None):
        raise WireProtocolError("malformed 'done' message: error fields are not text")
    if not isinstance(message.get("truncated"), bool):
        raise WireProtocolError("malformed 'done' message: 'truncated' is not a bool")
    if nonce is not None and message.get("n") != nonce:
        raise WireProtocolError(
            "a 'done' message that does not answer this execution (wrong or missing nonce)"
        )
    value = message.get("value")
    if value is not None and type(value) not in (int, float, bool):
        over = json_size_over(value, 2 * max_output_bytes)
        if over:
            raise WireProtocolError(
                f"the 'done' value is over the output cap: at least {over:,} bytes of JSON > "
                f"{2 * max_output_bytes:,} (max_output_bytes={max_output_bytes:,}, twice)"
            )

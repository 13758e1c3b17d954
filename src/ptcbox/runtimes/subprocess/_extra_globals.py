"""``extra_globals`` for a worker: checked to be JSON-compatible before they are sent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["json_globals"]


def json_globals(extra_globals: Mapping[str, Any] | None) -> dict[str, Any]:
    """``extra_globals`` as the dict the run frame carries.

    Raises:
        TypeError: A key is not a str, or a value is not JSON-compatible.
    """
    if not extra_globals:
        return {}
    out: dict[str, Any] = {}
    for key, value in extra_globals.items():
        if not isinstance(key, str):
            raise TypeError(f"extra_globals keys must be str, got {key!r}")
        try:
            orjson.dumps(
                value, option=orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
            )
        except TypeError as exc:
            if "64-bit" in str(exc):
                out[key] = value
                continue
            raise TypeError(
                f"extra_globals[{key!r}] is not JSON-compatible ({exc}); SubprocessRuntime "
                "sends extra_globals to the worker process as JSON"
            ) from None
        out[key] = value
    return out

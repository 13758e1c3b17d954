"""What the host hands a worker: its configuration, its policy and compiled snippets.

The host builds these (:mod:`ptcbox.runtimes.subprocess._runtime`,
:mod:`ptcbox.runtimes.subprocess._compile`) and the worker decodes them, so both sides
import this module; it needs only the standard library, ``orjson`` and the sandbox.
A :class:`WorkerConfig` goes on the template's command line; the policy and a compiled
snippet go in messages (:mod:`ptcbox.runtimes._wire`). Only the host produces compiled
snippets and only the worker unmarshals them, so nothing the worker sends is ever
unmarshalled.
"""

from __future__ import annotations

import binascii
import dataclasses
import importlib.util
import marshal
from dataclasses import dataclass, field
from typing import Any

import orjson

from ptcbox.sandbox import CompiledSnippet, SandboxPolicy

__all__ = [
    "WorkerConfig",
    "decode_compiled",
    "decode_compiled_cached",
    "encode_compiled",
    "policy_from_wire",
    "policy_to_wire",
]

_MAGIC = importlib.util.MAGIC_NUMBER.hex()


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """Per-runtime settings every worker of a template applies at fork time.

    Attributes:
        env: The worker's whole environment (``HOME`` and ``TMPDIR`` are set to its
            working directory on top).
        max_open_files: ``RLIMIT_NOFILE``.
        max_file_bytes: ``RLIMIT_FSIZE``, bytes.
        network: ``False`` puts each worker in an empty network namespace.
        network_optional: With ``network=False``: where the kernel refuses network
            namespaces, run without one (seccomp and the audit hook still refuse
            network sockets) instead of failing to start.
        policy: The runtime's sandbox policy as JSON-compatible fields (see
            :func:`policy_to_wire`); every snippet of the runtime runs under it.
        max_executions: Executions one worker may serve (1: single-use; more: reuse
            mode, see :mod:`ptcbox.runtimes.subprocess.worker._reuse`).
    """

    env: dict[str, str] = field(default_factory=dict)
    max_open_files: int = 256
    max_file_bytes: int = 64 << 20
    network: bool = True
    policy: dict[str, Any] = field(default_factory=dict)
    network_optional: bool = False
    max_executions: int = 1

    def to_json(self) -> str:
        """Encode for the template's command line."""
        return orjson.dumps(
            {
                "env": self.env,
                "max_open_files": self.max_open_files,
                "max_file_bytes": self.max_file_bytes,
                "network": self.network,
                "network_optional": self.network_optional,
                "policy": self.policy,
                "max_executions": self.max_executions,
            }
        ).decode()

    @classmethod
    def from_json(cls, text: str) -> WorkerConfig:
        """Decode what :meth:`to_json` produced."""
        data = orjson.loads(text)
        return cls(
            env={str(k): str(v) for k, v in data["env"].items()},
            max_open_files=int(data["max_open_files"]),
            max_file_bytes=int(data["max_file_bytes"]),
            network=bool(data["network"]),
            policy=dict(data["policy"]),
            network_optional=bool(data.get("network_optional")),
            max_executions=int(data.get("max_executions", 1)),
        )


def policy_to_wire(policy: SandboxPolicy) -> dict[str, Any]:
    """The policy's fields as JSON-compatible data (frozensets as sorted lists)."""
    out: dict[str, Any] = {}
    for item in dataclasses.fields(policy):
        value = getattr(policy, item.name)
        out[item.name] = sorted(value) if isinstance(value, frozenset) else value
    return out


def policy_from_wire(fields: dict[str, Any]) -> SandboxPolicy:
    """Rebuild the policy the host sent (lists back to frozensets)."""
    values: dict[str, Any] = {
        k: frozenset(v) if isinstance(v, list) else v for k, v in fields.items()
    }
    return SandboxPolicy(**values)


def encode_compiled(compiled: CompiledSnippet) -> list[Any]:
    """``[magic, base64 marshal of the code, is_async, has_value]`` for the ``run`` message."""
    data = binascii.b2a_base64(marshal.dumps(compiled.code), newline=False).decode("ascii")
    return [_MAGIC, data, compiled.is_async, compiled.has_value]


def decode_compiled(fields: Any) -> CompiledSnippet | None:
    """The snippet :func:`encode_compiled` encoded; ``None`` if absent or from another Python.

    Raises:
        ValueError: Malformed fields (the host sent something else).
    """
    if fields is None:
        return None
    magic, data, is_async, has_value = fields
    if magic != _MAGIC:
        return None
    code = marshal.loads(binascii.a2b_base64(data))
    return CompiledSnippet(code=code, is_async=bool(is_async), has_value=bool(has_value))


_DECODED: dict[tuple[Any, ...], CompiledSnippet] = {}
_DECODED_MAX = 64


def decode_compiled_cached(fields: Any) -> CompiledSnippet | None:
    """:func:`decode_compiled`, remembered (the last 64): a reused worker that gets the
    same snippet again skips the base64 and ``marshal`` decoding (~40 µs for
    ``print(1)``; code objects are immutable).

    Raises:
        ValueError: Malformed fields (the host sent something else).
    """
    if type(fields) is not list:
        return decode_compiled(fields)
    try:
        key = tuple(fields)
        hit = _DECODED.get(key)
    except TypeError:  # unhashable: malformed
        return decode_compiled(fields)
    if hit is None:
        hit = decode_compiled(fields)
        if hit is not None:
            if len(_DECODED) >= _DECODED_MAX:
                del _DECODED[next(iter(_DECODED))]
            _DECODED[key] = hit
    return hit

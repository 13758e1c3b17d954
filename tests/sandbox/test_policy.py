"""SandboxPolicy: presets, replace(), validation."""

from __future__ import annotations

import dataclasses

import pytest

from ptcbox.sandbox import DEFAULT_ALLOWED_IMPORTS, SandboxPolicy


def test_default_preset_values() -> None:
    p = SandboxPolicy()
    assert p.restricted is True
    assert p.allowed_imports == DEFAULT_ALLOWED_IMPORTS
    assert p.timeout == 30.0
    assert p.max_output_bytes == 1_000_000
    assert p.max_tool_calls == 1_000
    assert p.max_concurrent_tool_calls == 16
    assert p.max_memory_bytes == 1 << 30
    assert p.max_cpu_seconds is None
    assert p.max_int_bits == 4_000_000
    assert p.max_repeat_bytes == 64 << 20
    assert p.max_code_chars == 200_000


def test_default_allowlist_is_the_documented_safe_subset() -> None:
    assert {
        "json", "math", "re", "datetime", "collections", "itertools", "functools",
        "statistics", "decimal", "fractions", "random", "string", "textwrap", "heapq",
        "bisect", "operator", "typing", "dataclasses", "enum", "uuid", "hashlib",
        "base64", "time", "asyncio",
        # issue 11 class 4: vetted views of more of the stdlib
        "abc", "array", "binascii", "calendar", "cmath", "collections.abc", "contextlib",
        "copy", "csv", "difflib", "fnmatch", "graphlib", "gzip", "html", "io", "ipaddress",
        "logging", "numbers", "pprint", "secrets", "shlex", "struct", "sys", "traceback",
        "types", "unicodedata", "urllib.parse", "warnings", "zlib", "zoneinfo",
    } == DEFAULT_ALLOWED_IMPORTS  # fmt: skip
    assert not DEFAULT_ALLOWED_IMPORTS & {"os", "subprocess", "importlib", "builtins", "pickle"}


def test_strict_is_tighter_than_default() -> None:
    strict, default = SandboxPolicy.strict(), SandboxPolicy()
    assert strict.restricted
    assert strict.allowed_imports < default.allowed_imports
    for name in ("timeout", "max_output_bytes", "max_tool_calls", "max_int_bits"):
        assert getattr(strict, name) < getattr(default, name)
    assert strict.max_memory_bytes is not None
    assert default.max_memory_bytes is not None
    assert strict.max_memory_bytes < default.max_memory_bytes
    assert strict.max_cpu_seconds is not None


def test_trusted_turns_the_sandbox_off() -> None:
    p = SandboxPolicy.trusted()
    assert p.restricted is False
    assert p.timeout == SandboxPolicy().timeout


def test_policy_is_frozen_and_hashable() -> None:
    p = SandboxPolicy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.timeout = 1.0  # type: ignore[misc]
    assert hash(p) == hash(SandboxPolicy())
    assert p == SandboxPolicy()
    assert {p: 1}[SandboxPolicy()] == 1


def test_replace_returns_a_validated_copy() -> None:
    p = SandboxPolicy()
    q = p.replace(timeout=5, max_tool_calls=3)
    assert (q.timeout, q.max_tool_calls) == (5, 3)
    assert p.timeout == 30.0
    with pytest.raises(ValueError, match="timeout"):
        p.replace(timeout=-1)


def test_replace_rejects_unknown_fields_and_lists_the_real_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown SandboxPolicy field\(s\): timeuot.*timeout"):
        SandboxPolicy().replace(timeuot=3)


def test_allowed_imports_accepts_any_collection_and_freezes_it() -> None:
    p = SandboxPolicy(allowed_imports={"json", "collections.abc"})  # type: ignore[arg-type]
    assert p.allowed_imports == frozenset({"json", "collections.abc"})
    assert isinstance(p.allowed_imports, frozenset)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"restricted": 1}, "restricted"),
        ({"allowed_imports": "json"}, "allowed_imports"),
        ({"allowed_imports": frozenset({"os path"})}, "allowed_imports"),
        ({"allowed_imports": frozenset({1})}, "allowed_imports"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("inf")}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"timeout": "3"}, "timeout"),
        ({"timeout": True}, "timeout"),
        ({"max_output_bytes": 0}, "max_output_bytes"),
        ({"max_output_bytes": 1.5}, "max_output_bytes"),
        ({"max_tool_calls": -1}, "max_tool_calls"),
        ({"max_concurrent_tool_calls": 0}, "max_concurrent_tool_calls"),
        ({"max_memory_bytes": 1024}, "max_memory_bytes"),
        ({"max_memory_bytes": -5}, "max_memory_bytes"),
        ({"max_cpu_seconds": 0}, "max_cpu_seconds"),
        ({"max_int_bits": 0}, "max_int_bits"),
        ({"max_repeat_bytes": -1}, "max_repeat_bytes"),
        ({"max_code_chars": 0}, "max_code_chars"),
    ],
)
def test_invalid_values_raise_value_errors_naming_the_field(
    changes: dict[str, object], field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        SandboxPolicy(**changes)  # type: ignore[arg-type]


def test_zero_tool_calls_and_no_memory_limit_are_valid() -> None:
    p = SandboxPolicy(max_tool_calls=0, max_memory_bytes=None, max_cpu_seconds=2.5)
    assert p.max_tool_calls == 0
    assert p.max_memory_bytes is None


@pytest.mark.parametrize(
    ("given", "advice"),
    [
        ("strict", "SandboxPolicy.strict()"),
        ("data", "SandboxPolicy.data()"),
        ("default", "SandboxPolicy()"),
        ({"timeout": 5}, "SandboxPolicy.strict()"),
    ],
)
def test_a_preset_name_or_a_dict_as_policy_is_refused_with_the_call_to_make(
    given: object, advice: str
) -> None:
    """`--policy strict` on the command line makes `policy="strict"` an easy slip.

    It used to fail deep inside with "'str' object has no attribute 'allowed_imports'".
    """
    from ptcbox.runtimes import RayRuntime, SubprocessRuntime, ThreadRuntime
    from ptcbox.sandbox._policy import check_policy_argument

    check_policy_argument(None)
    check_policy_argument(SandboxPolicy.strict())
    with pytest.raises(TypeError) as raised:
        check_policy_argument(given)
    assert str(raised.value).startswith(f"policy= takes a SandboxPolicy, e.g. {advice} ")
    assert f"got {type(given).__name__} {given!r}" in str(raised.value)
    for runtime in (SubprocessRuntime, ThreadRuntime, RayRuntime):  # before any process starts
        with pytest.raises(TypeError, match="policy= takes a SandboxPolicy"):
            runtime(given)  # type: ignore[arg-type]

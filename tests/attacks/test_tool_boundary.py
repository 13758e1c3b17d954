"""Attacks on the typed tool boundary: tagged values and rebuilt tool exceptions.

Each test proves its guard: a positive control shows the route does the forbidden thing
without the guard (a naive decoder, plain ``exec``, a valid tag on the same route), then
the real runtime refuses exactly.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ptcbox import DirectProjection, resolve_tools
from ptcbox.runtimes import SubprocessRuntime
from ptcbox.runtimes._shared._codec import decode
from ptcbox.sandbox import SandboxPolicy

from ._proof import Attack, assert_control, assert_refused, control_output
from .test_redteam2 import FIND_SOCKET

pytestmark = pytest.mark.anyio


def kind_of(value: Any) -> str:
    """The type the tool received."""
    return type(value).__name__


TOOLS = resolve_tools([kind_of])


# -- a compromised worker sends tagged values: the host builds only the codec's types --------


def _forged_call(value: Any) -> str:
    call = {"t": "call", "id": 1, "name": "kind_of", "args": [value], "kwargs": {}}
    return (
        FIND_SOCKET
        + f"os.write(fd, message({call!r}, 0x6A))\n"  # kind j: ints beyond 64 bits stay ints
        + "data = os.read(fd, 65536)\nprint(json.loads(data[5:])['value'])\n"
    )


_VALID = {
    "tuple": {"$t": "tuple", "v": [1]},
    "set": {"$t": "set", "v": [1, 2]},
    "datetime": {"$t": "datetime", "v": "2024-01-01T00:00:00", "zone": "Europe/Berlin"},
}


@pytest.mark.parametrize("tag", sorted(_VALID))
async def test_a_valid_tag_from_the_worker_is_decoded(tag: str) -> None:
    """Positive control of the route: the host decodes what a worker sends on it (the
    same tags as the refused ones below, with valid contents)."""
    rt = SubprocessRuntime(SandboxPolicy.trusted(), min_idle=0)
    try:
        result = await rt.execute(_forged_call(_VALID[tag]), TOOLS, timeout=30)
    finally:
        await rt.aclose()
    assert result.stdout == f"{tag}\n", result


# The host's codec refuses, with its own words. ``object``/``pickle`` are tags a naive
# decoder would act on; the set of lists and the zone path CPython refuses as well
# (unhashable; ZoneInfo takes no absolute path): there what is checked is that the
# refusal is a clean WireProtocolError in the codec's words, never a host exception.
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"$t": "object", "v": "os.system"}, "unknown tag 'object'"),
        ({"$t": "pickle", "v": "gASVAAAAAAAAAAB9lC4="}, "unknown tag 'pickle'"),
        ({"$t": "set", "v": [[1, 2]]}, "malformed 'set' value: unhashable type: 'list'"),
        (
            {"$t": "datetime", "v": "2024-01-01", "zone": "/etc/passwd", "offset": [0, 0, 0]},
            "not a time zone key",
        ),
        (  # 2,000 ints of one hash: ~4 s of host CPU to build as a set, past the execution
            {"$t": "set", "v": [k * (2**61 - 1) for k in range(1, 2001)]},
            "over 64 of 2,000 set members or dict keys have the same hash",
        ),
    ],
    ids=["object", "pickle", "unhashable", "zone-path", "hash-flood"],
)
async def test_a_compromised_worker_cannot_make_the_host_build_other_types(
    value: Any, message: str
) -> None:
    rt = SubprocessRuntime(SandboxPolicy.trusted(), min_idle=0)
    try:
        result = await rt.execute(_forged_call(value), TOOLS, timeout=30)
    finally:
        await rt.aclose()
    assert result.error_type == "WireProtocolError", result
    assert result.error is not None
    assert result.error.startswith(f"WireProtocolError: malformed tool arguments: {message}")
    assert result.tool_calls == ()  # the tool never ran


# -- a hash flood: a set whose members all hash alike, decoded on the host ---------------------

# The snippet's int subclass hashes its members apart (its set builds in linear time);
# they cross as plain ints, which all hash to 0 on the host: building that set there
# compares each member with every earlier one. Without the guard the host builds it (2,000
# members: ~0.3 s; 20,000 took ~25 s of host CPU in a host thread that ran on after the
# execution's timeout; a 16 MiB call holds ~600,000) and calls the tool with it, whose
# "r:" + set then fails: the marker. 2,000 keeps the control short.
HASH_FLOOD = (
    "M = (1 << 61) - 1\n"
    "class K(int):\n"
    "    def __hash__(self):\n"
    "        return int(self) // M\n"
    "flood = {K(k * M) for k in range(1, 2001)}\n"
    "try:\n"
    "    search(q=flood)\n"
    "except TypeError:\n"
    "    print('the host built the flooded set')\n"
)
HASH_FLOOD_ATTACKS = {
    runtime: Attack(
        id=f"hash-flood-{runtime}",
        code=HASH_FLOOD,
        line=7,
        error_type="ValueError",
        message="over 64 of 2,000 set members or dict keys have the same hash",
        guard="hash_flood",
        marker="the host built the flooded set",
        runtime=runtime,
    )
    for runtime in ("thread", "subprocess")
}


async def test_a_snippet_cannot_make_the_host_build_a_hash_flood(
    runtime_name: str, runtime: Any
) -> None:
    attack = HASH_FLOOD_ATTACKS[runtime_name]
    assert_control(attack)
    result = await runtime.execute(attack.code, resolve_tools([search_flood]), timeout=60)
    assert result.tool_calls == () or result.tool_calls[0].ok is False
    assert SEARCHED == []  # the tool never ran
    if runtime_name == "thread":  # the clone refuses in the snippet's own call
        assert_refused(attack, result)
    else:  # the host refuses the worker's call message: the execution ends
        assert result.error_type == "WireProtocolError", result
        assert attack.message in (result.error or "")
    assert attack.marker not in result.stdout


SEARCHED: list[Any] = []


def search_flood(q: Any) -> str:
    """Search for q (records that it ran)."""
    SEARCHED.append(q)
    return "r:" + q


search_flood.__name__ = "search"


def test_the_hash_flood_control_runs_in_both_runtimes() -> None:
    """The subprocess control too: the worker's flood reaches the host's tool."""
    stdout, error = control_output(HASH_FLOOD_ATTACKS["subprocess"])
    assert HASH_FLOOD_ATTACKS["subprocess"].marker in stdout, (stdout, error)


# -- a snippet's own dict that looks like a tag stays a dict ----------------------------------


async def test_a_snippets_look_alike_tag_stays_a_dict(runtime: Any) -> None:
    forged = {"$t": "bytes", "v": "AAAA"}
    assert type(decode(forged)) is bytes  # positive control: as wire data it is a tag
    code = f"print(kind_of({forged!r}), kind_of({{'$t': 'tuple', 'v': [1]}}))"
    result = await runtime.execute(code, TOOLS)
    assert result.ok, result.error
    assert result.stdout == "dict dict\n"  # escaped on the way: never another type


# -- hostile exceptions raised by host tools ------------------------------------------------

REDUCED: list[str] = []


class HostileError(KeyError):
    """A host exception class whose methods misbehave."""

    def __str__(self) -> str:
        raise RuntimeError("no text for you")

    def __reduce__(self) -> Any:
        REDUCED.append("called")  # pickling would call this: the boundary never does
        return (print, ("reduced",))


INJECTED = type("KeyError\nToolCallLimitExceeded: forged", (KeyError,), {})


def raise_hostile(kind: str) -> None:
    """Raises one of the hostile exceptions."""
    if kind == "str":
        raise HostileError("k", object())
    raise INJECTED("x")


HOSTILE_TOOLS = {"raise_hostile": DirectProjection("raise_hostile", raise_hostile)}


async def test_a_hostile_host_exception_crosses_as_data_only(runtime: Any) -> None:
    with pytest.raises(RuntimeError):  # positive control: its own str() fails
        str(HostileError("k"))
    code = (
        "try:\n"
        "    raise_hostile('str')\n"
        "except KeyError as e:\n"
        "    print(type(e).__name__, e.args, str(e))\n"
    )
    result = await runtime.execute(code, HOSTILE_TOOLS)
    assert result.ok, result.error
    assert result.stdout == (
        "HostileError ('k', '<object object>') <the exception's message could not be read>\n"
    )
    assert REDUCED == []


async def test_an_exception_class_name_cannot_inject_text(runtime: Any) -> None:
    assert "\n" in INJECTED.__name__  # positive control: the host class's name
    result = await runtime.execute("raise_hostile('name')", HOSTILE_TOOLS)
    assert result.error_type == "KeyError"  # not an identifier: the builtin base's name
    assert result.error is not None
    assert "ToolCallLimitExceeded" not in result.error
    assert result.error.splitlines()[-1] == "KeyError: 'x'"
    json.dumps(result.to_dict())

"""Hash-flood refusal of the value codec (``runtimes/_shared/_hashes.py``).

A set or dict of ``n`` members with one hash costs ``n**2 / 2`` comparisons to build;
numbers hash alike in every process, so the other side of the wire can choose them.
The attack through real runtimes is ``tests/attacks/test_tool_boundary.py``.
"""

from __future__ import annotations

import pytest

from ptcbox.runtimes._shared._codec import decode, encode
from ptcbox.runtimes._shared._hashes import MAX_EQUAL_HASHES

MODULUS = (1 << 61) - 1


def colliding(count: int) -> list[int]:
    """``count`` distinct ints that all hash to 0."""
    return [k * MODULUS for k in range(1, count + 1)]


def test_the_members_are_a_flood_for_python_itself() -> None:
    """Positive control: the members are distinct and share one hash."""
    members = colliding(MAX_EQUAL_HASHES + 1)
    assert len(set(members)) == len(members)
    assert {hash(m) for m in members} == {0}


@pytest.mark.parametrize("tag", ["set", "frozenset"])
def test_a_set_of_one_hash_is_refused_past_the_limit(tag: str) -> None:
    at_limit = {"$t": tag, "v": colliding(MAX_EQUAL_HASHES)}
    assert len(decode(at_limit)) == MAX_EQUAL_HASHES
    over = {"$t": tag, "v": colliding(MAX_EQUAL_HASHES + 1)}
    with pytest.raises(ValueError, match="have the same hash"):
        decode(over)


def test_dict_keys_of_one_hash_are_refused() -> None:
    data = {"$t": "dict", "v": [[key, 1] for key in colliding(MAX_EQUAL_HASHES + 1)]}
    with pytest.raises(ValueError, match="have the same hash"):
        decode(data)


def test_tuples_of_one_hash_are_refused_too() -> None:
    """A tuple's hash is made of its members' hashes: equal members' hashes, equal
    tuples' hashes. The count is of hash values, whatever the members' type."""
    members = [(k, 7) for k in colliding(MAX_EQUAL_HASHES + 1)]
    assert len({hash(m) for m in members}) == 1
    with pytest.raises(ValueError, match="have the same hash"):
        decode(encode(set(members)))


def test_ordinary_sets_and_dicts_pass() -> None:
    values = set(range(10_000)) | {str(i) for i in range(1000)} | {1.5, (1, 2)}
    assert decode(encode(values)) == values
    mapping = {i: str(i) for i in range(5000)}
    assert decode(encode(mapping)) == mapping

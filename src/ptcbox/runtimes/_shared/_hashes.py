"""Refuse hash floods in the sets and dicts the value codec builds from the other side.

Numbers hash the same in every process (``hash(k * (2**61 - 1)) == 0`` for every ``k``),
and a set or dict compares each new member with every earlier one of the same hash:
``n`` such members cost ``n**2 / 2`` comparisons (20,000 ints took ~25 s of host CPU in
the thread decoding a tool call's arguments, which ran on past the execution's end; a
16 MiB call holds ~600,000: hours). A snippet sends them cheaply (members of its own
``int`` subclass hash apart in the snippet and arrive as plain ``int``), and so does a
compromised worker. This is the hash-flooding denial of service (Crosby and Wallach,
USENIX Security 2003; the reason for ``PYTHONHASHSEED``, which randomizes ``str`` and
``bytes`` hashes but not those of numbers).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ptcbox.sandbox._ablation import off

__all__ = ["MAX_EQUAL_HASHES", "few_equal_hashes"]

MAX_EQUAL_HASHES = 64
"""Most members of one decoded set (or keys of one dict) that may share a hash value."""

_OFF = off("hash_flood")  # test-only ablation (see sandbox/_ablation)


def few_equal_hashes(members: list[Any]) -> list[Any]:
    """``members`` (of a set, or a dict's keys) unless over :data:`MAX_EQUAL_HASHES` of
    them hash alike: a hash flood (see the module docstring).

    Counted in one pass, in a dict keyed by hash value, which cannot be flooded in
    turn: a hash value is a 64-bit int, and such ints hash alike only when they are
    ``2**61 - 1`` apart (at most 9 of them). Only sets and dicts of more than
    :data:`MAX_EQUAL_HASHES` members pay it: a set of 50,000 plain ints decodes in
    0.19 s instead of 0.11 s (medians of 15, interleaved, loaded machine).

    Args:
        members: The decoded members, before the set or dict is built.

    Returns:
        ``members``.

    Raises:
        ValueError: Too many members with one hash value (a ``TypeError`` for an
            unhashable member, as the set itself raises).
    """
    if len(members) > MAX_EQUAL_HASHES and not _OFF:
        counts = Counter(map(hash, members))
        if max(counts.values()) > MAX_EQUAL_HASHES:
            raise ValueError(
                f"over {MAX_EQUAL_HASHES} of {len(members):,} set members or dict keys"
                " have the same hash (a hash flood: build the set from other values,"
                " or pass a list)"
            )
    return members

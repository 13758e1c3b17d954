"""Size-bounded argument summaries in the trace (issue 13, host memory)."""

from __future__ import annotations

import json

from ptcbox.runtimes._shared._summary import MAX_RECORD_ARGUMENT_BYTES, summarize_arguments


def _size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def test_small_arguments_are_kept_as_they_are() -> None:
    arguments = {"q": "abc", "n": 3, "tags": ["a", "b"], "opts": {"x": 1.5}}
    assert summarize_arguments(arguments) is arguments


def test_large_arguments_are_cut_with_notes() -> None:
    arguments = {
        "text": "x" * 1_000_000,
        "rows": [{"id": i, "name": "n" * 50} for i in range(100_000)],
        "deep": [[[[[1]]]]],
        "big": 1 << 5000,
    }
    summary = summarize_arguments(arguments)
    assert _size(summary) <= 2 * MAX_RECORD_ARGUMENT_BYTES
    kept, note = summary["text"].split("…")
    assert set(kept) == {"x"} and note == f"[+{1_000_000 - len(kept)} chars]"
    assert summary["rows"][0]["id"] == 0 and summary["rows"][0]["name"].startswith("nnn")
    assert summary["rows"][-1] == "…[+99992 items]"
    assert summary["deep"] == [[["…[list of 1 items]"]]]
    assert summary["big"] == "…[int of 5001 bits]"


def test_many_arguments_are_bounded_too() -> None:
    arguments = {f"k{i}": "v" * 100 for i in range(1000)}
    summary = summarize_arguments(arguments)
    assert _size(summary) <= 2 * MAX_RECORD_ARGUMENT_BYTES
    assert summary["…"] == "[+984 arguments]"

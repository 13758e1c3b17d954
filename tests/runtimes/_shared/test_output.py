"""OutputBuffer: head and tail within the byte cap, marker, thread safety, close."""

from __future__ import annotations

import threading

import pytest

from ptcbox.runtimes._shared._output import OutputBuffer, cap_text, utf8_size


def test_small_output_is_kept_as_written() -> None:
    buffer = OutputBuffer(100)
    assert buffer.write("hello ") == 6
    buffer.write("world\n")
    assert buffer.getvalue() == "hello world\n"
    assert not buffer.truncated
    assert buffer.total_bytes == 12


def test_overflow_keeps_head_and_tail_with_a_marker() -> None:
    buffer = OutputBuffer(20)
    text = "".join(f"{i:03d}\n" for i in range(100))  # 400 bytes
    for line in text.splitlines(keepends=True):
        buffer.write(line)
    value = buffer.getvalue()
    assert buffer.truncated
    assert value == text[:10] + "\n[truncated 380 bytes]\n" + text[-10:]


def test_one_huge_chunk_is_cut_in_the_middle() -> None:
    buffer = OutputBuffer(10)
    buffer.write("a" * 1000 + "z" * 5)
    assert buffer.getvalue() == "aaaaa\n[truncated 995 bytes]\nzzzzz"


def test_memory_stays_bounded_under_a_flood() -> None:
    buffer = OutputBuffer(1000)
    for i in range(100_000):
        buffer.write(f"line {i}\n")
    assert len(buffer.getvalue().encode()) <= 1000 + 40
    assert buffer.getvalue().endswith("line 99999\n")


def test_multibyte_characters_are_never_split() -> None:
    buffer = OutputBuffer(11)
    buffer.write("é" * 50)  # 2 bytes each
    value = buffer.getvalue()
    head, tail = value.split("\n[truncated ")
    assert set(head) == {"é"} and utf8_size(head) <= 5
    tail_text = tail.split("]\n", 1)[1]
    assert set(tail_text) == {"é"} and utf8_size(tail_text) <= 6


def test_lone_surrogates_become_replacement_characters() -> None:
    buffer = OutputBuffer(100)
    buffer.write("ok \ud800\n")
    assert buffer.getvalue() == "ok \ufffd\n"
    buffer.getvalue().encode("utf-8")


def test_writes_after_close_are_dropped() -> None:
    buffer = OutputBuffer(100)
    buffer.write("kept\n")
    buffer.close()
    assert buffer.write("late\n") == 5
    assert buffer.getvalue() == "kept\n"
    assert buffer.closed


def test_non_str_is_refused_and_str_subclasses_are_plain_str() -> None:
    class Sneaky(str):
        pass

    seen: list[type] = []
    buffer = OutputBuffer(100, on_write=lambda text: seen.append(type(text)))
    with pytest.raises(TypeError):
        buffer.write(b"bytes")  # type: ignore[arg-type]
    buffer.write(Sneaky("x"))
    assert seen == [str]


def test_on_write_sees_every_chunk_before_truncation() -> None:
    chunks: list[str] = []
    buffer = OutputBuffer(4, on_write=chunks.append)
    buffer.write("abcdef")
    buffer.write("gh")
    buffer.close()
    buffer.write("late")
    assert chunks == ["abcdef", "gh"]


def test_concurrent_writers_lose_nothing() -> None:
    buffer = OutputBuffer(10_000_000)

    def writer(tag: str) -> None:
        for i in range(5000):
            buffer.write(f"{tag}{i}\n")

    threads = [threading.Thread(target=writer, args=(tag,)) for tag in "abcd"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 20_000
    for tag in "abcd":
        assert [line for line in lines if line[0] == tag] == [f"{tag}{i}" for i in range(5000)]


def test_cap_text() -> None:
    assert cap_text("short", 100) == ("short", False)
    text, cut = cap_text("x" * 1000, 100)
    assert cut and text.startswith("x" * 50) and "[truncated 900 bytes]" in text


def test_max_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError):
        OutputBuffer(0)

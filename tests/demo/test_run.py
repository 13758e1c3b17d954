"""The demo runner: sections, the SQL check (OK and MISMATCH), plain and rich output."""

from __future__ import annotations

import asyncio
import io

import pytest

from ptcbox._execute import DEFAULT_RUNTIME
from ptcbox.demo import SECTIONS, SEQUENTIAL_SNIPPET, DemoContext, Output, run_demo
from ptcbox.demo import _run as demo_run


def _only_snippet_sections(monkeypatch: pytest.MonkeyPatch, *sections: object) -> None:
    monkeypatch.setattr(demo_run, "SECTIONS", list(sections))


def test_both_snippets_answer_correctly_in_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    _only_snippet_sections(monkeypatch, *SECTIONS[:2])  # the token section has its own tests
    stream = io.StringIO()
    assert asyncio.run(run_demo("thread", out=Output(stream, rich=False))) == 0
    text = stream.getvalue()
    assert text.count("check against a direct SQL query: OK (7 engineers)") == 2
    assert "29 tool calls (1 failed)" in text
    assert "\x1b[" not in text


def test_a_wrong_answer_prints_mismatch_and_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = SEQUENTIAL_SNIPPET.replace("if spent > budget", "if spent >= 0.5 * budget")
    assert wrong != SEQUENTIAL_SNIPPET
    _only_snippet_sections(monkeypatch, demo_run.snippet_section("wrong", wrong))
    stream = io.StringIO()
    assert asyncio.run(run_demo(out=Output(stream, rich=False))) == 1
    text = stream.getvalue()
    assert "check against a direct SQL query: MISMATCH" in text
    assert "people differ" in text
    assert "demo: MISMATCH" in text


def test_a_failing_snippet_is_a_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    _only_snippet_sections(monkeypatch, demo_run.snippet_section("broken", "1 / 0"))
    stream = io.StringIO()
    assert asyncio.run(run_demo(out=Output(stream, rich=False))) == 1
    assert "failed (ZeroDivisionError)" in stream.getvalue()
    assert "the snippet failed" in stream.getvalue()


def test_sections_get_the_context(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[DemoContext] = []

    async def spy(ctx: DemoContext) -> bool:
        seen.append(ctx)
        return True

    _only_snippet_sections(monkeypatch, spy)
    assert asyncio.run(run_demo(out=Output(io.StringIO(), rich=False))) == 0
    (ctx,) = seen
    assert ctx.runtime_name == DEFAULT_RUNTIME  # issue 3 may switch the default
    assert [row["id"] for row in ctx.expected][:1] == ["e002"]
    assert not ctx.db_path.exists()  # the temporary database is gone afterwards


def test_rich_output_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    _only_snippet_sections(monkeypatch, SECTIONS[0])
    stream = io.StringIO()
    out = Output(stream, rich=True)
    out.console.width = 120
    assert asyncio.run(run_demo(out=out)) == 0
    text = stream.getvalue()
    assert "OK" in text and "get_budget" in text


def test_unknown_runtime_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown runtime 'docker'"):
        asyncio.run(run_demo("docker", out=Output(io.StringIO(), rich=False)))

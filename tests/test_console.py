"""Human output of the CLI and the demo (``ptcbox._console``)."""

from __future__ import annotations

import io

from ptcbox import CodeResult, ToolCallRecord
from ptcbox._console import Output, fmt_seconds, tool_stats


def _calls(failures: int) -> tuple[ToolCallRecord, ...]:
    ok = [ToolCallRecord("get", {"i": i}, True, None, 0.001) for i in range(3)]
    bad = [
        ToolCallRecord("put", {"i": i}, False, f"ValueError: bad {i}", 0.002)
        for i in range(failures)
    ]
    return (*ok, *bad)


def test_tool_stats_counts_per_tool_in_first_call_order() -> None:
    stats = tool_stats(_calls(2))
    assert [(s.name, s.calls, s.errors) for s in stats] == [("get", 3, 0), ("put", 2, 2)]
    assert abs(stats[1].total_s - 0.004) < 1e-12


def test_fmt_seconds_units() -> None:
    assert fmt_seconds(0.000_012) == "12 µs"
    assert fmt_seconds(0.0123) == "12.3 ms"
    assert fmt_seconds(12.345) == "12.35 s"


def test_summary_lists_failures_but_caps_the_list() -> None:
    result = CodeResult(
        "", "", 1, "Traceback ...\nKeyError: 'x'", error_type="KeyError", tool_calls=_calls(9)
    )
    stream = io.StringIO()
    Output(stream, rich=False).result_summary(result)
    text = stream.getvalue()
    assert "failed (KeyError)" in text and "12 tool calls (9 failed)" in text
    assert text.count("put failed: ValueError") == 5
    assert "... and 4 more failed calls" in text
    assert text.rstrip().endswith("KeyError: 'x'")


def test_snippet_text_is_never_read_as_markup() -> None:
    stream = io.StringIO()
    out = Output(stream, rich=True)
    out.raw("[bold]not markup[/bold]")
    out.line("[red]plain[/red] text")
    assert "[bold]not markup[/bold]" in stream.getvalue()
    assert "[red]plain[/red] text" in stream.getvalue()


def test_timeout_summary() -> None:
    result = CodeResult(
        "partial\n", "", 1, "timed out", error_type="TimeoutError", timed_out=True, truncated=True
    )
    stream = io.StringIO()
    Output(stream, rich=False).result_summary(result)
    assert "timed out after" in stream.getvalue()
    assert "output truncated" in stream.getvalue()
    assert "tool calls: " not in stream.getvalue()

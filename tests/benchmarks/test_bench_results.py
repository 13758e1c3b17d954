"""The report's numbers (``ptcbox.bench._results``): savings, headline, pooled totals."""

from __future__ import annotations

import json

import pytest

from ptcbox.bench import ScenarioComparison, TokenReport, TrajectoryRun


def _run(name: str, mode: str, tokens: int) -> TrajectoryRun:
    return TrajectoryRun(
        scenario=name,
        mode=mode,  # type: ignore[arg-type]
        turns=2,
        tool_calls=1,
        code_tool_calls=0,
        input_tokens=tokens - 100,
        output_tokens=100,
        wall_time_s=0.1,
        correct=True,
        request_inputs=(400, tokens - 500),
    )


def _comparison(name: str, classic: int, ptc: int, hybrid: int) -> ScenarioComparison:
    return ScenarioComparison(
        name,
        name.title(),
        "fan-out",
        _run(name, "classic", classic),
        _run(name, "ptc", ptc),
        _run(name, "hybrid", hybrid),
    )


REPORT = TokenReport(
    model="scripted",
    runtime="ThreadRuntime",
    comparisons=(
        _comparison("big", 100_000, 2_000, 2_500),  # 98%
        _comparison("mid", 10_000, 4_000, 5_000),  # 60%
        _comparison("small", 2_000, 3_000, 2_000),  # -50%
    ),
)


def test_headline_is_the_median_with_range_and_n() -> None:
    ptc = REPORT.headline("ptc")
    assert (ptc.n, ptc.median, ptc.low, ptc.high) == (3, 60.0, -50.0, 98.0)
    assert ptc.largest == "big"
    assert ptc.pooled == pytest.approx((112_000 - 9_000) / 112_000 * 100)
    assert ptc.pooled_without_largest == pytest.approx((12_000 - 7_000) / 12_000 * 100)
    assert REPORT.headline("hybrid").median == 50.0
    sentence = ptc.sentence()
    assert sentence.startswith("run_code (PTC): median 60% fewer tokens than classic")
    assert "(range 50% more to 98% fewer, n=3 scenarios)" in sentence
    assert "without big" in sentence and "prompt caching" in sentence


def test_the_report_serializes_with_costs_and_both_headlines() -> None:
    data = json.loads(json.dumps(REPORT.to_dict()))
    assert data["headline"]["ptc"]["median"] == 60.0
    assert data["headline"]["hybrid"]["n"] == 3
    assert data["pricing"]["cache_read"] == 0.1
    first = data["scenarios"][0]
    assert first["ptc_saving_percent"] == 98.0 and first["classic"]["peak_context"] == 99_500
    assert first["classic"]["cached_cost_usd"] > 0 and data["all_correct"]
    assert data["totals"]["hybrid"]["total_tokens"] == 9_500


def test_an_empty_report_has_no_headline() -> None:
    empty = TokenReport("scripted", "ThreadRuntime", ())
    with pytest.raises(ValueError, match="no scenarios"):
        empty.headline()
    assert empty.to_dict()["headline"] == {}

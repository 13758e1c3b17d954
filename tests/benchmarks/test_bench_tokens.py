"""The token runner: both trajectories through the real agent loop and a real runtime.

Covers ``ptcbox.bench._runner`` and ``ptcbox.bench._tokens_cli``: token counts taken on
the requests as sent, answers checked (and wrong ones caught), the real-model path over
the openai SDK against a local scripted server, the JSON/Markdown/chart outputs.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ptcbox._execute import aclose_runtime, make_runtime
from ptcbox.agent_glue import ScriptedOpenAIServer, ScriptedProvider, count_request_tokens
from ptcbox.bench import (
    SCENARIOS,
    SYSTEM_PROMPT,
    get_scenario,
    main,
    render_markdown,
    run_scenario,
    run_token_benchmark,
    run_trajectory,
)
from ptcbox.bench._runner import RecordingProvider, script_for
from ptcbox.bench._scenario import final, run_code, turn
from ptcbox.runtimes import CodeRuntime

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def runtime() -> AsyncIterator[CodeRuntime]:
    code_runtime = make_runtime("thread")
    try:
        yield code_runtime
    finally:
        await aclose_runtime(code_runtime)


async def test_both_trajectories_answer_correctly_and_ptc_costs_fewer_tokens(
    runtime: CodeRuntime,
) -> None:
    scenario = get_scenario("budget_overruns")
    comparison = await run_scenario(scenario, runtime)
    classic, ptc = comparison.classic, comparison.ptc
    assert classic.correct and ptc.correct, (classic.error, ptc.error, ptc.answer)
    assert (classic.turns, classic.tool_calls, classic.code_tool_calls) == (4, 14, 0)
    # One run_code call; the snippet made the 8 + 1 + 5 tool calls itself.
    assert (ptc.turns, ptc.tool_calls, ptc.code_tool_calls) == (2, 1, 14)
    assert ptc.total_tokens < classic.total_tokens / 5
    assert comparison.saving_percent > 80
    assert classic.api_input_tokens is None  # scripted: no API usage to report


async def test_input_tokens_are_counted_on_every_request_as_sent(runtime: CodeRuntime) -> None:
    scenario = get_scenario("cheapest_itinerary")
    for mode, offered in (("classic", ["search_flights"]), ("ptc", ["run_code"])):
        turns = scenario.classic if mode == "classic" else scenario.ptc
        recorder = RecordingProvider(ScriptedProvider(script_for(turns)))
        run = await run_trajectory(scenario, mode, runtime, provider=recorder)
        requests = recorder.requests
        assert len(requests) == run.turns == len(turns)
        assert all(r.system_prompt == SYSTEM_PROMPT for r in requests)
        assert all([t.name for t in r.tools] == offered for r in requests)
        assert run.input_tokens == sum(
            count_request_tokens(r.system_prompt, r.tools, r.messages) for r in requests
        )
        # Each request re-sends the whole history: the last one holds every tool result.
        last = requests[-1].messages
        assert len(last) == 1 + 2 * (len(turns) - 1) + run.tool_calls - (len(turns) - 1)
        if mode == "ptc":
            (run_code_tool,) = requests[0].tools
            assert "def search_flights(" in run_code_tool.description
            assert "AA2578" in last[-1].content and len(last[-1].content) < 1000
        else:
            assert sum(len(m.content) for m in last if m.role == "tool") > 10_000


async def test_a_wrong_snippet_is_caught_even_when_the_final_text_is_right(
    runtime: CodeRuntime,
) -> None:
    scenario = get_scenario("budget_overruns")
    lazy = run_code('print("Alice Moreau, Dana Okafor, Fatima Haddad")')  # did no work
    broken = dataclasses.replace(scenario, ptc=(turn(lazy), scenario.ptc[-1]))
    run = await run_trajectory(broken, "ptc", runtime)
    assert run.error is None and scenario.check(run.answer)
    assert not run.correct


async def test_a_wrong_final_answer_is_not_counted_correct(runtime: CodeRuntime) -> None:
    scenario = get_scenario("top_margin")
    wrong = dataclasses.replace(
        scenario, classic=(*scenario.classic[:-1], final("AUD-1070 has the best margin."))
    )
    run = await run_trajectory(wrong, "classic", runtime)
    assert run.error is None and not run.correct


async def test_a_snippet_that_fails_is_reported_through_the_loop(runtime: CodeRuntime) -> None:
    scenario = get_scenario("fx_invoices")
    failing = run_code('rate = get_fx_rate(base="USD", quote="EUR", date="2025-04-05")')
    broken = dataclasses.replace(scenario, ptc=(turn(failing), scenario.ptc[-1]))
    run = await run_trajectory(broken, "ptc", runtime)
    assert run.tool_errors == 1 and not run.correct


async def test_a_model_that_never_answers_is_an_error_not_a_hang(runtime: CodeRuntime) -> None:
    scenario = get_scenario("doc_search")
    forever = ScriptedProvider([script_for(scenario.classic)[0]] * 3)
    run = await run_trajectory(scenario, "classic", runtime, provider=forever, max_turns=3)
    assert run.error == "no final answer after 3 turns" and not run.correct


async def test_report_totals_and_markdown(runtime: CodeRuntime) -> None:
    scenarios = [get_scenario("doc_search"), get_scenario("fx_invoices")]
    report = await run_token_benchmark(scenarios, runtime=runtime)
    assert report.all_correct
    totals = report.totals("classic")
    assert totals["total_tokens"] == sum(c.classic.total_tokens for c in report.comparisons)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["saving_percent"] == round(report.saving_percent, 1) > 50
    assert [s["scenario"] for s in data["scenarios"]] == ["doc_search", "fx_invoices"]
    assert "37% fewer tokens" in data["reference_points"][0]["result"]
    markdown = render_markdown(report)
    assert "| **total** |" in markdown and "Document search and summarise" in markdown


def test_cli_json_chart_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chart, table = tmp_path / "out" / "tokens.png", tmp_path / "tokens.md"
    argv = ["--scenario", "top_margin", "--runtime", "thread", "--json"]
    code = main([*argv, "--chart", str(chart), "--markdown", str(table)])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["all_correct"] and data["chart_path"] == str(chart)
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 10_000
    assert "Top products by margin" in table.read_text()


def test_cli_table_prints_totals_saving_and_reference_points(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--scenario", "churn_signals", "--runtime", "thread", "--no-chart"]) == 0
    out = capsys.readouterr().out
    assert "churn_signals" in out and "run_code saves" in out
    assert "150,000 -> 2,000 tokens (98.7% saved)" in out


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--scenario", "nope", "--no-chart"]) == 2
    assert main(["--base-url", "http://127.0.0.1:9/v1", "--no-chart"]) == 2
    assert "--model" in capsys.readouterr().err
    assert main(["--list"]) == 0
    assert "budget_overruns" in capsys.readouterr().out


def test_real_model_mode_reports_the_apis_usage_beside_ours(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--base-url/--model over the openai SDK, against a local scripted server."""
    scenario = get_scenario("top_margin")
    script = script_for(scenario.classic) + script_for(scenario.ptc)
    with ScriptedOpenAIServer(script) as server:
        code = main(
            ["--base-url", server.base_url, "--model", "remote-model", "--api-key", "test",
             "--scenario", "top_margin", "--runtime", "thread", "--json", "--no-chart"]
        )  # fmt: skip
        sent = len(server.requests)
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "remote-model" and sent == len(script)
    for mode in ("classic", "ptc"):
        run = data["scenarios"][0][mode]
        assert run["correct"], run
        # The server counts the request body it received; we count what we sent.
        assert run["api_input_tokens"] == run["input_tokens"]
        assert run["api_output_tokens"] == run["output_tokens"]


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
async def test_every_scenario_answers_correctly_both_ways_in_the_sandbox(
    runtime: CodeRuntime, name: str
) -> None:
    """The PTC snippets run under the default sandbox policy and find the answer."""
    comparison = await run_scenario(get_scenario(name), runtime)
    for run in (comparison.classic, comparison.ptc):
        assert run.correct, (run.mode, run.error, run.answer)
    assert comparison.ptc.total_tokens < comparison.classic.total_tokens


def test_ptcbox_bench_tokens_and_peers_are_cli_subcommands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ptcbox import cli

    argv = ["bench", "tokens", "--scenario", "doc_search", "--runtime", "thread"]
    assert cli.main([*argv, "--no-chart", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["all_correct"]
    assert "peers" in cli.BENCHMARKS

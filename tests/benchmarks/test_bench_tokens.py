"""The token runner: every trajectory through the real agent loop and a real runtime.

Covers ``ptcbox.bench._runner``, ``ptcbox.bench._toolsets`` and
``ptcbox.bench._tokens_cli``: what each kind is offered, token counts taken on the
requests as sent, ``--strict``, the real-model path over the openai SDK against a local
scripted server, the JSON/Markdown/chart outputs and the headline the demo quotes.
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ptcbox._execute import aclose_runtime, make_runtime
from ptcbox.agent_glue import ScriptedOpenAIServer, ScriptedProvider, count_request_tokens
from ptcbox.bench import (
    MODES,
    SCENARIOS,
    SYSTEM_PROMPT,
    get_scenario,
    main,
    render_markdown,
    run_scenario,
    run_token_benchmark,
    run_trajectory,
)
from ptcbox.bench._checks import CallLog
from ptcbox.bench._runner import RecordingProvider, script_for
from ptcbox.bench._scenario import RUN_CODE, run_code, turn
from ptcbox.bench._toolsets import build_toolset, definition_tokens, trajectory_for
from ptcbox.demo._tokens import SUITE_HEADLINE
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


async def test_all_three_kinds_answer_correctly_with_their_own_costs(
    runtime: CodeRuntime,
) -> None:
    scenario = get_scenario("budget_overruns")
    comparison = await run_scenario(scenario, runtime)
    classic, ptc, hybrid = comparison.classic, comparison.ptc, comparison.hybrid
    for run in (classic, ptc, hybrid):
        assert run.correct, (run.mode, run.problem)
    # Team, then 8 expense reports and 8 budgets in one parallel turn, then the answer.
    assert (classic.turns, classic.tool_calls, classic.code_tool_calls) == (3, 17, 0)
    # One run_code call; the snippet made the 1 + 8 + 5 tool calls itself.
    assert (ptc.turns, ptc.tool_calls, ptc.code_tool_calls) == (2, 1, 14)
    assert (hybrid.turns, hybrid.tool_calls, hybrid.code_tool_calls) == (2, 1, 14)
    assert ptc.total_tokens < classic.total_tokens / 5
    assert ptc.total_tokens < hybrid.total_tokens  # hybrid carries both tool sets
    assert classic.peak_context == max(classic.request_inputs) > 10 * ptc.peak_context
    assert classic.cost(cached=False) > ptc.cost(cached=False) > 0
    assert classic.api_input_tokens is None  # scripted: no API usage to report


async def test_each_kind_is_offered_its_tools_and_classic_sees_the_returns_docs(
    runtime: CodeRuntime,
) -> None:
    scenario = get_scenario("order_status")
    offered = {}
    for mode in ("classic", "ptc", "hybrid"):
        toolset = build_toolset(scenario, mode, runtime, CallLog(scenario.tools))
        offered[mode] = {d.name: d.description for d in toolset.definitions()}
    names = list(scenario.tool_names())
    assert list(offered["classic"]) == names and list(offered["ptc"]) == [RUN_CODE]
    assert list(offered["hybrid"]) == [*names, RUN_CODE]
    returns = "``estimated_delivery`` (``YYYY-MM-DD``)"
    assert returns in offered["classic"]["get_order"] and returns in offered["ptc"][RUN_CODE]
    assert "Returns:" in offered["classic"]["get_ticket"]
    # Hybrid names the tools in run_code by signature; their docs are in the direct ones.
    assert "def get_order(order_id: str) -> dict[str, Any]: ..." in offered["hybrid"][RUN_CODE]
    assert returns not in offered["hybrid"][RUN_CODE]
    sizes = {
        mode: definition_tokens(build_toolset(scenario, mode, runtime, CallLog(scenario.tools)))
        for mode in ("classic", "ptc", "hybrid")
    }
    assert sizes["hybrid"] > sizes["ptc"] > sizes["classic"] > 300


async def test_input_tokens_are_counted_on_every_request_as_sent(runtime: CodeRuntime) -> None:
    scenario = get_scenario("cheapest_itinerary")
    for mode, offered in (
        ("classic", ["search_flights"]),
        ("ptc", ["run_code"]),
        ("hybrid", ["search_flights", "run_code"]),
    ):
        turns = scenario.trajectory(mode)
        recorder = RecordingProvider(ScriptedProvider(script_for(turns)))
        run = await run_trajectory(scenario, mode, runtime, provider=recorder)
        requests = recorder.requests
        assert len(requests) == run.turns == len(turns)
        assert all(r.system_prompt == SYSTEM_PROMPT for r in requests)
        assert all([t.name for t in r.tools] == offered for r in requests)
        assert run.input_tokens == sum(
            count_request_tokens(r.system_prompt, r.tools, r.messages) for r in requests
        )
        assert run.request_inputs == tuple(
            count_request_tokens(r.system_prompt, r.tools, r.messages) for r in requests
        )
        if mode == "hybrid":
            continue
        # Each request re-sends the whole history: the last one holds every tool result.
        last = requests[-1].messages
        assert len(last) == 1 + 2 * (len(turns) - 1) + run.tool_calls - (len(turns) - 1)
        if mode == "ptc":
            (run_code_tool,) = requests[0].tools
            assert "def search_flights(" in run_code_tool.description
            assert "AA2578" in last[-1].content and len(last[-1].content) < 1000
        else:
            assert sum(len(m.content) for m in last if m.role == "tool") > 10_000


async def test_strict_mode_explores_first_unless_the_trajectory_already_does(
    runtime: CodeRuntime,
) -> None:
    plain = get_scenario("top_margin")
    strict = trajectory_for(plain, "ptc", strict=True)
    assert len(strict) == len(plain.ptc) + 1
    sample = strict[0].tool_calls[0].arguments["code"]
    assert "list_products(category_id='c-audio')" in sample and "[:400]" in sample
    explored = get_scenario("fx_invoices")
    assert explored.explores and trajectory_for(explored, "ptc", strict=True) == explored.ptc
    direct = get_scenario("order_status")  # hybrid never calls run_code: nothing to explore
    assert trajectory_for(direct, "hybrid", strict=True) == direct.hybrid
    assert trajectory_for(plain, "classic", strict=True) == plain.classic
    run = await run_trajectory(plain, "ptc", runtime, strict=True)
    assert run.correct and run.turns == 3
    assert run.total_tokens > (await run_trajectory(plain, "ptc", runtime)).total_tokens


async def test_a_snippet_that_fails_is_reported_through_the_loop(runtime: CodeRuntime) -> None:
    scenario = get_scenario("fx_invoices")
    failing = run_code('rate = get_fx_rate(base="USD", quote="EUR", date="2025-04-05")')
    broken = dataclasses.replace(scenario, ptc=(turn(failing), scenario.ptc[-1]))
    run = await run_trajectory(broken, "ptc", runtime)
    assert run.tool_errors == 1 and not run.correct
    assert run.problem is not None and run.problem.startswith("coverage:")


async def test_a_model_that_never_answers_is_an_error_not_a_hang(runtime: CodeRuntime) -> None:
    scenario = get_scenario("doc_search")
    forever = ScriptedProvider([script_for(scenario.classic)[0]] * 3)
    run = await run_trajectory(scenario, "classic", runtime, provider=forever, max_turns=3)
    assert run.error == "no final answer after 3 turns" and not run.correct


async def test_report_totals_and_markdown(runtime: CodeRuntime) -> None:
    scenarios = [get_scenario("doc_search"), get_scenario("order_status")]
    report = await run_token_benchmark(scenarios, runtime=runtime)
    assert report.all_correct
    totals = report.totals("classic")
    assert totals["total_tokens"] == sum(c.classic.total_tokens for c in report.comparisons)
    data = json.loads(json.dumps(report.to_dict()))
    assert [s["scenario"] for s in data["scenarios"]] == ["doc_search", "order_status"]
    assert data["scenarios"][1]["ptc_saving_percent"] < 0  # a single lookup costs more
    assert data["headline"]["ptc"]["n"] == 2
    assert "37% fewer tokens" in data["reference_points"][0]["result"]
    markdown = render_markdown(report)
    assert "| **total** |" in markdown and "Document search and summarise" in markdown
    assert "median" in markdown and "range" in markdown
    assert "0.1x" in markdown and "docs.anthropic.com" in markdown


def test_cli_json_chart_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chart, table = tmp_path / "out" / "tokens.png", tmp_path / "tokens.md"
    argv = ["--scenario", "top_margin", "--runtime", "thread", "--json"]
    code = main([*argv, "--chart", str(chart), "--markdown", str(table)])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["all_correct"] and data["chart_path"] == str(chart)
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 10_000
    assert "Top products by margin" in table.read_text()
    assert set(data["scenarios"][0]) >= {"classic", "ptc", "hybrid"}


def test_cli_table_prints_totals_saving_and_reference_points(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--scenario", "churn_signals", "--runtime", "thread", "--no-chart"]) == 0
    out = capsys.readouterr().out
    assert "churn_signals" in out and "hybrid" in out
    assert "run_code (PTC): median" in out and "n=1" in out and "pooled" in out
    assert "150,000 -> 2,000 tokens (98.7% saved)" in out
    assert main(["--scenario", "churn_signals", "--runtime", "thread", "--no-chart",
                 "--strict", "--json"]) == 0  # fmt: skip
    strict = json.loads(capsys.readouterr().out)
    assert strict["strict"] and strict["scenarios"][0]["ptc"]["turns"] == 3


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
    script = [turn for mode in MODES for turn in script_for(scenario.trajectory(mode))]
    with ScriptedOpenAIServer(script) as server:
        code = main(
            ["--base-url", server.base_url, "--model", "remote-model", "--api-key", "test",
             "--scenario", "top_margin", "--runtime", "thread", "--json", "--no-chart"]
        )  # fmt: skip
        sent = len(server.requests)
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "remote-model" and sent == len(script)
    for mode in MODES:
        run = data["scenarios"][0][mode]
        assert run["correct"], run
        # The server counts the request body it received; we count what we sent.
        assert run["api_input_tokens"] == run["input_tokens"]
        assert run["api_output_tokens"] == run["output_tokens"]


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
async def test_every_scenario_answers_correctly_all_three_ways_in_the_sandbox(
    runtime: CodeRuntime, name: str, strict: bool
) -> None:
    """The snippets run under the default sandbox policy; every answer passes the checks."""
    comparison = await run_scenario(get_scenario(name), runtime, strict=strict)
    for mode in MODES:
        run = comparison.run(mode)
        assert run.correct, (run.mode, run.problem, run.answer)


async def test_the_headline_the_demo_and_readme_quote_is_the_suites(
    runtime: CodeRuntime,
) -> None:
    report = await run_token_benchmark(runtime=runtime)
    assert report.all_correct
    assert report.headline("ptc").sentence() == SUITE_HEADLINE
    root = Path(__file__).parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    for mode in MODES[1:]:
        assert report.headline(mode).sentence() in readme
    # benchmarks/results/tokens.md is this run's table (regenerate it when this fails).
    table = (root / "benchmarks" / "results" / "tokens.md").read_text(encoding="utf-8")
    assert render_markdown(report) == table and table in readme
    strict = await run_token_benchmark(runtime=runtime, strict=True)
    assert strict.all_correct
    for mode in MODES[1:]:
        assert f"- {strict.headline(mode).sentence()}." in readme
    _assert_the_prose_quotes_the_run(readme, report, strict)


def _assert_the_prose_quotes_the_run(readme: str, report: Any, strict: Any) -> None:
    """The README's sentences about the table say what this run measured."""
    prose = " ".join(readme.split())  # the paragraphs are wrapped
    medians = [
        round(statistics.median(c.run(mode).definition_tokens for c in report.comparisons))
        for mode in MODES
    ]
    quoted = re.findall(r"(\d[\d,]*) / (\d[\d,]*) / (\d[\d,]*) definition tokens", prose)
    assert quoted and all([int(n.replace(",", "")) for n in q] == medians for q in quoted)
    assert "classic {:,}, PTC {:,}, hybrid {:,};".format(*medians) in prose

    def span(values: list[float], digits: int = 0) -> str:
        return f"{round(min(values), digits):g}-{round(max(values), digits):g}"

    ptc, hybrid = report.headline("ptc"), report.headline("hybrid")
    strict_ptc = strict.headline("ptc")
    assert (
        f"{round(ptc.median)}% fewer tokens on a typical task ({round(strict_ptc.median)}% "
        f"with `--strict`), a median {round(ptc.cached_cost_median)}% lower cost once prompt "
        f"caching is priced in ({round(strict_ptc.cached_cost_median)}% with `--strict`)"
    ) in prose
    more = [-c.saving("ptc") for c in report.comparisons if c.saving("ptc") < 0]
    assert f"({span(more)}% more on those three tasks in the table)" in prose and len(more) == 3
    behind = [
        round(c.saving("ptc"), 1) - round(c.saving("hybrid"), 1)  # the table's columns
        for c in report.comparisons
        if c.saving("ptc") > 0
    ]
    assert f"{span(behind, 1)} points behind `run_code` alone" in prose
    hybrid_more = [-c.saving("hybrid") for c in report.comparisons if c.saving("hybrid") < 0]
    assert f"{span(hybrid_more)}% more tokens than classic on the small lookups" in prose
    assert hybrid.median < ptc.median  # "never beats the better single choice"


def test_ptcbox_bench_tokens_and_peers_are_cli_subcommands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ptcbox import cli

    argv = ["bench", "tokens", "--scenario", "doc_search", "--runtime", "thread"]
    assert cli.main([*argv, "--no-chart", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["all_correct"]
    assert "peers" in cli.BENCHMARKS

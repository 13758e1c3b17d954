"""The answer checks (``ptcbox.bench._checks``): coverage, facts, backed figures.

Each check is computed from the run (the calls it made, what it saw), never from the
scripted answer text, and each is shown to fail where it must.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import pytest

from ptcbox._execute import aclose_runtime, make_runtime
from ptcbox.bench import CallLog, MissingData, figures, get_scenario, live_fetch, run_trajectory
from ptcbox.bench._checks import unbacked_figures
from ptcbox.bench._scenario import call, final, run_code, turn
from ptcbox.bench.scenarios import budget_overruns, fx_invoices
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


def test_figures_are_free_standing_numbers_not_ids_dates_or_times() -> None:
    text = (
        "Alice: 6,210.00 USD (+1,210.00), -55%, 53.5%; INV-2025-302 on 2025-04-05 at "
        "14:00, DOC-201, e101, v3, AA2578 at 2025-06-03T15:20, MRR 14400. Done in 5 days."
    )
    assert figures(text) == ["6210.00", "1210.00", "55", "53.5", "14400", "5"]


def test_a_figure_is_backed_at_its_own_precision() -> None:
    assert unbacked_figures("53.5% and 12 and 6,210.00", ["53.46", "12.0", "6210.0"]) == []
    assert unbacked_figures("53.4% and 13", ["53.46", "12.0"]) == ["53.4", "13"]
    # Small whole numbers are counts a model reads off a list; 10.5 or 11 are figures.
    assert unbacked_figures("all 4 regions, 10 files, 10.5 or 11", []) == ["10.5", "11"]


async def test_a_classic_run_with_zero_tool_calls_is_not_correct(runtime: CodeRuntime) -> None:
    scenario = get_scenario("budget_overruns")
    guessed = dataclasses.replace(scenario, classic=(scenario.classic[-1],))
    run = await run_trajectory(guessed, "classic", runtime)
    assert run.tool_calls == 0 and scenario.check(run.answer)  # the text alone is right
    assert not run.correct
    assert run.problem == "coverage: the run never fetched get_team_members(department='platform')"


async def test_a_classic_run_that_skips_a_page_is_not_correct(runtime: CodeRuntime) -> None:
    scenario = get_scenario("regional_revenue")
    *head, rest, answer = scenario.classic
    short = turn(*rest.tool_calls[:-1])
    skipped = rest.tool_calls[-1].arguments
    run = await run_trajectory(
        dataclasses.replace(scenario, classic=(*head, short, answer)), "classic", runtime
    )
    assert not run.correct and run.problem is not None
    assert f"page={skipped['page']}" in run.problem and repr(skipped["region"]) in run.problem


async def test_a_ptc_answer_stating_a_figure_never_printed_is_not_correct(
    runtime: CodeRuntime,
) -> None:
    scenario = get_scenario("budget_overruns")
    expenses = [
        budget_overruns.get_expenses(employee_id=f"e10{n}", quarter="Q3") for n in range(1, 9)
    ]
    team_travel = sum(
        e["amount"]
        for items in expenses
        for e in items
        if e["category"] in budget_overruns.TRAVEL_CATEGORIES and e["status"] == "approved"
    )
    claim = f"\nTogether the team spent {team_travel:.2f} USD on travel."  # true, unprinted
    answer = final(scenario.ptc[-1].text + claim)
    run = await run_trajectory(
        dataclasses.replace(scenario, ptc=(*scenario.ptc[:-1], answer)), "ptc", runtime
    )
    assert scenario.check(run.answer) and not run.correct
    assert run.problem == f"figures: {team_travel:.2f} not in anything the run saw"


async def test_a_snippet_that_prints_the_answer_without_fetching_is_not_correct(
    runtime: CodeRuntime,
) -> None:
    scenario = get_scenario("budget_overruns")
    lazy = run_code('print("Alice Moreau: 6210.00, Dana Okafor: 5480.00, Fatima Haddad: 7340.00")')
    run = await run_trajectory(
        dataclasses.replace(scenario, ptc=(turn(lazy), scenario.ptc[-1])), "ptc", runtime
    )
    assert run.error is None and not run.correct
    assert run.problem is not None and run.problem.startswith("coverage:")


async def test_classic_may_state_sums_it_worked_out_from_results_it_read(
    runtime: CodeRuntime,
) -> None:
    scenario = get_scenario("budget_overruns")
    results = json.dumps(
        [budget_overruns.get_expenses(employee_id=f"e10{n}", quarter="Q3") for n in (1, 4, 6)]
    )
    assert "6210" not in results  # the spend is a sum, not a value any tool returned
    run = await run_trajectory(scenario, "classic", runtime)
    assert run.correct and "6210.00" in run.answer


async def test_a_wrong_final_answer_is_not_counted_correct(runtime: CodeRuntime) -> None:
    scenario = get_scenario("top_margin")
    wrong = dataclasses.replace(
        scenario, classic=(*scenario.classic[:-1], final("AUD-1070 has the best margin."))
    )
    run = await run_trajectory(wrong, "classic", runtime)
    assert run.error is None and not run.correct
    assert run.problem is not None and run.problem.startswith("facts:")


def test_the_call_log_serves_only_calls_made_and_replays_failures() -> None:
    log = CallLog(fx_invoices.SCENARIO.tools)
    direct = log.wrap(fx_invoices.get_fx_rate, "direct")
    in_code = log.wrap(fx_invoices.list_open_invoices, "code")
    assert direct.__name__ == "get_fx_rate" and direct.__doc__ == fx_invoices.get_fx_rate.__doc__
    in_code()
    direct("USD", "EUR", date="2025-04-03")  # positional arguments bind by the signature
    with pytest.raises(ValueError, match="Saturday"):
        direct(base="GBP", quote="EUR", date="2025-04-05")
    fetch = log.fetch()
    assert fetch("get_fx_rate", base="USD", quote="EUR", date="2025-04-03")["rate"] > 0
    assert len(fetch("list_open_invoices")) == 14
    with pytest.raises(ValueError, match="Saturday"):  # a failed call fails again
        fetch("get_fx_rate", base="GBP", quote="EUR", date="2025-04-05")
    with pytest.raises(MissingData, match=r"never fetched get_fx_rate\(base='JPY'"):
        fetch("get_fx_rate", base="JPY", quote="EUR", date="2025-04-08")
    with pytest.raises(MissingData):  # only what the code fetched
        log.fetch(via=("code",))("get_fx_rate", base="USD", quote="EUR", date="2025-04-03")
    assert [c.via for c in log.calls] == ["code", "direct", "direct"]
    assert live_fetch(fx_invoices.SCENARIO.tools)("list_open_invoices") == in_code()


async def test_every_kind_is_checked_the_same_way_also_with_a_real_model_shape(
    runtime: CodeRuntime,
) -> None:
    """A hybrid run answers from one direct call; its figures are backed by that result."""
    scenario = get_scenario("order_status")
    run = await run_trajectory(scenario, "hybrid", runtime)
    assert run.correct and run.tool_calls == 1 and run.code_tool_calls == 0
    guessed = dataclasses.replace(scenario, hybrid=(final(scenario.hybrid[-1].text),))
    assert not (await run_trajectory(guessed, "hybrid", runtime)).correct
    padded = scenario.hybrid[-1].text + " It weighs 7.5 kg."
    wrong = dataclasses.replace(scenario, hybrid=(scenario.hybrid[0], final(padded)))
    run = await run_trajectory(wrong, "hybrid", runtime)
    assert run.problem == "figures: 7.5 not in anything the run saw"
    assert call("get_order", order_id="ORD-58213") in scenario.hybrid[0].tool_calls

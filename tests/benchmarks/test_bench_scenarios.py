"""The scenario suite: answers are right, trajectories are well-formed, fair and lean."""

from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any

import docstring_parser
import pytest

from ptcbox.bench import SCENARIOS, Scenario, get_scenario, live_fetch
from ptcbox.bench._scenario import RUN_CODE, ScriptedTurn, call, normalize_answer, turn

IDS = [scenario.name for scenario in SCENARIOS]
_FAILURES = (ValueError, KeyError, FileNotFoundError)


def test_suite_holds_fan_out_and_every_low_advantage_shape() -> None:
    assert len(set(IDS)) == len(IDS)
    shapes = [scenario.shape for scenario in SCENARIOS]
    assert shapes.count("fan-out") >= 8
    for shape in ("single lookup", "two lookups", "free text", "chained lookups"):
        assert shape in shapes
    assert get_scenario("budget_overruns").name == "budget_overruns"
    with pytest.raises(KeyError, match="known: budget_overruns"):
        get_scenario("nope")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_reference_and_solver_equal_the_written_down_answer(scenario: Scenario) -> None:
    assert scenario.reference() == scenario.expected
    assert scenario.solve(live_fetch(scenario.tools)) == scenario.expected


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_every_trajectory_ends_with_a_correct_final_answer(scenario: Scenario) -> None:
    for mode in ("classic", "ptc", "hybrid"):
        *steps, last = scenario.trajectory(mode)
        assert last.is_final, "a trajectory ends with a turn without tool calls"
        assert all(not step.is_final for step in steps), "only the last turn is final"
        assert scenario.check(last.text), (mode, last.text)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_the_check_rejects_wrong_answers(scenario: Scenario) -> None:
    answer = scenario.classic[-1].text
    for fact in scenario.facts:
        # Drop one fact: the answer is no longer correct.
        assert not scenario.check(normalize_answer(answer).replace(normalize_answer(fact), ""))
    for wrong in scenario.absent:
        assert not scenario.check(answer + "\nAlso: " + wrong)
    assert not scenario.check("I could not find the answer.")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_each_kind_calls_only_what_it_is_offered(scenario: Scenario) -> None:
    ptc_calls = [c for t in scenario.ptc for c in t.tool_calls]
    assert ptc_calls and len(ptc_calls) <= 3
    assert all(c.name == RUN_CODE and c.arguments["code"].strip() for c in ptc_calls)
    classic_calls = [c for t in scenario.classic for c in t.tool_calls]
    assert classic_calls and all(c.name in scenario.tool_names() for c in classic_calls)
    hybrid_calls = [c for t in scenario.hybrid for c in t.tool_calls]
    assert all(c.name in (*scenario.tool_names(), RUN_CODE) for c in hybrid_calls)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_classic_tool_calls_bind_and_fail_only_where_designed(scenario: Scenario) -> None:
    tools = {fn.__name__: fn for fn in scenario.tools}
    failures = 0
    for step in scenario.classic:
        for scripted in step.tool_calls:
            fn = tools[scripted.name]
            inspect.signature(fn).bind(**scripted.arguments)
            json.dumps(scripted.arguments)
            try:
                result: Any = fn(**scripted.arguments)
            except _FAILURES:
                failures += 1
                continue
            json.dumps(result)  # tool results are JSON data, as real APIs return
            assert result, f"{scripted.name}{scripted.arguments} returned nothing"
    assert failures == scenario.expected_tool_errors


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_tools_are_typed_and_documented_google_style(scenario: Scenario) -> None:
    for fn in scenario.tools:
        signature = inspect.signature(fn)
        assert signature.return_annotation is not inspect.Signature.empty
        doc = docstring_parser.parse(inspect.getdoc(fn) or "")
        assert doc.short_description, fn.__name__
        assert doc.returns is not None, fn.__name__
        assert doc.returns.type_name is None, f"{fn.__name__}: Returns: read as a type"
        documented = {p.arg_name for p in doc.params}
        for name, parameter in signature.parameters.items():
            assert parameter.annotation is not inspect.Parameter.empty, (fn.__name__, name)
            assert name in documented, (fn.__name__, name)


def _result_sizes(scenario: Scenario) -> list[int]:
    tools = {fn.__name__: fn for fn in scenario.tools}
    sizes = []
    for step in scenario.classic:
        for scripted in step.tool_calls:
            try:
                sizes.append(len(json.dumps(tools[scripted.name](**scripted.arguments))))
            except _FAILURES:
                continue
    return sizes


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_result_sizes_fit_the_shape(scenario: Scenario) -> None:
    """Fan-out results carry many fields per record; low-advantage ones are small."""
    if scenario.shape in ("fan-out", "search and read"):
        assert max(_result_sizes(scenario)) > 1500
    else:
        assert max(_result_sizes(scenario)) < 2500


# -- the classic trajectories are what a capable model does -------------------------


def _scalars(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(_scalars(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_scalars(v) for v in value)) if value else set()
    return {json.dumps(value)}


def _play(scenario: Scenario) -> list[tuple[ScriptedTurn, set[str], set[str]]]:
    """Each classic turn with the values its results held and the tools that failed."""
    tools = {fn.__name__: fn for fn in scenario.tools}
    played = []
    for step in scenario.classic[:-1]:
        values: set[str] = set()
        failed: set[str] = set()
        for scripted in step.tool_calls:
            try:
                values |= _scalars(tools[scripted.name](**scripted.arguments))
            except _FAILURES as exc:
                values |= _scalars(str(exc))
                failed.add(scripted.name)
        played.append((step, values, failed))
    return played


def _calls_made_too_late(scenario: Scenario) -> list[str]:
    """Calls in turn k that need no value first seen in turn k-1's results (and retry no
    call that failed there): they belonged in an earlier turn."""
    played = _play(scenario)
    known = _scalars(scenario.prompt.split())
    late = []
    for k, (step, _values, _failed) in enumerate(played):
        if k > 0:
            _, previous, failed = played[k - 1]
            fresh = previous - known
            for scripted in step.tool_calls:
                args = set().union(*(_scalars(v) for v in scripted.arguments.values()))
                if not (args & fresh or scripted.name in failed):
                    late.append(f"turn {k}: {scripted.name}{scripted.arguments}")
            known |= previous
    return late


def _superseded_reads(scenario: Scenario) -> list[str]:
    """Documents read after a search result had marked them superseded."""
    tools = {fn.__name__: fn for fn in scenario.tools}
    superseded: set[str] = set()
    reads = []
    for step in scenario.classic:
        for scripted in step.tool_calls:
            if scripted.name == "get_document" and scripted.arguments["doc_id"] in superseded:
                reads.append(scripted.arguments["doc_id"])
        for scripted in step.tool_calls:
            if scripted.name == "search_docs":
                hits = tools["search_docs"](**scripted.arguments)
                superseded |= {h["doc_id"] for h in hits if h["status"] == "superseded"}
    return reads


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_classic_is_lean_every_call_in_the_earliest_turn_possible(scenario: Scenario) -> None:
    assert _calls_made_too_late(scenario) == []
    assert _superseded_reads(scenario) == []


def test_the_leanness_checks_catch_the_old_wasteful_trajectories() -> None:
    """The three trajectories issue 17 fixed, as they were, fail the checks above."""
    budget = get_scenario("budget_overruns")
    ids = [f"e10{n}" for n in range(1, 9)]
    old_budget = dataclasses.replace(budget, classic=(
        budget.classic[0],
        turn(*(call("get_expenses", employee_id=i, quarter="Q3") for i in ids)),
        turn(*(call("get_custom_budget", employee_id=i) for i in ("e101", "e103", "e104"))),
        budget.classic[-1],
    ))  # fmt: skip
    assert _calls_made_too_late(old_budget)[0].startswith("turn 2: get_custom_budget")
    revenue = get_scenario("regional_revenue")
    pages = {"NA": 4, "EMEA": 3, "APAC": 3, "LATAM": 2}
    one_page_per_turn = [
        turn(*(call("list_orders", region=r, quarter="Q2", page=p) for r in pages if pages[r] >= p))
        for p in range(1, 5)
    ]
    old_revenue = dataclasses.replace(
        revenue, classic=(revenue.classic[0], *one_page_per_turn, revenue.classic[-1])
    )
    assert any("'page': 3" in late for late in _calls_made_too_late(old_revenue))
    docs = get_scenario("doc_search")
    both = turn(*(call("get_document", doc_id=d) for d in ("DOC-201", "DOC-118")))
    old_docs = dataclasses.replace(docs, classic=(docs.classic[0], both, docs.classic[-1]))
    assert _superseded_reads(old_docs) == ["DOC-118"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_classic_never_repeats_a_call(scenario: Scenario) -> None:
    calls = [json.dumps([c.name, c.arguments], sort_keys=True) for t in scenario.classic
             for c in t.tool_calls]  # fmt: skip
    assert len(calls) == len(set(calls))


def test_pagination_is_fetched_in_parallel_after_page_one() -> None:
    scenario = get_scenario("regional_revenue")
    regions, first_pages, rest, answer = scenario.classic
    assert [c.name for c in regions.tool_calls] == ["list_regions"]
    assert {c.arguments["page"] for c in first_pages.tool_calls} == {1}
    assert len(first_pages.tool_calls) == 4
    assert {c.arguments["page"] for c in rest.tool_calls} == {2, 3, 4}
    assert answer.is_final
    pages = {fn.__name__: fn for fn in scenario.tools}["list_orders"]
    wanted = sum(
        pages(region=c.arguments["region"], quarter="Q2")["total_pages"] - 1
        for c in first_pages.tool_calls
    )
    assert len(rest.tool_calls) == wanted


def test_budgets_are_fetched_alongside_the_expenses() -> None:
    scenario = get_scenario("budget_overruns")
    team, details, answer = scenario.classic
    names = [c.name for c in details.tool_calls]
    assert names.count("get_expenses") == names.count("get_custom_budget") == 8
    assert answer.is_final and [c.name for c in team.tool_calls] == ["get_team_members"]

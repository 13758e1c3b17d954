"""The scenario suite: answers are right, trajectories are well-formed and end correct."""

from __future__ import annotations

import inspect
import json
from typing import Any

import docstring_parser
import pytest

from ptcbox.bench import SCENARIOS, Scenario, get_scenario
from ptcbox.bench._scenario import RUN_CODE, normalize_answer

IDS = [scenario.name for scenario in SCENARIOS]


def test_suite_has_at_least_eight_distinct_scenarios() -> None:
    assert len(SCENARIOS) >= 8
    assert len(set(IDS)) == len(IDS)
    assert get_scenario("budget_overruns").name == "budget_overruns"
    with pytest.raises(KeyError, match="known: budget_overruns"):
        get_scenario("nope")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_reference_answer_equals_the_written_down_answer(scenario: Scenario) -> None:
    assert scenario.reference() == scenario.expected


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_both_trajectories_end_with_a_correct_final_answer(scenario: Scenario) -> None:
    for trajectory in (scenario.classic, scenario.ptc):
        *steps, last = trajectory
        assert last.is_final, "a trajectory ends with a turn without tool calls"
        assert all(not step.is_final for step in steps), "only the last turn is final"
        assert scenario.check(last.text), last.text


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
def test_ptc_trajectory_only_calls_run_code_and_classic_never_does(scenario: Scenario) -> None:
    ptc_calls = [c for t in scenario.ptc for c in t.tool_calls]
    assert ptc_calls
    assert all(c.name == RUN_CODE and c.arguments["code"].strip() for c in ptc_calls)
    assert len(ptc_calls) <= 3
    classic_calls = [c for t in scenario.classic for c in t.tool_calls]
    assert len(classic_calls) > len(ptc_calls)
    assert all(c.name in scenario.tool_names() for c in classic_calls)


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
            except (ValueError, KeyError, FileNotFoundError):
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
        documented = {p.arg_name for p in doc.params}
        for name, parameter in signature.parameters.items():
            assert parameter.annotation is not inspect.Parameter.empty, (fn.__name__, name)
            assert name in documented, (fn.__name__, name)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_classic_results_are_realistically_large(scenario: Scenario) -> None:
    """Results carry several fields per record, the way real APIs answer."""
    tools = {fn.__name__: fn for fn in scenario.tools}
    sizes = []
    for step in scenario.classic:
        for scripted in step.tool_calls:
            try:
                sizes.append(len(json.dumps(tools[scripted.name](**scripted.arguments))))
            except (ValueError, KeyError, FileNotFoundError):
                continue
    assert max(sizes) > 1500

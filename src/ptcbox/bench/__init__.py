"""Benchmarks: token cost of classic tool calling versus ``run_code`` versus both.

The scenario suite (:data:`SCENARIOS`) holds realistic tool-using tasks over
deterministic data, each with a checked answer and three scripted trajectories (classic
tool calls; ``run_code`` only; hybrid, with both offered). :func:`run_token_benchmark`
runs them through the real agent step loop and a real runtime, counts the tokens of
every request, prices them with and without prompt caching (:data:`SONNET`) and checks
every answer against what its own run fetched (:func:`check_run`); ``ptcbox bench
tokens`` (:func:`main`) prints the tables and draws the chart.
"""

from ptcbox.bench._chart import write_chart
from ptcbox.bench._checks import CallLog, Verdict, check_run, figures, live_fetch
from ptcbox.bench._pricing import SONNET, PriceModel
from ptcbox.bench._report import print_report, render_markdown
from ptcbox.bench._results import (
    MODES,
    REFERENCE_POINTS,
    Headline,
    Mode,
    ScenarioComparison,
    TokenReport,
    TrajectoryRun,
)
from ptcbox.bench._runner import SYSTEM_PROMPT, run_scenario, run_trajectory
from ptcbox.bench._scenario import (
    Fetch,
    MissingData,
    Scenario,
    ScriptedCall,
    ScriptedTurn,
    normalize_answer,
)
from ptcbox.bench._tokens_cli import main, run_token_benchmark
from ptcbox.bench.scenarios import SCENARIOS, get_scenario

__all__ = [
    "MODES",
    "REFERENCE_POINTS",
    "SCENARIOS",
    "SONNET",
    "SYSTEM_PROMPT",
    "CallLog",
    "Fetch",
    "Headline",
    "MissingData",
    "Mode",
    "PriceModel",
    "Scenario",
    "ScenarioComparison",
    "ScriptedCall",
    "ScriptedTurn",
    "TokenReport",
    "TrajectoryRun",
    "Verdict",
    "check_run",
    "figures",
    "get_scenario",
    "live_fetch",
    "main",
    "normalize_answer",
    "print_report",
    "render_markdown",
    "run_scenario",
    "run_token_benchmark",
    "run_trajectory",
    "write_chart",
]

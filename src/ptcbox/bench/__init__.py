"""Benchmarks: token cost of classic tool calling versus ``run_code``.

The scenario suite (:data:`SCENARIOS`) holds realistic multi-tool tasks over
deterministic data, each with a checked answer and two scripted trajectories (classic
tool calls, and ``run_code``). :func:`run_token_benchmark` runs both through the real
agent step loop and a real runtime and counts the tokens of every request;
``ptcbox bench tokens`` (:func:`main`) prints the tables and draws the chart.
"""

from ptcbox.bench._report import print_report, render_markdown, write_chart
from ptcbox.bench._results import (
    REFERENCE_POINTS,
    ScenarioComparison,
    TokenReport,
    TrajectoryRun,
)
from ptcbox.bench._runner import SYSTEM_PROMPT, run_scenario, run_trajectory
from ptcbox.bench._scenario import Scenario, ScriptedCall, ScriptedTurn, normalize_answer
from ptcbox.bench._tokens_cli import main, run_token_benchmark
from ptcbox.bench.scenarios import SCENARIOS, get_scenario

__all__ = [
    "REFERENCE_POINTS",
    "SCENARIOS",
    "SYSTEM_PROMPT",
    "Scenario",
    "ScenarioComparison",
    "ScriptedCall",
    "ScriptedTurn",
    "TokenReport",
    "TrajectoryRun",
    "get_scenario",
    "main",
    "normalize_answer",
    "print_report",
    "render_markdown",
    "run_scenario",
    "run_token_benchmark",
    "run_trajectory",
    "write_chart",
]

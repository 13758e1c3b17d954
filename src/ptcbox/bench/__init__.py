"""Benchmarks: token cost of classic tool calling versus ``run_code``.

The scenario suite (:data:`SCENARIOS`) holds realistic multi-tool tasks over
deterministic data, each with a checked answer and two scripted trajectories.
"""

from ptcbox.bench._scenario import Scenario, ScriptedCall, ScriptedTurn, normalize_answer
from ptcbox.bench.scenarios import SCENARIOS, get_scenario

__all__ = [
    "SCENARIOS",
    "Scenario",
    "ScriptedCall",
    "ScriptedTurn",
    "get_scenario",
    "normalize_answer",
]

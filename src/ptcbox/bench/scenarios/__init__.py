"""The scenario suite: realistic tool-using tasks over deterministic data.

Each module defines one :class:`~ptcbox.bench.Scenario` named ``SCENARIO``; the suite
lists them in a fixed order: the fan-out tasks (many calls, large results: the shape
that favours code), then the low-advantage ones (small lookups, free text, a short
chain). To add a scenario, write its module and add one line to :data:`SCENARIOS`.
"""

from __future__ import annotations

from ptcbox.bench._scenario import Scenario
from ptcbox.bench.scenarios import (
    account_manager,
    budget_overruns,
    cheapest_itinerary,
    churn_signals,
    compare_customers,
    doc_search,
    fx_invoices,
    incident_triage,
    inventory_reorder,
    order_status,
    regional_revenue,
    ticket_thread,
    top_margin,
)

__all__ = ["SCENARIOS", "get_scenario"]

SCENARIOS: tuple[Scenario, ...] = (
    budget_overruns.SCENARIO,
    top_margin.SCENARIO,
    incident_triage.SCENARIO,
    cheapest_itinerary.SCENARIO,
    inventory_reorder.SCENARIO,
    churn_signals.SCENARIO,
    doc_search.SCENARIO,
    fx_invoices.SCENARIO,
    regional_revenue.SCENARIO,
    order_status.SCENARIO,
    compare_customers.SCENARIO,
    ticket_thread.SCENARIO,
    account_manager.SCENARIO,
)
"""Every scenario, in table order."""


def get_scenario(name: str) -> Scenario:
    """Return the scenario called ``name``.

    Args:
        name: A scenario name, e.g. ``"budget_overruns"``.

    Returns:
        The scenario.

    Raises:
        KeyError: If there is no such scenario; the message lists the known names.
    """
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    known = ", ".join(s.name for s in SCENARIOS)
    raise KeyError(f"no scenario {name!r}; known: {known}")

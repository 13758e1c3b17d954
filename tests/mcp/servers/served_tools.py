"""Local tools for the ``ptcbox mcp serve`` tests (``--tools served_tools.py:TOOLS``)."""

from __future__ import annotations

import os
import time

POPULATION = {"Oslo": 709_000, "Lisbon": 545_000, "Porto": 232_000}


def get_population(city: str) -> int:
    """Population of a city.

    Args:
        city: The city's name, e.g. "Oslo".
    """
    return POPULATION[city]


def tick() -> float:
    """Append the time to the file named by $PTCBOX_TICK_FILE; returns the time."""
    now = time.time()
    path = os.environ.get("PTCBOX_TICK_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{now}\n")
    return now


TOOLS = [get_population, tick]

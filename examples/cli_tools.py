"""A tools module for the command line: ``ptcbox run SNIPPET --tools cli_tools:TOOLS``.

    cd examples && ../.venv/bin/ptcbox run cli_snippet.py --tools cli_tools:TOOLS
    .venv/bin/ptcbox run examples/cli_snippet.py --tools examples/cli_tools.py:TOOLS --json

``--tools`` takes ``module:attr`` (the current directory is importable) or
``path/to/file.py:attr``; the attribute is a list of functions, a mapping of name to
function, a tool registry, or one function. Running this file runs the first command.
"""

from __future__ import annotations

import sys
from pathlib import Path

WEATHER = {"Oslo": (-3.0, "snow"), "Lisbon": (17.5, "sun"), "Nairobi": (24.0, "rain")}


def list_cities() -> list[str]:
    """Cities with a weather station, sorted."""
    return sorted(WEATHER)


def get_weather(city: str) -> dict[str, object]:
    """Current weather in a city.

    Args:
        city: One of :func:`list_cities`.

    Returns:
        ``{"city", "temperature_c", "conditions"}``.
    """
    temperature, conditions = WEATHER[city]
    return {"city": city, "temperature_c": temperature, "conditions": conditions}


TOOLS = [list_cities, get_weather]


if __name__ == "__main__":
    from ptcbox.cli import main

    here = Path(__file__).resolve().parent
    sys.exit(
        main(["run", str(here / "cli_snippet.py"), "--tools", f"{here / 'cli_tools.py'}:TOOLS"])
    )

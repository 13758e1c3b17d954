"""Cheapest itinerary across flight searches.

The cheapest way from SFO to London on 3 June: direct, or one connection via JFK or BOS
with at least 90 minutes to connect, arriving by noon the next day. Classic: five flight
searches in parallel, every result in the context, answer. PTC: one snippet joins legs.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn

DATE = "2025-06-03"
MIN_CONNECTION = timedelta(minutes=90)
ARRIVE_BY = datetime(2025, 6, 4, 12, 0)
_ROUTES = {
    ("SFO", "LHR"): (["UA", "BA", "VS"], 610, 640, (690, 1450)),
    ("SFO", "JFK"): (["UA", "AA", "B6", "DL"], 320, 345, (149, 420)),
    ("SFO", "BOS"): (["UA", "AA", "B6", "AS"], 330, 350, (139, 390)),
    ("JFK", "LHR"): (["BA", "AA", "VS", "DL"], 415, 440, (289, 890)),
    ("BOS", "LHR"): (["BA", "VS", "DL"], 385, 410, (309, 860)),
}
_FARES = ["basic economy", "economy", "economy flex"]
_ROUTE_KEYS = [("SFO", "LHR"), ("SFO", "JFK"), ("JFK", "LHR"), ("SFO", "BOS"), ("BOS", "LHR")]


def _build() -> dict[tuple[str, str], list[dict[str, Any]]]:
    rng = random.Random(603)
    flights: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for (origin, dest), (carriers, short, long, (low, high)) in _ROUTES.items():
        rows: list[dict[str, Any]] = []
        first_hour = 6 if origin == "SFO" else 9
        for n in range(rng.randint(9, 12)):
            carrier = rng.choice(carriers)
            depart = datetime(2025, 6, 3, first_hour, 0) + timedelta(
                minutes=rng.randrange(0, (23 - first_hour) * 60, 5)
            )
            duration = rng.randint(short, long)
            arrive = depart + timedelta(minutes=duration)
            fare = rng.choice(_FARES)
            rows.append(
                {
                    "flight_number": f"{carrier}{rng.randint(100, 2999)}",
                    "carrier": carrier,
                    "origin": origin,
                    "destination": dest,
                    "departure_utc": depart.strftime("%Y-%m-%dT%H:%M"),
                    "arrival_utc": arrive.strftime("%Y-%m-%dT%H:%M"),
                    "duration_minutes": duration,
                    "stops": 0,
                    "aircraft": rng.choice(["B789", "A359", "B77W", "A321", "B738", "A320"]),
                    "cabin": "economy",
                    "fare_family": fare,
                    "price": float(rng.randint(low, high)) + 0.4 + n % 5 * 0.1,
                    "currency": "USD",
                    "seats_left": rng.randint(1, 9),
                    "checked_bags_included": 0 if fare == "basic economy" else 1,
                    "refundable": fare == "economy flex",
                }
            )
        rows.sort(key=lambda row: row["departure_utc"])
        flights[(origin, dest)] = rows
    return flights


_FLIGHTS = _build()


def search_flights(origin: str, destination: str, date: str) -> list[dict[str, Any]]:
    """Search nonstop flights departing on a date.

    Args:
        origin: IATA airport code, e.g. ``"SFO"``.
        destination: IATA airport code, e.g. ``"LHR"``.
        date: Departure day (UTC) as ``YYYY-MM-DD``.

    Returns:
        One dict per flight: ``flight_number``, ``carrier``, ``origin``, ``destination``,
        ``departure_utc`` and ``arrival_utc`` (``YYYY-MM-DDTHH:MM``), ``duration_minutes``,
        ``stops``, ``aircraft``, ``cabin``, ``fare_family``, ``price`` (USD per person),
        ``currency``, ``seats_left``, ``checked_bags_included``, ``refundable``.
    """
    if date != DATE:
        return []
    return [dict(row) for row in _FLIGHTS.get((origin, destination), [])]


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M")


def _cheapest(
    flights: dict[tuple[str, str], list[dict[str, Any]]],
) -> tuple[tuple[str, ...], float]:
    options: list[tuple[float, tuple[str, ...]]] = []
    for flight in flights[("SFO", "LHR")]:
        if _parse(flight["arrival_utc"]) <= ARRIVE_BY:
            options.append((flight["price"], (flight["flight_number"],)))
    for hub in ("JFK", "BOS"):
        for first in flights[("SFO", hub)]:
            for second in flights[(hub, "LHR")]:
                gap = _parse(second["departure_utc"]) - _parse(first["arrival_utc"])
                if gap >= MIN_CONNECTION and _parse(second["arrival_utc"]) <= ARRIVE_BY:
                    total = round(first["price"] + second["price"], 2)
                    options.append((total, (first["flight_number"], second["flight_number"])))
    price, numbers = min(options)
    return numbers, price


def reference() -> tuple[tuple[str, ...], float]:
    """The cheapest valid itinerary: ``(flight numbers, total price)``."""
    return _cheapest(_FLIGHTS)


def solve(fetch: Fetch) -> tuple[tuple[str, ...], float]:
    """The answer from tool results: the nonstop and the four connecting-leg searches."""
    return _cheapest(
        {
            route: fetch("search_flights", origin=route[0], destination=route[1], date=DATE)
            for route in _ROUTE_KEYS
        }
    )


EXPECTED: tuple[tuple[str, ...], float] = (("AA2578", "VS1985"), 607.1)

PROMPT = (
    f"Find the cheapest way to fly from SFO to London Heathrow departing {DATE}: either "
    "a nonstop flight, or one connection in JFK or BOS with at least 90 minutes between "
    "landing and the next departure. I must land at LHR by 2025-06-04 12:00 UTC. All "
    "times are UTC. Give the flight numbers, times and total price."
)

CLASSIC = (
    turn(
        *(call("search_flights", origin=o, destination=d, date=DATE) for o, d in _ROUTE_KEYS),
        text="Searching the nonstop and both connecting routes.",
    ),
)
PTC = run_code(
    f"""
    from datetime import datetime, timedelta
    t = datetime.fromisoformat
    deadline = datetime(2025, 6, 4, 12, 0)
    options = []
    for f in search_flights(origin="SFO", destination="LHR", date="{DATE}"):
        if t(f["arrival_utc"]) <= deadline:
            options.append((f["price"], [f]))
    for hub in ["JFK", "BOS"]:
        firsts = search_flights(origin="SFO", destination=hub, date="{DATE}")
        seconds = search_flights(origin=hub, destination="LHR", date="{DATE}")
        for a in firsts:
            for b in seconds:
                gap = t(b["departure_utc"]) - t(a["arrival_utc"])
                if gap >= timedelta(minutes=90) and t(b["arrival_utc"]) <= deadline:
                    options.append((round(a["price"] + b["price"], 2), [a, b]))
    options.sort(key=lambda o: o[0])
    for price, legs in options[:3]:
        route = " + ".join(
            f"{{f['flight_number']}} {{f['origin']}}-{{f['destination']}} "
            f"{{f['departure_utc']}}->{{f['arrival_utc']}} ({{f['price']:.2f}})" for f in legs)
        print(f"{{price:.2f}} USD: {{route}}")
    """
)


def _legs() -> list[dict[str, Any]]:
    numbers = EXPECTED[0]
    return [f for rows in _FLIGHTS.values() for f in rows if f["flight_number"] in numbers]


def _answer() -> str:
    legs = sorted(_legs(), key=lambda f: f["departure_utc"])
    lines = [
        f"- {f['flight_number']} {f['origin']} -> {f['destination']}, departs "
        f"{f['departure_utc']}, arrives {f['arrival_utc']} ({f['price']:.2f} USD)"
        for f in legs
    ]
    return (
        "The cheapest option that meets your constraints:\n\n"
        + "\n".join(lines)
        + f"\n\nTotal: {EXPECTED[1]:.2f} USD."
    )


SCENARIO = Scenario(
    name="cheapest_itinerary",
    title="Cheapest itinerary across flight searches",
    prompt=PROMPT,
    tools=(search_flights,),
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=(*EXPECTED[0], f"Total: {EXPECTED[1]:.2f} USD"),
    absent=("B61191",),  # cheapest legs, but the connection is impossible
    classic=(*CLASSIC, final(_answer())),
    ptc=(turn(PTC), final(_answer())),
    # Five large searches to join: the snippet is cheaper than the direct calls.
    hybrid=(turn(PTC), final(_answer())),
)

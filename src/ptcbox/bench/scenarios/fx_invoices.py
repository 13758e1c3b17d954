"""Open invoices in EUR, with a tool that fails for some inputs.

The FX-rate tool refuses weekend dates (no reference rate is published), so some calls
fail and must be retried with the previous business day. Classic: list invoices, request
every rate in parallel, retry the failures, answer. PTC: the stubs do not say how
``issued_on`` is written, so a first snippet prints a sample invoice; then one snippet
with ``try``/``except ToolError`` and a fallback loop.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn

_BASE_RATES = {"USD": 0.9213, "GBP": 1.1842, "JPY": 0.006152, "CHF": 1.0437, "SEK": 0.08761}
_CUSTOMERS = [
    "Blue Harbor Ltd",
    "Kaito Systems KK",
    "Alpen Instruments AG",
    "Fjord Analytics AB",
    "Redwood Media Inc",
    "Thames Biologics plc",
    "Lumiere SARL",
]
_INVOICE_DAYS = [  # (issue day, currency); three fall on a weekend
    ("2025-04-03", "USD"),
    ("2025-04-05", "GBP"),  # Saturday
    ("2025-04-08", "JPY"),
    ("2025-04-11", "CHF"),
    ("2025-04-14", "EUR"),
    ("2025-04-15", "SEK"),
    ("2025-04-17", "USD"),
    ("2025-04-20", "JPY"),  # Sunday
    ("2025-04-23", "GBP"),
    ("2025-04-25", "EUR"),
    ("2025-04-28", "CHF"),
    ("2025-05-03", "USD"),  # Saturday
    ("2025-05-06", "SEK"),
    ("2025-05-09", "GBP"),
]
_AMOUNTS = {"JPY": (400_000, 2_500_000), "SEK": (40_000, 300_000)}


def _build() -> list[dict[str, Any]]:
    rng = random.Random(88)
    rows = []
    for n, (issued, currency) in enumerate(_INVOICE_DAYS, start=1):
        low, high = _AMOUNTS.get(currency, (3_000, 48_000))
        issued_on = date.fromisoformat(issued)
        rows.append(
            {
                "invoice_id": f"INV-2025-{300 + n}",
                "customer": rng.choice(_CUSTOMERS),
                "issued_on": issued,
                "due_on": (issued_on + timedelta(days=30)).isoformat(),
                "amount": round(rng.uniform(low, high), 0 if currency == "JPY" else 2),
                "currency": currency,
                "status": "overdue" if issued_on < date(2025, 4, 20) else "open",
                "terms": "NET30",
                "po_number": f"PO-{rng.randint(10000, 99999)}",
            }
        )
    return rows


_INVOICES = _build()


def _rate(base: str, day: date) -> float:
    wiggle = 1 + ((day.toordinal() * 7919 + sum(map(ord, base)) * 104729) % 2001 - 1000) / 50_000
    return round(_BASE_RATES[base] * wiggle, 6)


def list_open_invoices() -> list[dict[str, Any]]:
    """List unpaid invoices (open or overdue).

    Returns:
        One dict per invoice: ``invoice_id``, ``customer``, ``issued_on``, ``due_on``,
        ``amount``, ``currency`` (ISO 4217), ``status``, ``terms``, ``po_number``.
    """
    return [dict(row) for row in _INVOICES]


def get_fx_rate(base: str, quote: str, date: str) -> dict[str, Any]:
    """Return the ECB reference rate of one day: 1 ``base`` = ``rate`` ``quote``.

    Args:
        base: Currency converted from, e.g. ``"USD"``.
        quote: Currency converted to; only ``"EUR"`` is available.
        date: The day as ``YYYY-MM-DD``.

    Returns:
        ``base``, ``quote``, ``date``, ``rate``, ``source``, ``published_at``.

    Raises:
        ValueError: If the pair is unknown, or no rate was published that day
            (no reference rates are published on weekends).
    """
    day = _parse_day(date)
    if quote != "EUR" or base not in _BASE_RATES:
        raise ValueError(f"no reference rate for {base}/{quote}")
    if day.weekday() >= 5:
        raise ValueError(
            f"no {base}/{quote} reference rate published on {date} (a "
            f"{day.strftime('%A')}); rates exist for business days only"
        )
    return {
        "base": base,
        "quote": quote,
        "date": date,
        "rate": _rate(base, day),
        "source": "ECB euro foreign exchange reference rates",
        "published_at": f"{date}T16:00:00+02:00",
    }


def _parse_day(text: str) -> date:
    return date.fromisoformat(text)


def reference() -> tuple[float, int]:
    """``(total in EUR rounded to cents, number of invoices)``."""
    total = 0.0
    for invoice in _INVOICES:
        if invoice["currency"] == "EUR":
            total += invoice["amount"]
            continue
        day = date.fromisoformat(invoice["issued_on"])
        while day.weekday() >= 5:
            day -= timedelta(days=1)
        total += invoice["amount"] * _rate(invoice["currency"], day)
    return round(total, 2), len(_INVOICES)


def solve(fetch: Fetch) -> tuple[float, int]:
    """The answer from tool results: the invoices, each one's rate (weekends: Friday's)."""
    invoices = fetch("list_open_invoices")
    total = 0.0
    for invoice in invoices:
        if invoice["currency"] == "EUR":
            total += invoice["amount"]
            continue
        day = date.fromisoformat(invoice["issued_on"])
        while day.weekday() >= 5:
            day -= timedelta(days=1)
        rate = fetch("get_fx_rate", base=invoice["currency"], quote="EUR", date=day.isoformat())
        total += invoice["amount"] * rate["rate"]
    return round(total, 2), len(invoices)


EXPECTED = (353867.86, 14)

PROMPT = (
    "What is the total of our open and overdue invoices in EUR? Convert each invoice at "
    "the ECB reference rate of its issue date; when no rate was published that day, use "
    "the previous business day's rate. Give the total to the cent."
)

_WEEKEND_RETRIES = {
    "2025-04-05": "2025-04-04",
    "2025-04-20": "2025-04-18",
    "2025-05-03": "2025-05-02",
}

CLASSIC = (
    turn(call("list_open_invoices")),
    turn(
        *(
            call("get_fx_rate", base=cur, quote="EUR", date=day)
            for day, cur in _INVOICE_DAYS
            if cur != "EUR"
        ),
        text="Getting the reference rate for each non-EUR invoice's issue date.",
    ),
    turn(
        *(
            call("get_fx_rate", base=cur, quote="EUR", date=_WEEKEND_RETRIES[day])
            for day, cur in _INVOICE_DAYS
            if day in _WEEKEND_RETRIES
        ),
        text="Three dates fell on a weekend; retrying with the previous business day.",
    ),
)
SAMPLE = run_code(
    """
    invoices = list_open_invoices()
    print(len(invoices), "invoices; the first:", invoices[0])
    """
)
PTC = run_code(
    """
    from datetime import date, timedelta
    total = 0.0
    fallbacks = []
    invoices = list_open_invoices()
    for inv in invoices:
        if inv["currency"] == "EUR":
            total += inv["amount"]
            continue
        day = date.fromisoformat(inv["issued_on"])
        for attempt in range(5):
            try:
                rate = get_fx_rate(base=inv["currency"], quote="EUR", date=day.isoformat())["rate"]
                break
            except ToolError:
                day -= timedelta(days=1)
        else:
            raise RuntimeError(f"no rate near {inv['issued_on']} for {inv['currency']}")
        if day.isoformat() != inv["issued_on"]:
            fallbacks.append(f"{inv['invoice_id']} {inv['issued_on']} -> {day.isoformat()}")
        total += inv["amount"] * rate
    print(f"{len(invoices)} invoices, total {total:.2f} EUR")
    print("rate fallbacks:", "; ".join(fallbacks))
    """
)


def _answer() -> str:
    total, count = EXPECTED
    return (
        f"The {count} open and overdue invoices total **{total:,.2f} EUR**.\n\n"
        "Three invoices were issued on a weekend (INV-2025-302 on 2025-04-05, INV-2025-308 "
        "on 2025-04-20 and INV-2025-312 on 2025-05-03); for those I used the previous "
        "business day's ECB rate."
    )


_PTC = (
    turn(SAMPLE, text="First a look at how an invoice is written."),
    turn(PTC),
    final(_answer()),
)

SCENARIO = Scenario(
    name="fx_invoices",
    title="Invoices in EUR, FX tool fails on weekends",
    prompt=PROMPT,
    tools=(list_open_invoices, get_fx_rate),
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=(f"total {EXPECTED[0]:.2f} EUR", "INV-2025-302", "INV-2025-308", "INV-2025-312"),
    classic=(*CLASSIC, final(_answer())),
    ptc=_PTC,
    # A direct list_open_invoices would show the format but put 14 invoices in the
    # context; the sample snippet is cheaper.
    hybrid=_PTC,
    explores=True,
    expected_tool_errors=3,
)

"""The corpus's fixture tools: deterministic plain-Python functions of the kinds models get.

Every tool is a pure function of its arguments (no clock, no randomness, no state kept
between calls), returns fresh objects (a snippet that mutates a result cannot change the
next call's), and raises the exception a real service client would raise (``KeyError``,
``FileNotFoundError``, ``ConnectionError``, a host-defined class ...). Results use the
types model code meets in the wild: tuples, sets, frozensets, bytes, ``datetime`` /
``date`` / ``time`` / ``timedelta``, ``Decimal``, ``UUID``, ``complex``, nested.

``SYNC_TOOLS`` is what a snippet without ``await`` sees; ``_atools.ASYNC_TOOLS`` holds the
``async def`` variants (same names, signatures and docstrings) for snippets that await.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import time
import uuid
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

__all__ = ["SYNC_TOOLS", "QuotaExceededError", "UserNotFoundError"]


class UserNotFoundError(LookupError):
    """A host-defined tool exception (the snippet cannot name it; it can catch its base)."""


class QuotaExceededError(RuntimeError):
    """A host-defined tool exception with a message and a retry hint in ``args``."""


_WEATHER = {
    "Oslo": {"temp": -3.5, "conditions": "snow", "humidity": 81, "wind_kmh": 14.0},
    "Lisbon": {"temp": 17.25, "conditions": "sunny", "humidity": 55, "wind_kmh": 9.5},
    "Tokyo": {"temp": 11.0, "conditions": "cloudy", "humidity": 63, "wind_kmh": 12.0},
    "Nairobi": {"temp": 24.5, "conditions": "sunny", "humidity": 40, "wind_kmh": 6.0},
    "Lima": {"temp": 19.0, "conditions": "fog", "humidity": 88, "wind_kmh": 4.5},
}
_LOCATIONS = {
    "Oslo": (59.9139, 10.7522),
    "Lisbon": (38.7223, -9.1393),
    "Tokyo": (35.6762, 139.6503),
    "Nairobi": (-1.2921, 36.8219),
    "Lima": (-12.0464, -77.0428),
}
_PRICES = {"SKU-1": 19.99, "SKU-2": 5.5, "SKU-3": 120.0, "SKU-4": 0.75, "SKU-5": 1249.0}
_STOCK = {"SKU-1": 42, "SKU-2": 0, "SKU-3": 7, "SKU-4": 1300, "SKU-5": 2}
_ORDERS = [
    ("o-1001", "c-1", "shipped", "2024-03-02", [("SKU-1", 2), ("SKU-4", 10)]),
    ("o-1002", "c-1", "pending", "2024-03-05", [("SKU-3", 1)]),
    ("o-1003", "c-2", "shipped", "2024-02-28", [("SKU-2", 4), ("SKU-1", 1)]),
    ("o-1004", "c-1", "cancelled", "2024-03-07", [("SKU-5", 1)]),
    ("o-1005", "c-3", "pending", "2024-03-08", [("SKU-4", 200)]),
    ("o-1006", "c-2", "shipped", "2024-03-09", [("SKU-3", 2), ("SKU-2", 1)]),
    ("o-1007", "c-3", "shipped", "2024-03-11", [("SKU-1", 5)]),
]
_STATUSES = ("pending", "shipped", "cancelled")
_USERS = {
    "u1": ("Ada Lovelace", "ada@example.com", ("admin", "dev"), "2021-06-01", True),
    "u2": ("Alan Turing", "alan@example.com", ("dev",), "2022-01-15", True),
    "u3": ("Grace Hopper", "grace@example.com", ("dev", "ops"), "2020-11-30", False),
    "u4": ("Edsger Dijkstra", "edsger@example.com", (), "2023-04-09", True),
}
_DOCS = [
    ("Getting started with the API", "/docs/start", "api key token setup start"),
    ("Rate limits and quotas", "/docs/limits", "rate limit quota retry api"),
    ("Refund policy", "/docs/refunds", "refund order return money policy"),
    ("Shipping times", "/docs/shipping", "shipping order delivery times"),
    ("Authentication tokens", "/docs/auth", "token auth api login key"),
    ("Webhooks", "/docs/webhooks", "webhook event api retry"),
    ("Order status codes", "/docs/status", "order status pending shipped cancelled"),
]
_REPORTS = {
    "sales_q1.csv": "region,month,units,revenue\n"
    "north,2024-01,120,2400.50\nsouth,2024-01,80,1610.00\n"
    "north,2024-02,95,1900.25\nsouth,2024-02,130,2620.75\n"
    "east,2024-02,40,800.00\nnorth,2024-03,150,3001.00\n",
    "notes.txt": "Q1 review\n- north grew\n- east launched in February\n",
    "config.json": '{"retries": 3, "endpoints": ["/orders", "/users"], "debug": false}',
}
_BLOBS = {"logo": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "greeting": "héllo wörld".encode()}
_TAGS = {
    "SKU-1": {"sale", "kitchen", "steel"},
    "SKU-2": {"kitchen", "wood"},
    "SKU-3": {"garden", "steel", "tools"},
}
_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")
_EPOCH = dt.datetime(2024, 3, 1, 9, 0, tzinfo=dt.UTC)


def get_weather(city: str, unit: str = "C") -> dict[str, Any]:
    """Current weather in a city.

    Args:
        city: City name, e.g. "Oslo".
        unit: "C" or "F".

    Returns:
        A dict with city, temp, unit, conditions, humidity (percent) and wind_kmh.
    """
    if city not in _WEATHER:
        raise ValueError(f"unknown city: {city!r}")
    if unit not in ("C", "F"):
        raise ValueError(f"unit must be 'C' or 'F', got {unit!r}")
    row = dict(_WEATHER[city])
    if unit == "F":
        row["temp"] = round(row["temp"] * 9 / 5 + 32, 1)
    return {"city": city, "unit": unit, **row}


def get_location(city: str) -> tuple[float, float]:
    """Coordinates of a city.

    Returns:
        A (latitude, longitude) tuple in degrees.
    """
    return _LOCATIONS[city]


def get_price(sku: str) -> float:
    """Unit price of a product in USD.

    Returns:
        The price as a float.
    """
    return _PRICES[sku]


def check_stock(skus: Iterable[str]) -> dict[str, int]:
    """Units in stock for several products (unknown SKUs are left out).

    Returns:
        A dict of SKU to units in stock.
    """
    if isinstance(skus, str):
        raise TypeError("skus must be a collection of SKU strings, not a single str")
    return {sku: _STOCK[sku] for sku in skus if sku in _STOCK}


def list_orders(customer_id: str, status: str | None = None) -> list[dict[str, Any]]:
    """Orders of a customer, oldest first.

    Args:
        customer_id: e.g. "c-1".
        status: Only orders with this status ("pending", "shipped", "cancelled").

    Returns:
        A list of dicts with id, customer_id, status, created (ISO date), items (list of
        {"sku", "qty"}) and total (float, USD).
    """
    if status is not None and status not in _STATUSES:
        raise ValueError(f"invalid status {status!r}; expected one of {', '.join(_STATUSES)}")
    out = []
    for oid, cid, st, created, items in _ORDERS:
        if cid != customer_id or (status is not None and st != status):
            continue
        total = round(sum(_PRICES[sku] * qty for sku, qty in items), 2)
        lines = [{"sku": sku, "qty": qty} for sku, qty in items]
        out.append(
            {"id": oid, "customer_id": cid, "status": st, "created": created, "items": lines}
            | {"total": total}
        )
    return out


def get_user(user_id: str) -> dict[str, Any]:
    """A user account.

    Returns:
        A dict with id, name, email, roles (tuple of str), joined (datetime.date) and
        active (bool).

    Raises:
        UserNotFoundError: (a LookupError) if there is no such user.
    """
    if user_id not in _USERS:
        raise UserNotFoundError(f"no user with id {user_id!r}")
    name, email, roles, joined, active = _USERS[user_id]
    return {
        "id": user_id,
        "name": name,
        "email": email,
        "roles": roles,
        "joined": dt.date.fromisoformat(joined),
        "active": active,
    }


def search_docs(query: str, limit: int = 5) -> list[dict[str, Any]]:
    """Search the documentation.

    Returns:
        Up to ``limit`` hits, best first: dicts with title, url and score (0..1).
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    words = set(query.lower().split())
    hits = []
    for title, url, keywords in _DOCS:
        overlap = len(words & set(keywords.split()))
        if overlap:
            hits.append({"title": title, "url": url, "score": round(overlap / len(words), 3)})
    hits.sort(key=lambda h: (-h["score"], h["title"]))
    return hits[:limit]


def get_exchange_rate(base: str, quote: str, day: dt.date) -> Decimal:
    """Exchange rate on a given day: units of ``quote`` for one ``base``.

    Args:
        base: ISO currency code, e.g. "EUR".
        quote: ISO currency code, e.g. "USD".
        day: The day, a ``datetime.date``.

    Returns:
        The rate as a Decimal with 4 places.
    """
    if not isinstance(day, dt.date):
        raise TypeError(f"day must be a datetime.date, got {type(day).__name__}")
    usd = {"USD": Decimal("1"), "EUR": Decimal("1.0850"), "GBP": Decimal("1.2650")}
    usd |= {"JPY": Decimal("0.006700")}
    if base not in usd or quote not in usd:
        raise KeyError(base if base not in usd else quote)
    drift = Decimal(day.toordinal() % 7 - 3) / Decimal(1000)
    return ((usd[base] / usd[quote]) * (1 + drift)).quantize(Decimal("0.0001"))


def get_rates(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], float]:
    """Today's rates for several currency pairs.

    Returns:
        A dict keyed by the (base, quote) tuples asked for.
    """
    day = dt.date(2024, 3, 1)
    return {(b, q): float(get_exchange_rate(b, q, day)) for b, q in pairs}


def fetch_report(name: str) -> str:
    """Read a stored report (CSV, text or JSON) by file name.

    Returns:
        The file's text.

    Raises:
        FileNotFoundError: if there is no such report.
    """
    if name not in _REPORTS:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)
    return _REPORTS[name]


def fetch_blob(blob_id: str) -> bytes:
    """Raw bytes of a stored blob.

    Returns:
        The blob's bytes.
    """
    return _BLOBS[blob_id]


def checksum(data: bytes) -> str:
    """SHA-256 of some bytes.

    Returns:
        The hex digest.
    """
    if not isinstance(data, bytes | bytearray):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    return hashlib.sha256(data).hexdigest()


def get_tags(sku: str) -> set[str]:
    """Tags of a product.

    Returns:
        A set of tag strings (empty for an untagged product).
    """
    return set(_TAGS.get(sku, ()))


def get_categories() -> frozenset[str]:
    """All product categories.

    Returns:
        A frozenset of category names.
    """
    return frozenset({"garden", "kitchen", "tools", "outdoor"})


def get_event(event_id: int) -> dict[str, Any]:
    """A calendar event.

    Returns:
        A dict with id (int), title, start (aware UTC datetime), duration (timedelta),
        day (date), reminder (time) and uid (UUID).
    """
    if not 1 <= event_id <= 5:
        raise KeyError(event_id)
    start = _EPOCH + dt.timedelta(days=event_id * 3, hours=event_id)
    return {
        "id": event_id,
        "title": ["Standup", "Review", "Planning", "Retro", "Offsite"][event_id - 1],
        "start": start,
        "duration": dt.timedelta(minutes=15 * event_id + 15),
        "day": start.date(),
        "reminder": dt.time(8, 30 + event_id),
        "uid": uuid.uuid5(_NAMESPACE, f"event-{event_id}"),
    }


def get_invoice(invoice_id: str) -> dict[str, Any]:
    """An invoice with exact money amounts.

    Returns:
        A dict with id (UUID), number, issued (date), lines (list of (description,
        quantity, unit price as Decimal) tuples) and tax_rate (Decimal).
    """
    if not invoice_id.startswith("INV-"):
        raise ValueError(f"invoice ids look like 'INV-7', got {invoice_id!r}")
    n = int(invoice_id[4:])
    lines = [("Widget", 3, Decimal("19.99")), ("Gadget", 1, Decimal("120.00"))]
    lines.append(("Service fee", 1, Decimal("4.50") * n))
    return {
        "id": uuid.uuid5(_NAMESPACE, invoice_id),
        "number": invoice_id,
        "issued": dt.date(2024, 3, n % 28 + 1),
        "lines": lines,
        "tax_rate": Decimal("0.20"),
    }


def measure_impedance(freq_hz: float) -> complex:
    """Impedance of the test circuit (R = 50 ohm, L = 1 mH) at a frequency.

    Returns:
        The complex impedance in ohms.
    """
    return complex(50.0, round(2 * 3.141592653589793 * freq_hz * 1e-3, 6))


def get_stock_history(sku: str, days: int = 5) -> list[tuple[dt.date, int]]:
    """Units in stock at the end of each of the last ``days`` days.

    Returns:
        A list of (date, units) tuples, oldest first.
    """
    base = _STOCK[sku]
    start = dt.date(2024, 3, 10)
    return [(start - dt.timedelta(days=i), base + (i * 7) % 5) for i in range(days)][::-1]


def flaky_service(endpoint: str, attempt: int = 1) -> dict[str, Any]:
    """Call an unreliable backend; it refuses the first two attempts at "/orders".

    Returns:
        {"endpoint", "attempt", "status": 200}.

    Raises:
        ConnectionError: on attempts 1 and 2 at "/orders", and always at "/down".
    """
    if endpoint == "/down" or (endpoint == "/orders" and attempt < 3):
        raise ConnectionError(f"connection reset by peer while calling {endpoint}")
    return {"endpoint": endpoint, "attempt": attempt, "status": 200}


def ping_host(host: str) -> float:
    """Round-trip time to a host in milliseconds.

    Raises:
        TimeoutError: for hosts that do not answer ("db.internal").
    """
    if host == "db.internal":
        raise TimeoutError(f"{host} did not answer within 2.0 s")
    return float(len(host) * 3 % 17 + 1)


def call_partner_api(path: str) -> dict[str, Any]:
    """Call the partner API, which has a tight quota.

    Raises:
        QuotaExceededError: (a RuntimeError) for any path under "/bulk".
    """
    if path.startswith("/bulk"):
        raise QuotaExceededError("quota exceeded for /bulk", 30)
    return {"path": path, "ok": True}


def send_email(to: str, subject: str, body: str, cc: list[str] | None = None) -> dict[str, Any]:
    """Queue an email.

    Returns:
        {"status": "queued", "message_id": str, "recipients": int}.
    """
    if "@" not in to:
        raise ValueError(f"invalid address: {to!r}")
    digest = hashlib.sha1(f"{to}|{subject}|{body}".encode()).hexdigest()[:12]
    return {"status": "queued", "message_id": digest, "recipients": 1 + len(cc or [])}


def slow_query(seconds: float) -> str:
    """A query that takes ``seconds`` to answer (for timeouts).

    Returns:
        "done".
    """
    time.sleep(seconds)
    return "done"


SYNC_TOOLS: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (
        get_weather,
        get_location,
        get_price,
        check_stock,
        list_orders,
        get_user,
        search_docs,
        get_exchange_rate,
        get_rates,
        fetch_report,
        fetch_blob,
        checksum,
        get_tags,
        get_categories,
        get_event,
        get_invoice,
        measure_impedance,
        get_stock_history,
        flaky_service,
        ping_host,
        call_partner_api,
        send_email,
        slow_query,
    )
}
"""The tools by name, as a snippet without ``await`` sees them."""

"""``async def`` variants of the fixture tools, for snippets that ``await`` their calls.

Each has its sync twin's name, signature and docstring (a real ``async def``, so wrong
arguments raise at call time as they would for any coroutine function) and yields to the
event loop once before answering; ``slow_query`` sleeps with ``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

import _tools as t

__all__ = ["ASYNC_TOOLS"]


async def get_weather(city: str, unit: str = "C") -> dict[str, Any]:
    await asyncio.sleep(0)
    return t.get_weather(city, unit)


get_weather.__doc__ = t.get_weather.__doc__


async def get_location(city: str) -> tuple[float, float]:
    await asyncio.sleep(0)
    return t.get_location(city)


get_location.__doc__ = t.get_location.__doc__


async def get_price(sku: str) -> float:
    await asyncio.sleep(0)
    return t.get_price(sku)


get_price.__doc__ = t.get_price.__doc__


async def check_stock(skus: Iterable[str]) -> dict[str, int]:
    await asyncio.sleep(0)
    return t.check_stock(skus)


check_stock.__doc__ = t.check_stock.__doc__


async def list_orders(customer_id: str, status: str | None = None) -> list[dict[str, Any]]:
    await asyncio.sleep(0)
    return t.list_orders(customer_id, status)


list_orders.__doc__ = t.list_orders.__doc__


async def get_user(user_id: str) -> dict[str, Any]:
    await asyncio.sleep(0)
    return t.get_user(user_id)


get_user.__doc__ = t.get_user.__doc__


async def search_docs(query: str, limit: int = 5) -> list[dict[str, Any]]:
    await asyncio.sleep(0)
    return t.search_docs(query, limit)


search_docs.__doc__ = t.search_docs.__doc__


async def get_exchange_rate(base: str, quote: str, day: dt.date) -> Decimal:
    await asyncio.sleep(0)
    return t.get_exchange_rate(base, quote, day)


get_exchange_rate.__doc__ = t.get_exchange_rate.__doc__


async def get_rates(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], float]:
    await asyncio.sleep(0)
    return t.get_rates(pairs)


get_rates.__doc__ = t.get_rates.__doc__


async def fetch_report(name: str) -> str:
    await asyncio.sleep(0)
    return t.fetch_report(name)


fetch_report.__doc__ = t.fetch_report.__doc__


async def fetch_blob(blob_id: str) -> bytes:
    await asyncio.sleep(0)
    return t.fetch_blob(blob_id)


fetch_blob.__doc__ = t.fetch_blob.__doc__


async def checksum(data: bytes) -> str:
    await asyncio.sleep(0)
    return t.checksum(data)


checksum.__doc__ = t.checksum.__doc__


async def get_tags(sku: str) -> set[str]:
    await asyncio.sleep(0)
    return t.get_tags(sku)


get_tags.__doc__ = t.get_tags.__doc__


async def get_categories() -> frozenset[str]:
    await asyncio.sleep(0)
    return t.get_categories()


get_categories.__doc__ = t.get_categories.__doc__


async def get_event(event_id: int) -> dict[str, Any]:
    await asyncio.sleep(0)
    return t.get_event(event_id)


get_event.__doc__ = t.get_event.__doc__


async def get_invoice(invoice_id: str) -> dict[str, Any]:
    await asyncio.sleep(0)
    return t.get_invoice(invoice_id)


get_invoice.__doc__ = t.get_invoice.__doc__


async def measure_impedance(freq_hz: float) -> complex:
    await asyncio.sleep(0)
    return t.measure_impedance(freq_hz)


measure_impedance.__doc__ = t.measure_impedance.__doc__


async def get_stock_history(sku: str, days: int = 5) -> list[tuple[dt.date, int]]:
    await asyncio.sleep(0)
    return t.get_stock_history(sku, days)


get_stock_history.__doc__ = t.get_stock_history.__doc__


async def flaky_service(endpoint: str, attempt: int = 1) -> dict[str, Any]:
    await asyncio.sleep(0)
    return t.flaky_service(endpoint, attempt)


flaky_service.__doc__ = t.flaky_service.__doc__


async def ping_host(host: str) -> float:
    await asyncio.sleep(0)
    return t.ping_host(host)


ping_host.__doc__ = t.ping_host.__doc__


async def call_partner_api(path: str) -> dict[str, Any]:
    await asyncio.sleep(0)
    return t.call_partner_api(path)


call_partner_api.__doc__ = t.call_partner_api.__doc__


async def send_email(
    to: str, subject: str, body: str, cc: list[str] | None = None
) -> dict[str, Any]:
    await asyncio.sleep(0)
    return t.send_email(to, subject, body, cc)


send_email.__doc__ = t.send_email.__doc__


async def slow_query(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


slow_query.__doc__ = t.slow_query.__doc__

ASYNC_TOOLS: dict[str, Callable[..., Any]] = {
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
"""The async tools by name, as a snippet that awaits sees them."""

"""Costs with and without prompt caching (``ptcbox.bench._pricing``)."""

from __future__ import annotations

import pytest

from ptcbox.bench import SONNET, PriceModel


def test_uncached_cost_is_input_and_output_at_list_price() -> None:
    assert SONNET.cost([1000, 2000], 100, cached=False) == pytest.approx(
        (3000 * 3.0 + 100 * 15.0) / 1e6
    )


def test_cached_requests_read_the_previous_prompt_and_write_the_rest() -> None:
    # first: 2000 written at 1.25x; second: 2000 read at 0.1x, 1000 new written at 1.25x
    units = 2000 * 1.25 + 2000 * 0.1 + 1000 * 1.25
    assert SONNET.cost([2000, 3000], 0, cached=True) == pytest.approx(units * 3.0 / 1e6)


def test_prompts_under_the_minimum_are_not_cached() -> None:
    assert SONNET.cost([500, 900], 40, cached=True) == SONNET.cost([500, 900], 40, cached=False)


def test_caching_pays_off_only_when_a_long_history_is_re_sent() -> None:
    growing = [5000 + 4000 * n for n in range(8)]
    assert SONNET.cost(growing, 500, cached=True) < 0.4 * SONNET.cost(growing, 500, cached=False)
    once = [1200, 20_000]  # a large result read once by the final request: writes cost more
    assert SONNET.cost(once, 100, cached=True) > SONNET.cost(once, 100, cached=False)


def test_the_price_model_is_documented() -> None:
    assert (SONNET.cache_read, SONNET.cache_write, SONNET.min_cacheable) == (0.1, 1.25, 1024)
    assert SONNET.source.startswith("https://docs.anthropic.com/")
    free = PriceModel("free", 0.0, 0.0, 1.0, 1.0, 0, "-")
    assert free.cost([10], 10, cached=True) == 0.0

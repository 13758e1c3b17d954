"""What a run costs in dollars, without and with prompt caching.

One documented pricing model: Anthropic's list prices for Claude Sonnet 4.5 (the same for
Sonnet 4 and 3.7): input $3 and output $15 per million tokens; with prompt caching, a
5-minute cache write costs 1.25x the input price and a cache read 0.1x; the shortest
cacheable prompt on Sonnet is 1,024 tokens. Source: Anthropic, "Prompt caching",
https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing, and
https://www.anthropic.com/pricing. OpenAI prices cached input at 0.25x-0.5x of input
depending on the model, with no write surcharge; this module prices only Anthropic's
model. Caching helps whatever re-sends a long history over many turns (classic, mostly)
and costs extra where a large result is read only once, by the final request (the
1.25x write is paid, the 0.1x read never comes).

The caching model is the usual agent setup: every request puts a cache breakpoint at the
end of its history, so each request reads the previous request's whole prompt from the
cache (0.1x) and writes only what is new since then (1.25x: the model's last turn and
the tool results). A prompt shorter than the minimum is neither written nor read. The
last request's write is paid although nothing reads it (an agent cannot know the next
turn is its last).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SONNET", "PriceModel"]


@dataclass(frozen=True, slots=True)
class PriceModel:
    """List prices of one model, with its prompt-caching multipliers.

    Attributes:
        name: The model whose prices these are.
        input_per_mtok: USD per million input tokens (uncached).
        output_per_mtok: USD per million output tokens.
        cache_write: Price of a cache write, as a multiple of the input price.
        cache_read: Price of a cache read, as a multiple of the input price.
        min_cacheable: Shortest prompt that can be cached, in tokens.
        source: Where the prices are published.
    """

    name: str
    input_per_mtok: float
    output_per_mtok: float
    cache_write: float
    cache_read: float
    min_cacheable: int
    source: str

    def cost(self, request_inputs: Sequence[int], output_tokens: int, *, cached: bool) -> float:
        """Return the cost of a run in USD.

        Args:
            request_inputs: Input tokens of each request, in order (each request
                re-sends the previous one's prompt and adds to it).
            output_tokens: Tokens the model wrote over the run.
            cached: Price with prompt caching (see the module docstring), or without.

        Returns:
            The cost in USD.
        """
        units = float(sum(request_inputs))
        if cached:
            units, prefix = 0.0, 0
            for size in request_inputs:
                read = min(prefix, size)
                if size >= self.min_cacheable:
                    units += read * self.cache_read + (size - read) * self.cache_write
                    prefix = size
                else:
                    units += read * self.cache_read + (size - read)
                    prefix = 0
        return (units * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


SONNET = PriceModel(
    name="Claude Sonnet 4.5",
    input_per_mtok=3.0,
    output_per_mtok=15.0,
    cache_write=1.25,
    cache_read=0.1,
    min_cacheable=1024,
    source="https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing",
)
"""The pricing model of the report (Anthropic list prices; see the module docstring)."""

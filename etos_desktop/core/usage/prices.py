"""Prices per million tokens the user set per model, and the cost estimates they give.

A model without a price has no cost: the app never guesses one. Cached prompt tokens are
charged at the input price (an upper estimate: most services bill cache hits for less).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.providers.base import Usage

#: The currencies a price may be in (shown by their sign).
CURRENCIES: Final = ("USD", "CNY", "EUR")
#: The highest price per million tokens accepted (a typo guard, well above any real one).
MAX_PRICE: Final = 10_000.0


@dataclass(frozen=True)
class ModelPrice:
    """What a million tokens of one model cost, in ``currency``."""

    input: float
    output: float
    currency: str = "USD"

    def cost(self, usage: Usage) -> float:
        """The estimated cost of ``usage`` at this price."""
        return (usage.prompt_tokens * self.input + usage.completion_tokens * self.output) / 1e6

    def to_json(self) -> dict[str, object]:
        """The price as ``settings.json`` keeps it."""
        return {"input": self.input, "output": self.output, "currency": self.currency}

    @classmethod
    def from_json(cls, data: object) -> ModelPrice:
        """Read a price from ``settings.json``.

        Raises:
            InvalidInput: It is not an object of two prices in range and a known currency.
        """
        if not isinstance(data, dict):
            raise InvalidInput("a price is not an object", key="model_prices", reason="invalid")
        currency = data.get("currency", "USD")
        price = cls(_price(data.get("input")), _price(data.get("output")), str(currency))
        check_price(price)
        return price


def _price(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput("a price is not a number", key="model_prices", reason="invalid")
    return float(value)


def check_price(price: ModelPrice) -> None:
    """Raise ``InvalidInput`` (``key="model_prices"``) for a price that cannot be right.

    Both prices must be finite, in ``0..MAX_PRICE`` and not both 0 (no price is ``None``, not
    zeros), and the currency one of :data:`CURRENCIES`.
    """
    values = (price.input, price.output)
    if any(not math.isfinite(v) or not 0 <= v <= MAX_PRICE for v in values):
        raise InvalidInput(
            "price out of range", key="model_prices", reason="out_of_range", maximum=MAX_PRICE
        )
    if not any(values):
        raise InvalidInput("a price of nothing", key="model_prices", reason="empty")
    if price.currency not in CURRENCIES:
        raise InvalidInput("unknown currency", key="model_prices", reason="currency")


@dataclass(frozen=True)
class Costs:
    """Estimated costs of several replies: a sum per currency, and how many had no price.

    Attributes:
        by_currency: Currency → estimated cost, in :data:`CURRENCIES` order.
        unpriced: Replies with usage whose model has no price (not counted in the sums).
        priced: Replies counted in the sums.
    """

    by_currency: tuple[tuple[str, float], ...] = ()
    unpriced: int = 0
    priced: int = 0


def total_costs(
    replies: Iterable[tuple[str | None, Usage]], prices: dict[str, ModelPrice]
) -> Costs:
    """The estimated cost of ``replies`` (model, usage) at ``prices`` (by model name)."""
    sums: dict[str, float] = {}
    unpriced = priced = 0
    for model, usage in replies:
        price = prices.get(model or "")
        if price is None:
            unpriced += 1
            continue
        priced += 1
        sums[price.currency] = sums.get(price.currency, 0.0) + price.cost(usage)
    ordered = tuple((c, sums[c]) for c in CURRENCIES if c in sums)
    return Costs(ordered, unpriced, priced)

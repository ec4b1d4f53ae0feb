"""The words for tokens and costs (ui/usage_text.py): amounts, totals, unpriced replies."""

from __future__ import annotations

import pytest

from etos_desktop.core.providers.base import Usage
from etos_desktop.core.usage.prices import ModelPrice
from etos_desktop.ui.usage_text import conversation_usage_text, money_text, reply_usage_text


@pytest.mark.parametrize(
    ("currency", "amount", "text"),
    [
        ("USD", 0.005185, "≈ $0.0052"),  # two significant digits below 0.10: not "$0.01"
        ("USD", 0.00012, "≈ $0.00012"),
        ("USD", 0.00004, "< $0.0001"),
        ("USD", 0.0, "$0"),
        ("EUR", 0.126, "≈ €0.13"),
        ("CNY", 1234.5, "≈ ¥1,234.50"),
    ],
)
def test_amounts(qapp, currency: str, amount: float, text: str) -> None:
    assert money_text(currency, amount) == text


def test_a_reply_without_cached_tokens_or_price(qapp) -> None:
    assert reply_usage_text(Usage(12, 3, 15), None) == "Tokens: 12 in · 3 out"


def test_the_total_says_which_replies_had_no_price(qapp) -> None:
    priced, other = Usage(1_000_000, 0, 1_000_000), Usage(500, 50, 550, cached_tokens=100)
    prices = {"gpt": ModelPrice(2.0, 8.0), "qwen": ModelPrice(4.0, 12.0, "CNY")}
    assert conversation_usage_text([("gpt", priced), ("local", other)], prices) == (
        "Conversation total (2 with usage): 1,000,500 in (100 cached) · 50 out · ≈ $2.00 "
        "(1 of them without a price, not counted)"
    )
    assert conversation_usage_text([("local", other)], prices) == (
        "Conversation total (1 with usage): 500 in (100 cached) · 50 out "
        "(no price set for its models: Settings → Providers)"
    )
    # Prices in two currencies are never added together.
    assert conversation_usage_text([("gpt", priced), ("qwen", priced)], prices).endswith(
        "· ≈ $2.00 + ≈ ¥4.00"
    )
    assert conversation_usage_text([], prices) == (
        "The server reported no token usage in this conversation yet."
    )

"""Words for token usage and cost, and the quiet line under a reply that shows them.

The numbers are the server's (``core/usage``); a cost is shown only for a model the user gave a
price in Settings → Providers, never a guessed one. The line under a reply is a ``UsageLine``
note added to the ``MessageWidget`` (``show_usage``), so the chat panel needs one call where it
shows a row and one where the prices change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QLocale, Qt
from PySide6.QtWidgets import QLabel, QWidget
from typing_extensions import override

from etos_desktop.core.providers.base import Usage
from etos_desktop.core.usage.prices import Costs, ModelPrice, total_costs
from etos_desktop.core.usage.records import message_usage
from etos_desktop.ui.message_widget import MessageWidget

if TYPE_CHECKING:
    from etos_desktop.core.storage.tables import MessageRow
    from etos_desktop.core.usage.store import JobUsage

#: The sign each currency is written with.
CURRENCY_SIGNS = {"USD": "$", "CNY": "¥", "EUR": "€"}

Prices = Mapping[str, ModelPrice]


def _count(value: int) -> str:
    locale = QLocale()
    # Grouped in every locale ("1,234"): the C locale leaves the separator out by default.
    locale.setNumberOptions(QLocale.NumberOption.DefaultNumberOptions)
    return locale.toString(value)


def currency_name(currency: str) -> str:
    """A currency as the price fields list it ("Dollar ($)")."""
    names = {
        "USD": QCoreApplication.translate("UsageText", "Dollar ($)"),
        "CNY": QCoreApplication.translate("UsageText", "Yuan (¥)"),
        "EUR": QCoreApplication.translate("UsageText", "Euro (€)"),
    }
    return names.get(currency, currency)


def money_text(currency: str, amount: float) -> str:
    """An estimated amount, as "≈ $0.0031": two significant digits below 1, else cents."""
    sign = CURRENCY_SIGNS.get(currency, currency + " ")
    if amount <= 0:
        return f"{sign}0"
    if amount < 0.0001:
        return QCoreApplication.translate("UsageText", "< {amount}").format(amount=f"{sign}0.0001")
    # Cents from 0.10 up; below, two significant digits (0.0031), so a cheap reply is not 0.00.
    digits = f"{amount:,.2f}" if amount >= 0.1 else f"{amount:.2g}"
    return f"≈ {sign}{digits}"


def tokens_text(usage: Usage) -> str:
    """The tokens as "1,234 in (800 cached) · 210 out", in the UI language."""
    prompt = (
        QCoreApplication.translate("UsageText", "{prompt} in ({cached} cached)").format(
            prompt=_count(usage.prompt_tokens), cached=_count(usage.cached_tokens)
        )
        if usage.cached_tokens
        else QCoreApplication.translate("UsageText", "{prompt} in").format(
            prompt=_count(usage.prompt_tokens)
        )
    )
    return QCoreApplication.translate("UsageText", "{prompt} · {completion} out").format(
        prompt=prompt, completion=_count(usage.completion_tokens)
    )


def reply_usage_text(usage: Usage, price: ModelPrice | None) -> str:
    """The line under a reply: "Tokens: 1,234 in (800 cached) · 210 out · ≈ $0.0031"."""
    text = QCoreApplication.translate("UsageText", "Tokens: {tokens}").format(
        tokens=tokens_text(usage)
    )
    if price is not None:
        text += " · " + money_text(price.currency, price.cost(usage))
    return text


def costs_text(costs: Costs) -> str:
    """The estimated costs of several replies ("≈ $0.02 + ≈ ¥0.10"), "" when none is priced."""
    return " + ".join(money_text(currency, amount) for currency, amount in costs.by_currency)


def conversation_usage_text(replies: Iterable[tuple[str | None, Usage]], prices: Prices) -> str:
    """The conversation's total for the context inspector, with its cost where priced."""
    listed = list(replies)
    if not listed:
        return QCoreApplication.translate(
            "UsageText", "The server reported no token usage in this conversation yet."
        )
    total = listed[0][1]
    for _model, usage in listed[1:]:
        total = total + usage
    text = QCoreApplication.translate(
        "UsageText", "Conversation total ({count} with usage): {tokens}"
    ).format(count=_count(len(listed)), tokens=tokens_text(total))
    costs = total_costs(listed, dict(prices))
    if costs.by_currency:
        text += " · " + costs_text(costs)
    if costs.unpriced and costs.priced:
        text += " " + QCoreApplication.translate(
            "UsageText", "({count} of them without a price, not counted)"
        ).format(count=_count(costs.unpriced))
    elif costs.unpriced:
        text += " " + QCoreApplication.translate(
            "UsageText", "(no price set for its models: Settings → Providers)"
        )
    return text


def job_usage_text(usage: Usage | None) -> str:
    """A job's tokens over 30 days for Settings' jobs list ("—" when it sent none)."""
    if usage is None:
        return "—"
    return _count(usage.total_tokens)


def job_usage_tooltip(usage: Usage | None, requests: int) -> str:
    """The breakdown of a job's tokens, for the cell's tooltip."""
    if usage is None:
        return ""
    return QCoreApplication.translate("UsageText", "Requests: {count} · {tokens}").format(
        count=_count(requests), tokens=tokens_text(usage)
    )


class UsageLine(QLabel):
    """The quiet line under a reply with its tokens (and cost, when its model has a price)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageUsage")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._usage: Usage | None = None
        self._model = ""
        self._price: ModelPrice | None = None

    def set_usage(self, usage: Usage, model: str, prices: Prices) -> None:
        """Show ``usage`` of a reply by ``model``, costed at its price in ``prices`` if any."""
        self._usage, self._model = usage, model
        self.reprice(prices)

    def reprice(self, prices: Prices) -> None:
        """Cost the usage again at ``prices`` (no price for the model: no cost)."""
        self._price = prices.get(self._model)
        self.retranslate()

    def retranslate(self) -> None:
        """Set the text in the current language."""
        if self._usage is not None:
            self.setText(reply_usage_text(self._usage, self._price))
            self.setToolTip(
                QCoreApplication.translate(
                    "UsageText",
                    "Tokens the server reported for this reply. The cost is an estimate from the "
                    "price set in Settings → Providers; cached tokens are counted at the input price.",
                )
                if self._price is not None
                else QCoreApplication.translate(
                    "UsageText",
                    "Tokens the server reported for this reply. Set a price for the model in "
                    "Settings → Providers to see an estimated cost.",
                )
            )

    @override
    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.LanguageChange, QEvent.Type.LocaleChange):
            self.retranslate()
        super().changeEvent(event)


def show_usage(widget: MessageWidget, row: MessageRow, prices: Prices) -> None:
    """Show the usage of ``row`` under its message ``widget``, or none.

    The line is made the first time a row has usage and updated afterwards (a finished reply, a
    new price); a row without usage hides it.
    """
    usage = message_usage(row) if row.role == "assistant" else None
    line = widget.findChild(UsageLine)
    if usage is None:
        if line is not None:
            line.hide()
        return
    if line is None:
        line = UsageLine()
        widget.add_note(line)
    line.set_usage(usage, row.model or "", prices)
    line.show()


def reprice(widgets: Iterable[QWidget], prices: Prices) -> None:
    """The prices changed: cost every usage line under ``widgets`` again."""
    for widget in widgets:
        for line in widget.findChildren(UsageLine):
            line.reprice(prices)


def show_job_usage(label: QLabel, used: JobUsage | None) -> None:
    """Put a job's tokens of the last 30 days in its cell of Settings' jobs list."""
    label.setText(job_usage_text(used.usage if used is not None else None))
    label.setToolTip(job_usage_tooltip(used.usage, used.requests) if used is not None else "")
    label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)

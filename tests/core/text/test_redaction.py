"""Redaction with the memory write filter: what a summary keeps around a secret."""

from __future__ import annotations

import pytest

from etos_desktop.core.text.secrets import REDACTED, redact_secrets, secret_reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my key is sk-abcdefghijklmnopqrstuvwx ok", f"my key is {REDACTED} ok"),
        ("the password is hunter22.", f"the {REDACTED}."),
        ("用户提到密码是abc12345，后来讨论了旅行。", f"用户提到{REDACTED}，后来讨论了旅行。"),
        ("card 4111 1111 1111 1111 end", f"card {REDACTED} end"),
        ("身份证 11010519491231002X 已提供", f"身份证 {REDACTED} 已提供"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- tail",
            f"{REDACTED} tail",
        ),
        ("order 1234567890123 shipped", "order 1234567890123 shipped"),
        ("nothing secret here", "nothing secret here"),
    ],
)
def test_secrets_are_replaced_and_the_rest_kept(text: str, expected: str):
    assert redact_secrets(text) == expected
    assert secret_reason(redact_secrets(text)) is None

from __future__ import annotations

import pytest

from etos_desktop.core.text.checks import MemoryEmpty, MemorySecret, MemoryTooLong, check_content
from etos_desktop.core.text.secrets import SECRET_REASONS, cn_id_valid, luhn_valid, secret_reason

# A valid-checksum resident ID made up for tests (region 110101, born 1990-03-07).
CN_ID = "110101199003076632"


def test_cn_id_fixture_is_valid() -> None:
    assert cn_id_valid(CN_ID)
    assert not cn_id_valid(CN_ID[:-1] + "1")
    assert not cn_id_valid("110101199002300000")  # 30 February


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("my key is sk-proj-abcdefghijklmnopqrstuvwx", "api_key"),
        ("deepseek: sk-0123456789abcdef0123", "api_key"),
        ("AWS AKIAIOSFODNN7EXAMPLE", "api_key"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "api_key"),
        ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "api_key"),
        ("Authorization: Bearer abcdefghijklmnop1234", "api_key"),
        ("api_key = 9f8e7d6c5b4a39281706", "api_key"),
        ("我的密钥是 abcdEFGH12345678", "api_key"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "api_key",
        ),
        ("random-looking aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3h", "api_key"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA", "private_key"),
        ("my password is hunter2!", "password"),
        ("wifi password: correct-horse", "password"),
        ("我的密码是abc12345", "password"),
        ("银行卡支付密码为 654321", "password"),
        ("PIN code: 4821", "password"),
        ("my card 4111 1111 1111 1111 expires soon", "card_number"),
        ("卡号6222021234567890128", "card_number"),
        (f"身份证号 {CN_ID}", "id_number"),
        ("ssn 123-45-6789", "ssn"),
        ("IBAN GB82 WEST 1234 5698 7654 32", "bank_account"),
    ],
)
def test_secrets_are_detected_with_a_reason(text: str, reason: str) -> None:
    assert secret_reason(text) == reason
    assert reason in SECRET_REASONS


@pytest.mark.parametrize(
    "text",
    [
        "I use pnpm for JavaScript projects",
        "我对花生过敏",
        "My phone is a Pixel 8",
        "Order 4111111111111112 arrived",  # fails Luhn
        "Timestamp 20240101123045 in the log",  # 14 digits, not a card prefix/Luhn
        "我的手机号是 13812345678",  # 11 digits: not a card or ID number
        "I prefer password managers like Bitwarden",
        "The commit was 3f2a9c1e5b7d4f6a8c0e2b4d6f8a0c2e4b6d8f0a",  # hex: lower case only
        "ThisIsMyVeryLongVariableNameForTests",  # words: low entropy, no digits
        "110101199002300000 is not a valid id",  # impossible date
        "Call me at 555-123-4567",
    ],
)
def test_ordinary_text_is_not_a_secret(text: str) -> None:
    assert secret_reason(text) is None


def test_luhn() -> None:
    assert luhn_valid("4111111111111111")
    assert luhn_valid("79927398713")
    assert not luhn_valid("79927398710")


def test_check_content_strips_and_refuses_with_codes() -> None:
    assert check_content("  I like tea \n", max_chars=100) == "I like tea"
    with pytest.raises(MemoryEmpty) as empty:
        check_content(" \n\t", max_chars=100)
    assert empty.value.code == "memory_empty"
    with pytest.raises(MemoryTooLong) as long:
        check_content("x" * 11, max_chars=10)
    assert long.value.code == "memory_too_long"
    assert long.value.params == {"reason": "too_long", "length": 11, "limit": 10}
    assert check_content("x" * 5000, max_chars=None) == "x" * 5000
    with pytest.raises(MemorySecret) as secret:
        check_content("password: hunter22", max_chars=100)
    assert secret.value.code == "memory_secret"
    assert secret.value.params["reason"] == "password"
    assert "hunter22" not in str(secret.value)


def test_check_content_cleans_control_characters_before_the_checks() -> None:
    """Issue 19: every memory write (tool, Settings, import) passes here and was stored raw."""
    assert check_content("\x00 I like\x07 tea\x85\r\nwith milk\x00 ", max_chars=100) == (
        "I like tea\nwith milk"
    )
    with pytest.raises(MemoryEmpty):
        check_content("\x00\x1b\x9f", max_chars=100)
    # Bidi controls, ZWJ emoji and right-to-left letters are text: stored as given.
    kept = "\u202egnp.exe 👨\u200d👩\u200d👧 مرحبا שלום"
    assert check_content(kept, max_chars=100) == kept

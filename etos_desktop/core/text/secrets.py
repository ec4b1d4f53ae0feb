"""The secrets filter: what a program can tell is a secret, found and redacted. Pure functions.

It enforces the part of "write with restraint" (DESIGN §5.1 principle 2) that a program can
check: API keys and tokens, private keys, passwords, payment card numbers (Luhn), Chinese
resident ID numbers (checksum), US social security numbers and IBANs (mod 97). Checksums keep
ordinary long numbers (order numbers, timestamps) from being refused. Every layer uses it: memory
writes refuse, summaries and the profile redact, and tool-call arguments are redacted before a
reply's tool rounds are stored or sent again (issue 19).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from datetime import date
from typing import Any

_PRIVATE_KEY_RE = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
_API_KEY_RES = tuple(
    re.compile(pattern)
    for pattern in (
        r"\bsk-[A-Za-z0-9_\-]{16,}",  # OpenAI, DeepSeek, Anthropic (sk-ant-), OpenRouter
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key id
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
        r"\bgithub_pat_[A-Za-z0-9_]{30,}",
        r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab
        r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack
        r"\bAIza[0-9A-Za-z_\-]{35}",  # Google
        r"\bhf_[A-Za-z0-9]{30,}",  # Hugging Face
        r"\b[spr]k_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
        r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # JWT
        r"(?i)\bbearer\s+[A-Za-z0-9._\-]{16,}",
        r"(?i)(?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|client[ _-]?secret|auth[ _-]?token"
        r"|access[ _-]?token|token|secret|密钥|秘钥|令牌|口令牌)"
        r"\s*(?:[:=：]|is|was|是|为)\s*['\"“]?[A-Za-z0-9_\-./+=]{12,}",
    )
)
_PASSWORD_RES = (
    re.compile(r"(?i)\b(?:password|passwd|passphrase|passcode|pwd)s?\s*(?:[:=：]|is|was)\s*\S{3,}"),
    re.compile(
        r"(?:密码|口令|登录密码|支付密码)\s*(?:[:=：]|是|为|改成了?|改为|设为|设置为|设置成)\s*\S{3,}"
    ),
    re.compile(r"(?i)\bpin(?:\s*code)?\s*(?:[:=：]|is)\s*\d{4,8}\b"),
    re.compile(r"(?i)\bpin\s*码\s*(?:[:=：]|是|为)\s*\d{4,8}"),
)
_CARD_RE = re.compile(r"(?<![\d.])\d(?:[ \-]?\d){12,18}(?![\d.])")
_CN_ID18_RE = re.compile(
    r"(?<![0-9A-Za-z])[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
    r"\d{3}[\dXx](?![0-9A-Za-z])"
)
_CN_ID15_RE = re.compile(
    r"(?<![0-9A-Za-z])[1-9]\d{5}\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}(?![0-9A-Za-z])"
)
_SSN_RE = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_IBAN_RE = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
_RANDOM_TOKEN_RE = re.compile(r"(?<![A-Za-z0-9_\-+=])[A-Za-z0-9_\-+=]{32,}(?![A-Za-z0-9_\-+=])")

_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_ID_CHECK = "10X98765432"


def luhn_valid(digits: str) -> bool:
    """Whether a digit string passes the Luhn checksum used by payment cards."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        value = int(ch)
        if i % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def cn_id_valid(number: str) -> bool:
    """Whether an 18-character Chinese resident ID number has a valid date and check character."""
    if len(number) != 18:
        return False
    try:
        date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    total = sum(int(ch) * w for ch, w in zip(number[:17], _CN_ID_WEIGHTS, strict=True))
    return _CN_ID_CHECK[total % 11] == number[17].upper()


def _cn_id15_valid(number: str) -> bool:
    try:
        date(1900 + int(number[6:8]), int(number[8:10]), int(number[10:12]))
    except ValueError:
        return False
    return True


def _iban_valid(candidate: str) -> bool:
    compact = candidate.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def _entropy(token: str) -> float:
    counts = Counter(token)
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    # Mixed case plus digits plus high entropy: base62/base64 keys, not words or hex hashes.
    return (
        any(ch.isupper() for ch in token)
        and any(ch.islower() for ch in token)
        and sum(ch.isdigit() for ch in token) >= 2
        and _entropy(token) >= 4.0
    )


def _has_card(text: str) -> bool:
    for match in _CARD_RE.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_valid(digits):
            return True
    return False


_CHECKS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("private_key", lambda t: _PRIVATE_KEY_RE.search(t) is not None),
    ("api_key", lambda t: any(r.search(t) for r in _API_KEY_RES)),
    ("password", lambda t: any(r.search(t) for r in _PASSWORD_RES)),
    ("id_number", lambda t: any(cn_id_valid(m.group()) for m in _CN_ID18_RE.finditer(t))),
    ("id_number", lambda t: any(_cn_id15_valid(m.group()) for m in _CN_ID15_RE.finditer(t))),
    ("card_number", _has_card),
    ("ssn", lambda t: _SSN_RE.search(t) is not None),
    ("bank_account", lambda t: any(_iban_valid(m.group()) for m in _IBAN_RE.finditer(t))),
    ("api_key", lambda t: any(_looks_random(m.group()) for m in _RANDOM_TOKEN_RE.finditer(t))),
)

#: Every reason ``secret_reason`` can return.
SECRET_REASONS = frozenset(reason for reason, _ in _CHECKS)


def secret_reason(text: str) -> str | None:
    """Say whether ``text`` holds a secret or sensitive identifier, and which kind.

    Args:
        text: A memory's content.

    Returns:
        ``None`` when nothing was found, else one of ``SECRET_REASONS``: ``"private_key"``,
        ``"api_key"``, ``"password"``, ``"id_number"``, ``"card_number"``, ``"ssn"``,
        ``"bank_account"``.
    """
    for reason, check in _CHECKS:
        if check(text):
            return reason
    return None


#: What a redacted secret is replaced with.
REDACTED = "[redacted]"

_PRIVATE_KEY_BLOCK_RE = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.DOTALL
)


# The password patterns end at white space, which Chinese text has none of: redacting up to the
# next space would remove the rest of the paragraph. Here the value also ends at punctuation
# (and a full stop right after it is left, so the sentence still ends).
_PASSWORD_REDACT_RES = tuple(
    re.compile(
        r.pattern.replace(r"\S{3,}", r"[^\s，。；！？、,;!?]{2,}[^\s，。；！？、,;!?.]"), r.flags
    )
    for r in _PASSWORD_RES
)


def _secret_spans(text: str) -> list[tuple[int, int]]:
    """Where the secrets ``secret_reason`` finds are, as ``(start, end)`` spans."""
    spans: list[tuple[int, int]] = [m.span() for m in _PRIVATE_KEY_BLOCK_RE.finditer(text)]
    for pattern in (*_API_KEY_RES, *_PASSWORD_REDACT_RES, _SSN_RE):
        spans.extend(m.span() for m in pattern.finditer(text))
    spans.extend(m.span() for m in _CN_ID18_RE.finditer(text) if cn_id_valid(m.group()))
    spans.extend(m.span() for m in _CN_ID15_RE.finditer(text) if _cn_id15_valid(m.group()))
    for match in _CARD_RE.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_valid(digits):
            spans.append(match.span())
    spans.extend(m.span() for m in _IBAN_RE.finditer(text) if _iban_valid(m.group()))
    spans.extend(m.span() for m in _RANDOM_TOKEN_RE.finditer(text) if _looks_random(m.group()))
    return spans


def redact_secrets(text: str) -> str:
    """Replace every secret ``secret_reason`` would find in ``text`` by ``[redacted]``.

    For text the app writes on the user's behalf (session summaries), where refusing the whole
    text would lose what is worth keeping around the secret.

    Args:
        text: Any text.

    Returns:
        The text with each secret (overlapping finds merged) replaced; unchanged when there is
        none. ``secret_reason`` finds nothing in the result.
    """
    for _ in range(3):
        spans = sorted(_secret_spans(text))
        if not spans:
            return text
        merged: list[list[int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        for start, end in reversed(merged):
            text = text[:start] + REDACTED + text[end:]
    # A pattern that still matches after three rounds (a secret spelled around the marker):
    # nothing of it is kept.
    return REDACTED if secret_reason(text) else text


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _redact_value(v) for k, v in value.items()}
    return value


def redact_json_text(text: str) -> str:
    """``redact_secrets`` for a JSON document (a tool call's arguments): every string redacted.

    Args:
        text: JSON text, or text that was meant to be (a model's arguments may be broken).

    Returns:
        The same document with each secret in its strings replaced by ``[redacted]`` (the
        document stays valid JSON); text that is not JSON is redacted as plain text. Unchanged,
        byte for byte, when there is no secret.
    """
    if not secret_reason(text):
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return redact_secrets(text)
    redacted = json.dumps(_redact_value(data), ensure_ascii=False)
    # A secret in a key or in a number: nothing of the document is kept.
    return redacted if not secret_reason(redacted) else json.dumps(REDACTED)


def redact_tool_calls(tool_calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-format tool calls with every secret in their arguments redacted (a copy).

    The calls are what the model sent; a ``save_memory`` the filter refused still has the secret
    in its arguments, and the reply's stored tool rounds are sent again with the history.
    """
    redacted: list[dict[str, Any]] = []
    for call in tool_calls:
        function = call.get("function")
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            arguments = redact_json_text(function["arguments"])
            if arguments != function["arguments"]:
                call = {**call, "function": {**function, "arguments": arguments}}
        redacted.append(call)
    return redacted


def redact_tool_transcript(stored: str) -> str:
    """A reply's stored tool rounds (``message.tool_calls_json``) with tool-call secrets redacted.

    Either shape the app has stored: ``{"rounds": [{"tool_calls": [...], ...}], "final": ...}``
    or a plain list of calls. Anything else is returned unchanged.
    """
    if not secret_reason(stored):
        return stored
    try:
        data = json.loads(stored)
    except ValueError:
        return stored
    if isinstance(data, list):
        data = redact_tool_calls(data)
    elif isinstance(data, dict) and isinstance(data.get("rounds"), list):
        for round_ in data["rounds"]:
            if isinstance(round_, dict) and isinstance(round_.get("tool_calls"), list):
                round_["tool_calls"] = redact_tool_calls(round_["tool_calls"])
    else:
        return stored
    return json.dumps(data, ensure_ascii=False)

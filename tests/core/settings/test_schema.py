from __future__ import annotations

import math

import pytest

from etos_desktop.core.errors import InvalidInput
from etos_desktop.core.settings.schema import (
    SETTINGS,
    SPECS,
    SettingSpec,
    defaults,
    spec_for,
    validate,
)


def test_keys_are_unique_and_dotted() -> None:
    keys = [spec.key for spec in SETTINGS]
    assert len(keys) == len(set(keys))
    assert all(key.count(".") == 1 for key in keys)
    assert set(SPECS) == set(keys)


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda s: s.key)
def test_spec_is_well_formed(spec: SettingSpec) -> None:
    assert spec.type in (bool, int, float, str)
    assert validate(spec, spec.default) == spec.default
    assert type(validate(spec, spec.default)) is spec.type
    if spec.choices is not None:
        assert spec.default in spec.choices
    if spec.minimum is not None and spec.maximum is not None:
        assert spec.minimum <= spec.maximum


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda s: s.key)
def test_description_is_a_full_sentence(spec: SettingSpec) -> None:
    text = spec.description
    assert text[0].isupper()
    assert text.endswith(".")
    assert len(text.split()) >= 6
    assert "  " not in text


@pytest.mark.parametrize(
    ("key", "kind", "default", "minimum", "maximum", "choices"),
    [
        ("ui.language", str, "auto", None, None, ("auto", "en", "zh")),
        ("ui.theme", str, "system", None, None, ("system", "light", "dark")),
        ("chat.max_output_tokens", int, 2048, 64, 65536, None),
        ("chat.temperature", float, 0.7, 0, 2, None),
        ("chat.stream_render_interval_ms", int, 80, 16, 1000, None),
        ("chat.auto_title", bool, True, None, None, None),
        ("persona.name", str, "", None, 64, None),
        ("persona.prompt", str, "", None, 10000, None),
        ("persona.avatar", str, "", None, None, None),
        ("memory.enabled", bool, True, None, None, None),
    ],
)
def test_required_settings(
    key: str,
    kind: type,
    default: object,
    minimum: float | None,
    maximum: float | None,
    choices: tuple[str, ...] | None,
) -> None:
    spec = spec_for(key)
    assert spec.type is kind
    assert spec.default == default
    assert spec.minimum == minimum
    assert spec.maximum == maximum
    assert spec.choices == choices


def test_section_and_lookup() -> None:
    assert spec_for("chat.temperature").section == "chat"
    with pytest.raises(KeyError):
        spec_for("no.such")


def test_defaults_is_a_fresh_dict() -> None:
    first = defaults()
    first["ui.theme"] = "dark"
    assert defaults()["ui.theme"] == "system"
    assert set(first) == set(SPECS)


def _reason(spec_key: str, value: object) -> str:
    with pytest.raises(InvalidInput) as caught:
        validate(spec_for(spec_key), value)
    assert caught.value.params["key"] == spec_key
    reason = caught.value.params["reason"]
    assert isinstance(reason, str)
    return reason


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("chat.max_output_tokens", "2048"),
        ("chat.max_output_tokens", True),
        ("chat.max_output_tokens", 100.5),
        ("chat.temperature", False),
        ("chat.temperature", "0.5"),
        ("chat.temperature", math.nan),
        ("chat.temperature", math.inf),
        ("chat.auto_title", 1),
        ("chat.auto_title", "true"),
        ("ui.theme", None),
        ("persona.prompt", 5),
    ],
)
def test_wrong_types_are_rejected(key: str, value: object) -> None:
    assert _reason(key, value) == "wrong_type"


def test_numbers_are_converted_between_int_and_float() -> None:
    assert validate(spec_for("chat.max_output_tokens"), 100.0) == 100
    assert type(validate(spec_for("chat.max_output_tokens"), 100.0)) is int
    assert validate(spec_for("chat.temperature"), 1) == 1.0
    assert type(validate(spec_for("chat.temperature"), 1)) is float


@pytest.mark.parametrize(
    ("key", "ok", "bad"),
    [
        ("chat.max_output_tokens", [64, 65536], [63, 65537, -1]),
        ("chat.temperature", [0, 0.0, 2.0], [-0.01, 2.01]),
        ("chat.stream_render_interval_ms", [16, 1000], [15, 1001]),
    ],
)
def test_ranges_are_inclusive(key: str, ok: list[float], bad: list[float]) -> None:
    for value in ok:
        validate(spec_for(key), value)
    for value in bad:
        assert _reason(key, value) == "out_of_range"


def test_choices() -> None:
    assert validate(spec_for("ui.language"), "zh") == "zh"
    assert _reason("ui.language", "fr") == "not_a_choice"
    with pytest.raises(InvalidInput) as caught:
        validate(spec_for("ui.language"), "fr")
    assert caught.value.params["choices"] == ("auto", "en", "zh")


def test_string_length_limits() -> None:
    validate(spec_for("persona.name"), "x" * 64)
    assert _reason("persona.name", "x" * 65) == "too_long"
    short = SettingSpec("t.short", str, "abc", "A test setting with a minimum length.", minimum=2)
    assert validate(short, "ab") == "ab"
    with pytest.raises(InvalidInput) as caught:
        validate(short, "a")
    assert caught.value.params["reason"] == "too_short"


def test_error_detail_is_bounded() -> None:
    with pytest.raises(InvalidInput) as caught:
        validate(spec_for("chat.temperature"), "y" * 10_000)
    assert len(str(caught.value)) < 300

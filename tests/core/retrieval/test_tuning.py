from __future__ import annotations

import pytest

from etos_desktop.core.retrieval.tuning import (
    DEFAULTS,
    LEXICAL,
    UNKNOWN,
    Tuning,
    calibrate,
    tuning_for,
)
from tests.helpers.embedders import HashEmbedder


def test_tuning_is_chosen_by_provider_part_of_the_key() -> None:
    assert tuning_for("use-m3:512") is DEFAULTS["use-m3"]
    assert tuning_for("use-m3:512").floor == 0.10
    assert tuning_for("use-m3:512").impersonal_floor == 0.50
    assert tuning_for("hash:64") is DEFAULTS["hash"]
    assert tuning_for("openai:http://x/v1:text-embedding-3-small:1536") is UNKNOWN
    assert tuning_for(None) is LEXICAL


def test_unknown_embedders_are_conservative() -> None:
    assert UNKNOWN.floor > DEFAULTS["use-m3"].floor
    assert UNKNOWN.duplicate_similarity >= DEFAULTS["use-m3"].duplicate_similarity


def test_vector_weight_is_linear_between_short_and_long() -> None:
    tuning = Tuning(
        vector_weight_short=0.4, vector_weight_long=0.7, short_query_units=8, long_query_units=24
    )
    assert tuning.vector_weight(1) == 0.4
    assert tuning.vector_weight(8) == 0.4
    assert tuning.vector_weight(16) == pytest.approx(0.55)
    assert tuning.vector_weight(100) == pytest.approx(0.7)
    flat = Tuning(short_query_units=10, long_query_units=10, vector_weight_short=0.3)
    assert flat.vector_weight(50) == 0.3


def test_scale_and_recency() -> None:
    tuning = Tuning(vector_low=0.2, vector_high=0.6, recency_half_life_days=100)
    assert tuning.scale_vector(0.1) == 0.0
    assert tuning.scale_vector(0.4) == pytest.approx(0.5)
    assert tuning.scale_vector(0.9) == 1.0
    assert Tuning(vector_low=0.5, vector_high=0.5).scale_vector(0.5) == 1.0
    assert tuning.recency(0) == 1.0
    assert tuning.recency(100) == pytest.approx(0.5)
    assert tuning.recency(-5) == 1.0
    assert Tuning(recency_half_life_days=0).recency(1000) == 1.0


def test_calibrate_derives_a_floor_between_noise_and_signal() -> None:
    tuned = calibrate(HashEmbedder(256), base=UNKNOWN)
    assert 0.0 < tuned.floor < 1.0
    assert tuned.vector_low < tuned.floor < tuned.vector_high <= 1.0
    assert 0.9 <= tuned.duplicate_similarity <= 0.98
    assert tuned.keyword_floor == UNKNOWN.keyword_floor


def test_strictness_moves_every_floor_and_balanced_changes_nothing():
    from etos_desktop.core.retrieval.tuning import tuning_for, with_strictness

    base = tuning_for("use-m3:512")
    assert with_strictness(base, "balanced") == base
    strict = with_strictness(base, "strict")
    broad = with_strictness(base, "broad")
    assert strict.floor > base.floor > broad.floor
    assert strict.impersonal_floor > base.impersonal_floor > broad.impersonal_floor
    assert strict.keyword_floor > base.keyword_floor > broad.keyword_floor

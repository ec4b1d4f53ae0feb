"""English stemming for the keyword index: the Snowball (Porter2) stemmer, cached per word.

The hand-written Porter step 1 this replaces folded plurals and -ed/-ing only, so "restoring"
never met "restoration" and "confident" never met "confidence" (issue 18). Snowball's English
stemmer takes the derivational suffixes too. It is pure Python (~70 µs a word here), so words
are cached: a store's vocabulary is small next to its word count.

Index and queries must be stemmed by the same algorithm: a change of stemmer is a change of the
index, done by a migration that re-indexes every row (``storage.migrations``).
"""

from __future__ import annotations

import functools
import threading

import snowballstemmer

#: Words shorter than this are kept as they are ("was", "use", "bus").
MIN_STEM_LENGTH = 4

_local = threading.local()


def _stemmer() -> snowballstemmer.stemmer:
    # Snowball stemmer objects keep state between calls: one per thread.
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = snowballstemmer.stemmer("english")
        _local.stemmer = stemmer
    return stemmer


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem of a lower-case word; non-ASCII, non-alphabetic and short words are unchanged.

    Args:
        word: A lower-case word (already case-folded and stripped of diacritics).

    Returns:
        The Snowball English stem ("allergies" → "allergi", "restoration" → "restor").
    """
    if len(word) < MIN_STEM_LENGTH or not (word.isascii() and word.isalpha()):
        return word
    return str(_stemmer().stemWord(word))

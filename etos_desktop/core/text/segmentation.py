"""Text segmentation for the keyword index: the same tokens for indexing and for queries.

Latin-script words are NFKC-normalised, case-folded, stripped of diacritics and stemmed
(Snowball English, ``stemming.stem``). CJK text (Han, kana, Hangul) becomes single characters
plus character bigrams, so one- and two-character queries match and no dictionary is needed. The
result depends only on this code and Python's Unicode tables, so it is the same on every machine.
Raw FTS5 would treat a run of Chinese characters as one token; the trigram tokenizer does worse
than bigrams on Chinese benchmarks (DESIGN §5.3).

Two full-text indexes hold this module's tokens: the memories' (``memory_fts``) and the
messages' (``message_fts``). A change to what :func:`tokens` returns is a change of both indexes:
a migration re-indexes the memories (as v6 did) and must empty the message index for the
background indexer to fill again (``core/storage/message_fts.py``: its deletes recompute the
tokens of the text they remove).
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterator, Sequence

from etos_desktop.core.text.stemming import stem

_CJK_CLASS = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u31f0-\u31ff"  # katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003134f"  # CJK extensions B-G
)
_RUN_RE = re.compile(rf"(?P<cjk>[{_CJK_CLASS}]+)|(?P<word>(?:(?![{_CJK_CLASS}])[^\W_])+)")
_POSSESSIVE_RE = re.compile(r"(?<=[^\W_])'s\b")
_INNER_APOSTROPHE_RE = re.compile(r"(?<=[^\W_])'(?=[^\W_])")
_CJK_CHAR_RE = re.compile(f"[{_CJK_CLASS}]")
_KEY_DROP_RE = re.compile(r"[\W_]+")


_STOP_WORDS = """
    a about above after again all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves please tell know let
    get got also im ive youre
    say says said talk talked talking tell told mention mentioned discuss discussed chat chatted
    的 了 是 吗 呢 吧 啊 呀 哦 嗯 么 着 和 与 及 也 都 就 还 又 在 有 这 那 个 一 我 你 他 她 它 们
    什 怎 样 哪 谁 请 把 被 给 让
    我们 你们 他们 什么 怎么 怎样 一个 这个 那个 我的 你的 是不 不是 有没 一下 请问 知道 告诉
"""

#: Query terms too common to say anything about relevance (stemmed like every token); the verbs
#: of talking say how something came up ("what did we say about the car"), not what. They stay
#: in the index, so a query of only such words still finds them, and are dropped from queries
#: that have other terms.
STOP_TERMS = frozenset(stem(word) for word in _STOP_WORDS.split())


def _strip_diacritics(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normalize(text: str) -> str:
    """NFKC-normalise and case-fold ``text`` (full-width letters become ASCII)."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")
    text = _POSSESSIVE_RE.sub("", text)
    return _INNER_APOSTROPHE_RE.sub("", text)


def _tokens(text: str) -> Iterator[tuple[str, bool]]:
    """Yield ``(token, is_cjk)`` pairs in text order."""
    for match in _RUN_RE.finditer(normalize(text)):
        run = match.group("cjk")
        if run is not None:
            for i, ch in enumerate(run):
                yield ch, True
                if i + 1 < len(run):
                    yield run[i : i + 2], True
        else:
            yield stem(_strip_diacritics(match.group("word"))), False


def tokens(text: str) -> list[str]:
    """Segment ``text`` into index tokens (with repeats, in order).

    Args:
        text: Any text.

    Returns:
        Latin words (normalised, stemmed) and CJK characters and bigrams.
    """
    return [token for token, _ in _tokens(text)]


def index_text(text: str) -> str:
    """The space-separated token string stored in the full-text index for ``text``."""
    return " ".join(tokens(text))


# A word of the original text with its inner apostrophes ("don't", "user's"), which
# ``normalize`` folds into the word; the rest as ``_RUN_RE``.
_SPAN_RE = re.compile(
    rf"(?P<cjk>[{_CJK_CLASS}]+)"
    rf"|(?P<word>(?:(?![{_CJK_CLASS}])[^\W_])+(?:['\u2019](?:(?![{_CJK_CLASS}])[^\W_])+)*)"
)


def token_spans(text: str) -> list[tuple[str, int, int]]:
    """The tokens of ``text`` with where each stands in ``text`` itself (not its normalised form).

    The tokens are those of :func:`tokens` (a word's come from the same normalising and
    stemming), each with the ``(start, end)`` of the characters it was made from: a CJK
    character's own, a bigram's two, a word's whole word. So a match found on tokens can be
    highlighted in the text as written.

    Args:
        text: Any text.

    Returns:
        ``(token, start, end)`` in text order.
    """
    spans: list[tuple[str, int, int]] = []
    for match in _SPAN_RE.finditer(text):
        start, end = match.span()
        run = match.group("cjk")
        if run is not None:
            for i, ch in enumerate(run):
                folded = normalize(ch)
                spans.append((folded, start + i, start + i + 1))
                if i + 1 < len(run):
                    spans.append((folded + normalize(run[i + 1]), start + i, start + i + 2))
        else:
            spans.extend((token, start, end) for token in tokens(match.group(0)))
    return spans


_LATIN_CHAR_RE = re.compile(rf"(?![{_CJK_CLASS}])[^\W_]")
# A word from where it starts, inner apostrophes and all (the "word" of ``_SPAN_RE``).
_WORD_AT_RE = re.compile(
    rf"(?:(?![{_CJK_CLASS}])[^\W_])+(?:['\u2019](?:(?![{_CJK_CLASS}])[^\W_])+)*"
)


@functools.lru_cache(maxsize=256)
def _letters(key: str) -> re.Pattern[str]:
    # Only the letters, in any case: compiling the CJK class into each took ~40 ms.
    return re.compile(re.escape(key), re.IGNORECASE)


def phrase_spans(
    text: str, phrase: Sequence[str], *, prefix: bool = False
) -> list[tuple[int, int]]:
    """Where a phrase of :func:`query_phrases` stands in ``text``, as ``(start, end)`` spans.

    What :func:`token_spans` would find (the phrase's tokens one after another), without
    segmenting the whole text: a CJK phrase is its run of characters, found as a substring; a
    word is found by the letters it shares with its stem, and only the words found so are
    segmented (a long message is scanned at the speed of a regular expression). A text written
    in compatibility forms (half-width katakana, full-width Latin) is not found here: a caller
    that must find every match falls back to :func:`token_spans`.

    Args:
        text: Any text.
        phrase: Index tokens that stand together (a CJK run's, or one word's).
        prefix: The (last) token may begin a longer word.

    Returns:
        Spans in text order (they may overlap for a CJK run that repeats).
    """
    if not phrase:
        return []
    if _CJK_CHAR_RE.match(phrase[0]):
        run = "".join(phrase[0::2])
        spans = []
        start = text.find(run)
        while start >= 0:
            spans.append((start, start + len(run)))
            start = text.find(run, start + 1)
        return spans
    token = phrase[-1]
    # A stem keeps the word's beginning but may change its last letter ("worry" → "worri").
    key = token[:-1] if len(token) > 3 else token
    spans = []
    for match in _letters(key).finditer(text):
        start = match.start()
        if start and _LATIN_CHAR_RE.match(text, start - 1):
            continue  # inside a longer word
        word = _WORD_AT_RE.match(text, start)
        if word is None:
            continue
        found = tokens(word.group(0))
        if any(t == token or (prefix and t.startswith(token)) for t in found):
            spans.append(word.span())
    return spans


def query_phrases(text: str) -> list[tuple[str, ...]]:
    """A search query as phrases of index tokens: each CJK run one phrase, each word another.

    A CJK run's tokens (characters and bigrams, in order) stand next to each other in the index
    exactly where the run occurs in a text, so searching the run as a phrase finds it as a
    substring, also in the middle of a sentence ("咖啡机" in "我的咖啡机坏了"). Words are
    phrases of one token; stop words are dropped when the query has other phrases (as
    :func:`query_terms` drops them).

    Args:
        text: The query as typed.

    Returns:
        Distinct phrases in text order; empty when the text has no letters, digits or CJK.
    """
    phrases: dict[tuple[str, ...], None] = {}
    for match in _RUN_RE.finditer(normalize(text)):
        run = match.group("cjk")
        if run is not None:
            phrases.setdefault(tuple(tokens(run)), None)
        else:
            phrases.setdefault((stem(_strip_diacritics(match.group("word"))),), None)
    found = list(phrases)
    content = [p for p in found if len(p) > 1 or p[0] not in STOP_TERMS]
    return content or found


def query_terms(text: str, limit: int = 128) -> list[str]:
    """The distinct terms a query is searched with (OR-ed), stop terms dropped.

    Stop terms are kept when the query has nothing else (a query "我" or "the" still matches).

    Args:
        text: The query as typed.
        limit: At most this many terms are kept (in text order), so a pasted essay stays fast.

    Returns:
        Distinct terms in text order; empty when the text has no letters, digits or CJK.
    """
    seen: dict[str, None] = {}
    for token in tokens(text):
        seen.setdefault(token, None)
    all_terms = list(seen)
    content = [t for t in all_terms if t not in STOP_TERMS]
    return (content or all_terms)[:limit]


def query_units(text: str) -> float:
    """A language-neutral length of ``text``: Latin words plus CJK characters / 2.

    A Chinese word is about two characters, so "上次我们聊到哪" (7 characters) and "where did we
    leave off" (5 words) come out about the same. Used to tell short factual queries from long
    dialogue-style ones.
    """
    cjk = len(_CJK_CHAR_RE.findall(text))
    words = sum(1 for token, is_cjk in _tokens(text) if not is_cjk)
    return words + cjk / 2.0


_LATIN_WORD_RE = re.compile(rf"(?:(?![{_CJK_CLASS}])[^\W_])+")


def rough_units(text: str) -> float:
    """:func:`query_units` without stemming, for many texts per search (an entry's length)."""
    return len(_LATIN_WORD_RE.findall(text)) + len(_CJK_CHAR_RE.findall(text)) / 2.0


def duplicate_key(text: str) -> str:
    """A key equal for texts that differ only in case, width, spacing or punctuation.

    Args:
        text: A memory's content.

    Returns:
        A hex digest of the normalised text (stored, so duplicates are found by index).
    """
    folded = _KEY_DROP_RE.sub("", normalize(text))
    return hashlib.blake2b(folded.encode("utf-8"), digest_size=16).hexdigest()


_NAME_RE = re.compile(
    r"\d"  # numbers, dates, prices
    r"|(?<![.!?。！？]\s)(?<!^)\b(?!I\b)[A-Z][\w'-]*"  # a capitalised word inside a sentence
    r"|[A-Za-z]{2,}(?=[^A-Za-z]*[\u3400-\u9fff])|(?<=[\u3400-\u9fff])\s*[A-Za-z]{2,}"
    r"|[《「『“\"][^》」』”\"]+[》」』”\"]"  # titles and quoted words
)


def names_or_numbers(text: str) -> bool:
    """Whether ``text`` contains a name, a number, a title or a Latin word amid Chinese.

    Such words are matched exactly by the keyword index and weakly by sentence embedders (a
    name says little to a meaning model), so search leans on keywords for these queries.

    Args:
        text: A query.

    Returns:
        ``True`` for "What camera did I buy from Fujifilm?", "我们家的手机套餐是 KPN 的吗",
        "How much is 6,000 euros?"; ``False`` for "How do I like my coffee?".
    """
    return _NAME_RE.search(unicodedata.normalize("NFKC", text).strip()) is not None


_PROPER_RE = re.compile(
    r"(?<![.!?。！？]\s)(?<!^)\b(?!I\b)[A-Z][\w'-]*"  # a capitalised word inside a sentence
    r"|[A-Za-z]{2,}(?=[^A-Za-z]*[\u3400-\u9fff])|(?<=[\u3400-\u9fff])\s*[A-Za-z]{2,}"
)


def name_terms(text: str) -> list[str]:
    """The index terms of the names in ``text``: capitalised words inside a sentence, Latin words amid Chinese.

    The relevance gate counts a shared name however often it occurs in the store (in a
    dialogue store the two speakers' names are in every turn).

    Args:
        text: A query.

    Returns:
        The names' tokens (normalised and stemmed like every token), stop terms left out.
    """
    found: list[str] = []
    for match in _PROPER_RE.finditer(unicodedata.normalize("NFKC", text).strip()):
        for token in tokens(match.group(0)):
            if token not in STOP_TERMS and token not in found:
                found.append(token)
    return found

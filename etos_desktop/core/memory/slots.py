"""Change cues and the same-slot rule: when a newer statement replaces an older one.

A *slot* is what a statement is about — subject and attribute ("my JS package manager", "what I
drink in the morning"). "I no longer use pnpm, I switched to bun" fills the same slot as "I use
pnpm for JavaScript projects" and says the old value stopped holding. DESIGN §5.1 (amended by
issue 9): newer-wins is decided

* at write time — a new memory carrying a change cue supersedes the most similar active memory
  of the same kind when the two are about the same slot (``MemoryEngine.save``);
* at query time — between two *active* statements of one slot that a query returned, the newer
  one (carrying a cue) ranks first (``search.rank``).

Both use :func:`same_slot` and the cue lists below; nothing else decides it. The per-text parts
are cached: search checks the same few dozen results pairwise on every query. Without a cue nothing
is superseded: "I use pnpm" and "I use bun for scripts" may both be true.

The rule (measured with the built-in USE, see ``tuning.DEFAULTS``): the newer text carries a
change cue; the two share at least one of the subject's key terms (content words, or CJK
bigrams, that are not cue or filler words); and their whole-text cosine reaches the embedder's
threshold. A reversal ("I use pnpm…" / "I no longer use pnpm…, I switched to bun") is 0.6–0.75
with USE, two different preferences with a cue ("I use pnpm for JavaScript projects" / "I
switched to Poetry for Python projects") 0.43–0.45, unrelated ones below 0.3.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from etos_desktop.core.text.segmentation import STOP_TERMS, tokens

#: English change cues. "now" counts only before a verb-like word ("now drinks", "now works"),
#: not as a filler ("now I need…", "right now").
_EN_CUES = (
    r"\bno longer\b",
    r"\bnot\b[^.!?]{0,40}\bany ?more\b",
    r"\b(don't|doesn't|didn't|do not|does not|won't|never)\b[^.!?]{0,40}\bany ?more\b",
    r"\bswitch(ed|ing)? (to|from|over)\b",
    r"\bchanged (to|from|my|our|the)\b",
    r"\b(gave|given|giving) up\b",
    r"\b(stopped|quit) (using|drinking|eating|going|running|doing|taking|working|reading)\b",
    r"\binstead of\b",
    r"\b(cancelled|canceled) (the|my|our)\b",
    r"\bfrom now on\b",
    r"\bmoved (to|from|out|house)\b",
    r"\bfinished\b[^.!?]{0,60}\b(started|starting)\b",
    r"(?<!right )(?<!just )\bnow (\w+s|uses?|prefers?|likes?|lives?|works?|drinks?|eats?"
    r"|trains?|runs?|reads?|goes|go|wants?|has|have|takes?)\b",
    r"\b(my|the user's|our) new (boss|manager|lead|team lead|job|address|doctor|phone|car)\b",
)
#: Chinese change cues.
_ZH_CUES = (
    r"不再",
    r"已经不",
    r"改(用|喝|吃|成|为|去|在|到|走|买|坐|穿|读|看|听|练)",
    r"换(成|了|到)",
    r"现在[^。！？；\n]{0,20}了",
    r"现在(每天|都|更|只|主要|开始|住|用|喝|吃|去|改|换)",
    r"不[^。！？；，,\n]{1,8}了",
    r"(搬|转)到",
    r"放弃了?",
    r"取消了",
    r"改变了",
    r"离职",
    r"以后(不|都|就|改)",
    r"(新|新的)(上司|领导|老板|工作|住址|地址|医生|手机|车)",
)
_CUE_RE = re.compile("|".join(f"(?:{p})" for p in (*_EN_CUES, *_ZH_CUES)), re.IGNORECASE)

#: Words of cues and of how preferences are stated; they say *that* something changed, not
#: *what* the statement is about, so they never count as a shared key term.
_FILLER = frozenset(
    tokens(
        """
        no longer not any anymore more don't doesn't switch switched switching change changed
        from over give gave given up stop stopped quit instead cancel cancelled canceled now
        new moved move finished started start use used using like prefer want user the user's
        usually always every day really these days currently still went back also
        """
    )
)
#: The same for Chinese, removed from the text before it is cut into bigrams (so that no
#: bigram straddles one: "用户已经" must not yield "户已").
_ZH_FILLER_RE = re.compile(
    "用户|已经|现在|不再|改用|改成|改为|换成|以后|以前|之前|喜欢|一般|平时|每天|开始|不用|主要"
)


@functools.lru_cache(maxsize=4096)
def change_cue(text: str) -> str | None:
    """The change cue ``text`` carries ("no longer", "switched to", "不再", "现在…了"…), if any.

    Args:
        text: A memory's content.

    Returns:
        The matched words, or ``None`` when the text states no change.
    """
    normalized = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    match = _CUE_RE.search(normalized)
    return None if match is None else match.group(0)


@functools.lru_cache(maxsize=4096)
def key_terms(text: str) -> frozenset[str]:
    """What a statement is about, as index terms: content words and CJK bigrams.

    Single CJK characters are left out (one character says too little: 我, 喝), and so are stop
    terms and the words cues and preferences are phrased with.

    Args:
        text: A memory's content.

    Returns:
        The key terms (stemmed like the keyword index).
    """
    out = set()
    for token in tokens(_ZH_FILLER_RE.sub(" ", text)):
        if token in STOP_TERMS or token in _FILLER:
            continue
        if not token.isascii() and (len(token) == 1 or any(ch in STOP_TERMS for ch in token)):
            continue
        if token.isascii() and (len(token) < 2 or token.isdigit()):
            continue
        out.add(token)
    return frozenset(out)


@dataclass(frozen=True)
class SlotMatch:
    """Why two statements were found to be about the same slot (for history and the trace).

    Attributes:
        cue: The change cue in the newer statement.
        shared: The key terms both share.
        similarity: Their whole-text cosine.
    """

    cue: str
    shared: frozenset[str]
    similarity: float


#: Two statements that share no key term (always so across languages) need this much more
#: cosine than the threshold to be about one slot: meaning alone decides then (issue 18).
MEANING_MARGIN = 0.15

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LETTER_RE = re.compile(r"[^\W\d_]")


@functools.lru_cache(maxsize=4096)
def is_cjk(text: str) -> bool:
    """Whether ``text`` is mostly CJK (Chinese, Japanese, Korean) by its letters."""
    letters = len(_LETTER_RE.findall(text))
    return letters > 0 and len(_CJK_RE.findall(text)) / letters >= 0.3


def same_slot(newer: str, older: str, similarity: float, threshold: float) -> SlotMatch | None:
    """Whether ``newer`` states a change of what ``older`` says (the same-slot rule).

    Args:
        newer: The newer statement's text.
        older: The older statement's text.
        similarity: Their whole-text cosine with the active embedder.
        threshold: The embedder's same-slot cosine (``Tuning.same_slot_similarity`` at write
            time, ``Tuning.same_slot_query_similarity`` between two results of one query).

    Meaning decides (issue 18): two statements that share no key term — in different
    languages ("Please answer me in English." / "以后都用中文回答我。", cosine 0.59 with USE) they
    cannot — are about one slot when their cosine is ``MEANING_MARGIN`` above the threshold
    ("…given up caffeine…" / "用户不喝酒…" are not).

    Returns:
        The match (cue, shared key terms, cosine), or ``None`` when ``newer`` has no change cue
        or is not similar enough to ``older``.
    """
    if similarity < threshold:
        return None
    cue = change_cue(newer)
    if cue is None:
        return None
    shared = key_terms(newer) & key_terms(older)
    if not shared and similarity < threshold + MEANING_MARGIN:
        return None
    return SlotMatch(cue=cue, shared=shared, similarity=similarity)

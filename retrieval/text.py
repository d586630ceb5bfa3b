"""The BM25 tokenizers, registered by versioned name (`words.v2`, the default; `words.v1`, the
evaluation's full-text baseline's).

A saved index records the tokenizer's name; change what a tokenizer does only under a
new name, or indexes built with the old behaviour would silently stop matching queries.

`words.v1`:
* Unicode NFKC, lowercase; word tokens are runs of letters/digits, joined by hyphens or
  apostrophes ("cross-examination", "accused's", "304-b").
* A possessive "'s" is dropped, other apostrophes removed ("didn't" -> "didnt").
* Section numbers stay one token: "304-B" and "304B" both give "304b" (digits, then a
  1-2 letter suffix); "302" stays "302". Any other hyphenated word is split into its
  parts ("cross-examination" -> "cross", "examination"; "2019-20" -> "2019", "20").
* English stopwords (built-in list below, no data download) and one-letter words are dropped.
* Words of letters only are stemmed with the Snowball English (Porter2) stemmer from
  `nltk.stem` (no data files needed); tokens with digits are kept as they are.

`words.v2` (the default since 2026-12-06): `words.v1` with the Snowball 2.2.0 English stemmer
in C (PyStemmer 2.2.0.3, pinned: PyStemmer 3 carries Snowball 3, whose English stemmer gives other
stems). It loads in a millisecond where importing nltk took 1.5 s warm and 2.7 s from a cold page
cache (the larger part of a first search at 1e6) and stems about 5x faster. Of the 61,489 words of
letters in the AILA judgments, statutes and queries it stems 5 differently from nltk, whose
Porter2 keeps an -ize/-ate that Snowball's removes ("realization": "realiz", nltk "realize";
"irrationality": "irrat", nltk "irrate"): docs/experiments/2026-12-06-stemmer.md. An index built
with `words.v1` before then is refused under a spec that names no tokenizer (the default's
differs): `aqgr index` rebuilds it with `words.v2`. `words.v1` stays for what names it: the
`bm25-fulltext` baseline (eval/systems/fulltext.py, its expected scores measured with it) and the
benchmarks that compare BM25 engines on its tokens.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable
from typing import Protocol

from aqgr.foundation.errors import MissingDependencyError
from aqgr.foundation.registry import Registry


class Tokenizer(Protocol):
    name: str

    def __call__(self, text: str) -> list[str]: ...


tokenizers: Registry[Tokenizer] = Registry("tokenizer")

# A general English stopword list (articles, pronouns, auxiliaries, prepositions,
# conjunctions). Legal words ("section", "act", "court") are deliberately NOT here.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did didnt do does doesnt doing dont down
    during each few for from further had hadnt has hasnt have havent having he her here
    hers herself him himself his how i if in into is isnt it its itself just me might more
    most must my myself no nor not now of off on once only or other ought our ours
    ourselves out over own same shall shant she should shouldnt so some such than that the
    their theirs them themselves then there these they this those through to too under
    until up upon very was wasnt we were werent what when where which while who whom why
    will with within without wont would wouldnt you your yours yourself yourselves also
    thereof therein thereby hereby herein whereas whether however yet per via etc ie eg
    """.split()
)

_TOKEN = re.compile(r"[^\W_]+(?:[-'\u2019][^\W_]+)*")
# _TOKEN on ASCII text (lowercased): the same matches, without Unicode class look-ups
_ASCII_TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_JOINERS = frozenset("-'\u2019")  # the characters a token may hold inside it
_POSSESSIVE = re.compile(r"['\u2019]s$")


def _section_join(parts: list[str]) -> str | None:
    """'304'+'b' -> '304b' (a section number with a letter suffix); None if not that shape."""
    if len(parts) == 2 and parts[0].isdigit() and parts[1].isalpha() and len(parts[1]) <= 2:
        return parts[0] + parts[1]
    return None


def _nltk_stemmer() -> Callable[[str], str]:
    try:
        from nltk.stem.snowball import EnglishStemmer
    except ImportError:  # pragma: no cover - nltk is a core dependency
        raise MissingDependencyError("nltk", None) from None
    return EnglishStemmer(ignore_stopwords=False).stem


def _snowball_stemmer() -> Callable[[str], str]:
    """PyStemmer's English stemmer, one per thread: a stemmer keeps state between calls and its
    documentation asks that one thread use it at a time (a search tokenises on several)."""
    try:
        import Stemmer
    except ImportError:  # pragma: no cover - PyStemmer is a core dependency
        raise MissingDependencyError("PyStemmer", None) from None
    local = threading.local()

    def stem(word: str) -> str:
        stemmer = getattr(local, "stemmer", None)
        if stemmer is None:
            stemmer = local.stemmer = Stemmer.Stemmer("english")
        return stemmer.stemWord(word)

    return stem


class WordTokenizer:
    """`words.v1` and `words.v2` (see the module docstring), which differ only in `load_stemmer`.
    Deterministic.

    What a raw word (a match of `_TOKEN`) becomes is memoised per instance: a judgment's
    words repeat, so most of a long text is dictionary look-ups. The memo holds at most
    `MEMO_WORDS` distinct words and is emptied when full, so it cannot grow with an archive.
    """

    MEMO_WORDS = 500_000

    def __init__(self, name: str, load_stemmer: Callable[[], Callable[[str], str]]) -> None:
        self.name = name
        self._load_stemmer = load_stemmer  # called at the first word to stem, not before
        self._stem: Callable[[str], str] | None = None
        self._memo: dict[str, tuple[str, ...]] = {}

    @staticmethod
    def _matches(text: str) -> list[str]:
        if text.isascii():  # NFKC leaves ASCII as it is
            return _ASCII_TOKEN.findall(text.lower())
        return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())

    @staticmethod
    def _split(raw: str) -> list[str]:
        """One raw word as words: possessive dropped, apostrophes removed, hyphens split."""
        if not _JOINERS.intersection(raw):  # most words: nothing to strip or split
            return [raw]
        raw = _POSSESSIVE.sub("", raw).replace("'", "").replace("\u2019", "")
        parts = [p for p in raw.split("-") if p]
        joined = _section_join(parts)
        return [joined] if joined else parts

    def _tokens_of(self, raw: str) -> tuple[str, ...]:
        """The tokens of one raw word: stopwords and one-letter words dropped, stemmed."""
        tokens: list[str] = []
        for word in self._split(raw):
            if word in STOPWORDS or (len(word) == 1 and word.isalpha()):
                continue
            if word.isalpha():
                if self._stem is None:
                    self._stem = self._load_stemmer()
                word = self._stem(word)
            tokens.append(word)
        return tuple(tokens)

    def words(self, text: str) -> list[str]:
        """Lowercased word tokens before stopword removal and stemming."""
        return [word for raw in self._matches(text) for word in self._split(raw)]

    def __call__(self, text: str) -> list[str]:
        memo = self._memo
        tokens: list[str] = []
        for raw in self._matches(text):
            got = memo.get(raw)
            if got is None:
                if len(memo) >= self.MEMO_WORDS:
                    memo.clear()
                got = memo[raw] = self._tokens_of(raw)
            tokens.extend(got)
        return tokens


@tokenizers.register("words.v1")
def _words_v1() -> Tokenizer:
    return WordTokenizer("words.v1", _nltk_stemmer)


@tokenizers.register("words.v2")
def _words_v2() -> Tokenizer:
    return WordTokenizer("words.v2", _snowball_stemmer)


# The placeholders of anonymised facts (AILA masks persons as P1, P2, ..., acts as
# "Act A1" and sections as "Section S"). They name no legal concept, yet as query terms
# they match every judgment that happens to contain "p1" or "a1" (measured on the
# citation benchmark: dropping them raises full-text BM25 MAP from 0.112 to 0.120).
_MASKS = re.compile(r"\b(?:Act\s+A\d+|Sections?\s+S\d*|P\d+|A\d+)\b")


def strip_masks(text: str) -> str:
    """`text` without anonymisation placeholders (P1, Act A1, Section S); other words kept."""
    return " ".join(_MASKS.sub(" ", text).split())


# Word pairs: a BM25 retriever with `ngrams=2` indexes each document's terms followed by
# every pair of adjacent terms ("anticipatori_bail", "die_declar"), and queries the same way:
# phrases weigh as phrases. Measured on the citation benchmark (full-text BM25, facts
# without placeholders): terms alone MAP 0.120, terms + pairs 0.140. "_" joins a pair:
# no term of words.v1 or words.v2 contains it, so a pair never collides with a term.
PAIR_JOIN = "_"


def with_pairs(terms: list[str], ngrams: int = 2) -> list[str]:
    """`terms` followed by each adjacent pair of them (ngrams=2); `terms` itself for ngrams=1."""
    if ngrams == 1:
        return terms
    if ngrams != 2:
        raise ValueError(f"ngrams must be 1 (terms) or 2 (terms and adjacent pairs), got {ngrams}")
    return terms + list(map(PAIR_JOIN.join, zip(terms, terms[1:])))

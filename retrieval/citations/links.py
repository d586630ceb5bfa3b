"""Finding where a judgment cites another judgment of the same archive.

Two passes, neither of which looks at document ids or file order:

1. Titles. At every "v." / "vs" / "versus" in a judgment, the normalised words before
   it must end with a judgment's appellant and the words after it must start with its
   respondent, on word boundaries (no further name word glued on either side). The
   reporter citations right after the title must fit the cited judgment's year, and
   the cited judgment may not be newer than the citing one. A title that still fits
   several judgments is dropped, never resolved by id.
2. Reporter citations. The citations printed after title matches (and any in the
   judgments' own header lines) form a table citation -> judgment, kept only where
   every observation agrees; bare citations ("1998 Indlaw SC 438 (supra)",
   "AIR 1980 SC 898") elsewhere are then resolved through that table, with the
   same date check.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from aqgr.retrieval.citations.judgments import Judgment
from aqgr.retrieval.citations.normalize import Citation, Token, citations, expand, party_variants, tokens, year_fits

_MARKER = re.compile(r"\s(?:v|vs|versus|v/s)\.?\s", re.I)
_ANY_YEAR = re.compile(r"\b((?:18|19|20)\d{2})\b")
# Capitalised words that may stand right before a cited title ("In X v. Y", "See X v. Y").
_BEFORE_OK = frozenset(
    """in see vide also cf but case decision judgment as then where following followed
relying relied per recently thus since similarly likewise further moreover this that""".split()
)
# Capitalised words that may follow a cited title (reporters, "(supra)", "etc.").
_AFTER_OK = frozenset(
    "air scc scr indlaw jt cri crl supp sc scale supra ker all bom cal mad others another etc".split()
)
LEFT_CHARS, RIGHT_CHARS = 160, 200
# Between a title and the word next to it: punctuation, or a dropped lowercase word ("and", "of").
_GAP_OK = re.compile(r"[.,;:()\[\]\"'\u2018\u2019\u201c\u201d]|\b[a-z]{2,}\b")


@dataclass(frozen=True)
class Link:
    """One citation of an archive judgment inside another."""

    citing: str
    cited: str
    how: str  # "title" or "citation"
    paragraph: int  # index into the citing judgment's paragraphs
    evidence: str  # the text that was matched
    # where the mention is in that paragraph (its source text, not the normalised one): the
    # "v." of a title or the reporter citation; the treatment engine reads the sentence there
    start: int = 0
    end: int = 0


class Forms(NamedTuple):
    """The title forms under one key, as the title pass looks them up: the (appellant words,
    respondent words) counts that occur, and the judgments of each form. A marker is checked
    against each count once (a dictionary look-up), not against each form: under a common key
    ("singh", "state") a large archive files thousands of forms."""

    lengths: tuple[tuple[int, int], ...]
    docs: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]]

    @classmethod
    def of(cls, entries: Iterable[tuple[str, tuple[str, ...], tuple[str, ...]]]) -> "Forms":
        docs: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = defaultdict(list)
        for doc_id, a, r in entries:
            docs[(a, r)].append(doc_id)
        return cls(tuple(sorted({(len(a), len(r)) for a, r in docs})), {form: tuple(ids) for form, ids in docs.items()})


class TitleForms(ABC):
    """What the title pass reads: `entries(key)`, the title forms filed under a key (last
    word of appellant, first word of respondent), and `judgments`, id -> Judgment (for
    dates). `TitleIndex` keeps them in memory; the citation store
    (retrieval/citations/store.py) reads them from SQLite."""

    judgments: Mapping[str, Judgment]

    @abstractmethod
    def entries(self, key: tuple[str, str]) -> Iterable[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        """(judgment id, appellant words, respondent words) of every title form under `key`."""

    def forms(self, key: tuple[str, str]) -> Forms:
        """The forms under `key` as `Forms` (made from `entries`; a subclass may keep them)."""
        return Forms.of(self.entries(key))

    def candidates(self, left: list[Token], right: list[Token]) -> dict[str, tuple[int, int]]:
        """Judgments whose title ends `left` and starts `right`: id -> (words left, words right)
        of the longest form that matched (of two as long, the one with more words right, so
        the answer does not depend on the order the forms are stored in)."""
        if not left or not right:
            return {}
        forms = self.forms((left[-1].word, right[0].word))
        if not forms.lengths:
            return {}
        before, after = tuple(t.word for t in left), tuple(t.word for t in right)
        hits: dict[str, tuple[int, int]] = {}
        for na, nr in forms.lengths:
            if na <= len(before) and nr <= len(after):
                for doc_id in forms.docs.get((before[-na:], after[:nr]), ()):
                    hits[doc_id] = max(hits.get(doc_id, (0, 0)), (na, nr), key=lambda n: (sum(n), n[1]))
        return hits


def title_keys(judgment: Judgment) -> set[tuple[tuple[str, str], tuple[str, ...], tuple[str, ...]]]:
    """Each form the judgment's title may be cited under: ((last appellant word, first
    respondent word), appellant words, respondent words)."""
    return {
        ((a[-1], r[0]), a, r) for a in party_variants(judgment.appellant) for r in party_variants(judgment.respondent)
    }


# Words on each side of a "v." that say which title forms a marker can match: a form
# matches only a marker whose last WATCH words before and first WATCH words after agree
# with its own (fewer where it is shorter).
WATCH = 2


def form_key(appellant: Sequence[str], respondent: Sequence[str]) -> str:
    """The key of a title form (appellant words, respondent words) among `marker_keys`."""
    return f"{' '.join(appellant[-WATCH:])}|{' '.join(respondent[:WATCH])}"


def marker_keys(left: Sequence[Token], right: Sequence[Token]) -> set[str]:
    """The `form_key` of every title form that could match at a marker with these words
    before and after it (the citation store finds the judgments to relink by them)."""
    before, after = [t.word for t in left[-WATCH:]], [t.word for t in right[:WATCH]]
    return {form_key(before[-nl:], after[:nr]) for nl in range(1, len(before) + 1) for nr in range(1, len(after) + 1)}


class TitleIndex(TitleForms):
    """The title forms of the judgments given, in memory."""

    def __init__(self, judgments: Mapping[str, Judgment]):
        self.judgments = judgments
        self.by_pair: dict[tuple[str, str], set[tuple[str, tuple, tuple]]] = defaultdict(set)
        self._forms: dict[tuple[str, str], Forms] = {}
        for doc_id, j in judgments.items():
            for key, a, r in title_keys(j):
                self.by_pair[key].add((doc_id, a, r))

    def entries(self, key: tuple[str, str]) -> Iterable[tuple[str, tuple[str, ...], tuple[str, ...]]]:
        return self.by_pair.get(key, ())

    def forms(self, key: tuple[str, str]) -> Forms:
        found = self._forms.get(key)
        if found is None:
            found = self._forms[key] = Forms.of(self.entries(key))
        return found


def not_newer(cited: Judgment, citing: Judgment) -> bool:
    """A judgment can only cite one decided on or before its own date."""
    if cited.date and citing.date:
        return cited.date <= citing.date
    if cited.year and citing.year:
        return cited.year <= citing.year
    return True


class TitlePass(NamedTuple):
    """What the title pass finds in one judgment."""

    links: list[Link]
    seen: dict[str, set[str]]  # citation key -> judgments whose title it followed
    keys: set[str]  # the marker_keys of every "v." marker, matched or not


def title_links(citing: Judgment, index: TitleForms) -> TitlePass:
    """Title matches in one judgment, the citations seen right after each (key -> docs), and
    the marker_keys of each marker (a judgment later titled under one of those may be cited here)."""
    links, seen, keys = [], defaultdict(set), set()
    for p, paragraph in enumerate(citing.paragraphs):
        text = expand(paragraph)
        markers = list(_MARKER.finditer(text))
        # the same markers in the source paragraph (expanding never makes or breaks one;
        # where the counts differ, the expanded offsets, clipped, stand in)
        source = list(_MARKER.finditer(paragraph))
        if len(source) != len(markers):
            source = markers
        for i, m in enumerate(markers):
            left_text = text[max(0, m.start() - LEFT_CHARS) : m.start()]
            right_text = text[m.end() : m.end() + RIGHT_CHARS]
            left = _strip_trailing(tokens(left_text, expanded=True))
            right = tokens(right_text, expanded=True)
            keys |= marker_keys(left, right)
            found = index.candidates(left, right)
            if not found:
                continue
            # Each candidate title may span a different number of words; check both edges.
            fits = [
                d
                for d, (na, nr) in found.items()
                if _left_edge(left_text, left, na) and _right_edge(right_text, right, nr)
            ]
            if not fits:
                continue
            longest_r = max(found[d][1] for d in fits)
            tail_from = right[longest_r - 1].end
            next_marker = markers[i + 1].start() - m.end() if i + 1 < len(markers) else RIGHT_CHARS
            window = right_text[tail_from : max(tail_from, min(next_marker, RIGHT_CHARS))]
            cites = citations(window)
            fits = [d for d in sorted(fits) if _dates_fit(index.judgments[d], citing, cites, window)]
            if len(fits) != 1 or fits[0] == citing.doc_id:
                continue
            cited = index.judgments[fits[0]]
            for c in cites:
                if year_fits(c, cited.year):
                    seen[c.key].add(cited.doc_id)
            end = m.end() + tail_from + len(window)
            at = source[i]
            links.append(
                Link(
                    citing.doc_id,
                    cited.doc_id,
                    "title",
                    p,
                    _snippet(text, m.start() - 60, end),
                    min(at.start(), len(paragraph)),
                    min(at.end(), len(paragraph)),
                )
            )
    return TitlePass(links, seen, keys)


def citation_table(judgments: Mapping[str, Judgment], seen: dict[str, set[str]]) -> dict[str, str]:
    """Citation key -> judgment, from title matches and header lines, where unambiguous."""
    table: dict[str, set[str]] = defaultdict(set)
    for key, docs in seen.items():
        table[key] |= docs
    for doc_id, j in judgments.items():
        for key in header_citations(j):
            table[key].add(doc_id)
    return {key: next(iter(docs)) for key, docs in table.items() if len(docs) == 1}


def header_citations(judgment: Judgment) -> set[str]:
    """The keys of the reporter citations in the judgment's own header that fit its year."""
    return {c.key for c in citations("\n".join(judgment.header)) if year_fits(c, judgment.year)}


def reporter_citations(citing: Judgment) -> list[tuple[int, Citation]]:
    """(paragraph index, citation) of every reporter citation in the body, in text order."""
    return [(p, c) for p, paragraph in enumerate(citing.paragraphs) for c in citations(paragraph)]


def citation_links(
    citing: Judgment,
    table: Mapping[str, str],
    judgments: Mapping[str, Judgment],
    found: list[tuple[int, Citation]] | None = None,
) -> list[Link]:
    """The body's citations that the table resolves to an older judgment; `found`: the
    judgment's `reporter_citations`, when already read."""
    links = []
    for p, c in reporter_citations(citing) if found is None else found:
        doc_id = table.get(c.key)
        if doc_id and doc_id != citing.doc_id and not_newer(judgments[doc_id], citing):
            links.append(
                Link(
                    citing.doc_id,
                    doc_id,
                    "citation",
                    p,
                    _snippet(citing.paragraphs[p], c.start - 100, c.end + 20),
                    c.start,
                    c.end,
                )
            )
    return links


def find_links(judgments: dict[str, Judgment]) -> list[Link]:
    """Every in-archive citation (title and reporter passes), one Link per mention."""
    index = TitleIndex(judgments)
    all_links, seen = [], defaultdict(set)
    for j in judgments.values():
        found = title_links(j, index)
        all_links += found.links
        for key, docs in found.seen.items():
            seen[key] |= docs
    table = citation_table(judgments, seen)
    for j in judgments.values():
        all_links += citation_links(j, table, judgments)
    return all_links


# ---------------------------------------------------------------- helpers


def _snippet(text: str, start: int, end: int) -> str:
    """text[start:end] in whole words (a word cut at either edge is left out), whitespace collapsed."""
    start, end = max(0, start), min(len(text), end)
    words = text[start:end].split()
    if words and start > 0 and not text[start - 1].isspace() and not text[start].isspace():
        words = words[1:]
    if words and end < len(text) and not text[end - 1].isspace() and not text[end].isspace():
        words = words[:-1]
    return " ".join(words)


def _strip_trailing(left: list[Token]) -> list[Token]:
    while left and left[-1].word in ("others", "another", "etc"):
        left = left[:-1]
    return left


def _left_edge(text: str, left: list[Token], n: int) -> bool:
    if len(left) <= n:
        return True
    before, first = left[-n - 1], left[-n]
    gap = text[before.end : first.start]
    return _GAP_OK.search(gap) is not None or not before.cap or before.word in _BEFORE_OK or before.word.isdigit()


def _right_edge(text: str, right: list[Token], n: int) -> bool:
    if len(right) <= n:
        return True
    last, after = right[n - 1], right[n]
    gap = text[last.end : after.start]
    return _GAP_OK.search(gap) is not None or not after.cap or after.word in _AFTER_OK or after.word.isdigit()


def _dates_fit(cited: Judgment, citing: Judgment, cites, window: str) -> bool:
    if not not_newer(cited, citing):
        return False
    exact = [c for c in cites if c.reporter == "indlaw"]
    if exact:  # Indlaw numbers carry the judgment's own year: the strongest check
        return any(year_fits(c, cited.year) for c in exact)
    if cites:
        return any(year_fits(c, cited.year) for c in cites)
    years = [int(y) for y in _ANY_YEAR.findall(window[:40])]
    return not years or cited.year is None or any(cited.year <= y <= cited.year + 1 for y in years)

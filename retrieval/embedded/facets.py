"""Filter fields of a judgment, normalised when it is indexed, and how a `Filters` request reads them.

A summary's court, date, bench, kind, statutes and final order are free text as the judgment
(or a model) wrote them. At index time `facet_terms(summary)` turns them into (field, value)
terms, stored per document n in docs.sqlite (retrieval/embedded/docstore.py, tables `facet_terms` and
`facet_dates`, indexed by field and value, and by date); a filtered search resolves its
`Filters` to the set of n holding every clause (`FacetReader.select`) and hands that set to every
retriever as the restriction it already takes, so a filter matching 50 judgments of a million
still returns up to k of them, ranked. The same terms give the facet counts of a result.

Fields (the value is the normalised form a filter is compared with, also what facets show):

  court        "Supreme Court of India", "Bombay High Court", ... (`normalise_court`: "SC",
               "Hon'ble Supreme Court", "High Court of Judicature at Bombay" are one court)
  court_level  supreme | high | district | tribunal, where the name says
  year, decade "1999", "1990s" (from the date slot; `facet_dates` holds the ISO date for ranges)
  judge        a judge's surname and each initials-and-surname form ("Sikri", "K. Sikri",
               "A. K. Sikri"); `judge_bare` the surname of a judge named without initials
               ("Sikri, J."), `judge_name` the fullest form (for facets)
  kind         the summary's judgment_kind, lower case ("criminal appeal"), and its last word
               (`kind_head`: "appeal")
  statute      the act ("IPC", "CrPC", "Constitution", "Land Acquisition Act"); `section` the
               act and section ("IPC s. 302", "Constitution art. 21"); `section_any` the
               number alone (a filter naming a section without its act)
  disposal     allowed | dismissed | partly, from the last disposal words of the final order

Old and new codes: a section filter is widened by the `equivalents` given to
`select(filters, equivalents)` (label -> equivalent labels, e.g. "IPC s. 302" -> "BNS s. 103";
the archive's correspondence tables), so a table added later narrows searches without re-indexing.

Facet counts over a search's candidates come from memory (`ShownTerms`): each document's shown
facet terms are read from docs.sqlite once (the first time it is a candidate; all of them at the
first count in an archive of up to READ_ALL_UP_TO), then held as term numbers. A search counts its
~3,000 (AILA) to ~10,000 (1e6) candidates' ~11 terms each. Read from SQLite and counted with a
Counter on every search, that was ~10 ms of interpreter time on AILA, beside the explanation, which
needs the same lock. Held here, a count is one numpy gather and a `bincount`. A table serves one
committed generation (a FacetReader's), so nothing it holds goes stale. Memory: a row of ROW_WIDTH
int32 per document (64 MB at 1e6, touched only as documents are read; zero pages until then), the
terms beyond it in a dict, and the distinct terms once.

The facets read the doc store (embedded/docstore.py `DocStore`) through `FacetRows`, what they
need of it; the store imports from here only the counted fields and the separators of its
`facet_shown` rows.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..types import FIELD_SEP, Where
from .restriction import date_number

if TYPE_CHECKING:
    from aqgr.schemas.filters import Filters
    from aqgr.schemas.summary import StructuredSummary

# Bump when the normalisation changes: an index recording another version is refused for
# filtered searches (re-run `aqgr index`, which rebuilds it).
FACETS_VERSION = 1

# Fields a result's facets count (stored field -> facet name).
FACET_FIELDS = {
    "court": "court",
    "year": "year",
    "decade": "decade",
    "statute": "statute",
    "section": "section",
    "judge_name": "judge",
    "kind": "kind",
    "disposal": "disposal",
}
FACETS_SHOWN = 20  # values per facet in a result, most frequent first

# --- courts ------------------------------------------------------------------------------

SUPREME_COURT = "Supreme Court of India"
_SUPREME_ALIASES = {
    "sc",
    "sci",
    "supreme court",
    "supreme court of india",
    "apex court",
    "sc of india",
    "indian supreme court",
    "supreme court india",
}
_HONORIFIC_WORDS = r"\b(?:in the|the|hon'?ble|honourable|honorable)\b"
_PLACE_ALIASES = {
    "judicature at bombay": "bombay",
    "judicature at madras": "madras",
    "judicature at allahabad": "allahabad",
    "punjab & haryana": "punjab and haryana",
    "p&h": "punjab and haryana",
    "p & h": "punjab and haryana",
}


def _clean(text: str) -> str:
    text = text.replace("\u2019", "'").lower()
    text = re.sub(_HONORIFIC_WORDS, " ", text)
    text = re.sub(r"[^\w&' ]+", " ", text)
    return " ".join(text.replace("'", "").split())


def _title(words: str) -> str:
    small = {"of", "and", "at", "for", "the", "in", "on"}
    return " ".join(
        w if w in small and i else (w.upper() if len(w) <= 3 and w.isupper() else w.capitalize())
        for i, w in enumerate(words.split())
    )


def normalise_court(raw: str | None) -> tuple[str, str | None] | None:
    """(canonical court, level or None) of a court as written; None for no court."""
    if not raw or not raw.strip():
        return None
    s = _clean(raw)
    if not s:
        return None
    if s in _SUPREME_ALIASES or re.fullmatch(r"supreme court(?: of)? india", s):
        return SUPREME_COURT, "supreme"
    place = None
    for pattern in (
        r"^high court(?: of judicature)?(?: of| at| for)? (.+)$",
        r"^(.+?) high court(?: bench)?(?: at .+)?$",
        r"^(.+?) hc$",
    ):
        found = re.match(pattern, s)
        if found:
            place = found[1]
            break
    if place:
        place = _PLACE_ALIASES.get(place, place).replace("&", "and")
        return f"{_title(place)} High Court", "high"
    if re.search(r"\btribunal\b|\bcommission\b", s):
        return _title(s), "tribunal"
    if re.search(r"\b(district|sessions|magistrate|civil judge|munsif|family court)\b", s):
        return _title(s), "district"
    return _title(s), None


# --- judges --------------------------------------------------------------------------------

_HONORIFICS = {
    "honble",
    "hon",
    "honourable",
    "honorable",
    "mr",
    "mrs",
    "ms",
    "miss",
    "justice",
    "justices",
    "chief",
    "cj",
    "cji",
    "dr",
    "shri",
    "sri",
    "smt",
    "kumari",
    "the",
    "judge",
    "acting",
    "retd",
    "lord",
    "lordship",
    "mrjustice",
    "jj",
}


@dataclass(frozen=True)
class JudgeName:
    """A judge's name reduced to initials and surname ('A. K. Sikri')."""

    initials: tuple[str, ...]
    surname: str

    @property
    def full(self) -> str:
        return " ".join([f"{i}." for i in self.initials] + [self.surname])


def judge_names(raw: str | None) -> list[JudgeName]:
    """The judges named in one bench entry ('Hon'ble Mr. Justice A.K. Sikri', 'Sikri, J.',
    'A.K. Sikri and Ashok Bhushan, JJ.')."""
    if not raw:
        return []
    text = raw.replace("\u2019", "'").replace("'", "")
    out = []
    for part in re.split(r"\band\b|&|;|\n", text):
        # 'Sikri, J.' : a name then a trailing honorific after the comma
        pieces = [p for p in part.split(",") if p.strip()]
        tokens: list[str] = []
        for piece in pieces:
            words = re.findall(r"[A-Za-z]+", piece)
            if tokens and all(w.lower() in _HONORIFICS or w.lower() == "j" for w in words):
                continue  # ', J.' / ', JJ.' / ', CJI'
            tokens += words
        if tokens and tokens[-1].lower() in ("j", "jj") and len(tokens) > 1 and len(tokens[-2]) > 1:
            tokens = tokens[:-1]  # 'A. K. Sikri J.'
        tokens = [t for t in tokens if t.lower() not in _HONORIFICS]
        words = [t for t in tokens if len(t) > 1]
        if not words:
            continue
        surname = words[-1]
        before = tokens[: len(tokens) - 1 - tokens[::-1].index(surname)]
        initials = [t[0].upper() for t in before]  # 'Arjan Kumar Sikri' is 'A. K. Sikri'
        out.append(JudgeName(tuple(initials), surname.capitalize()))
    return out


def judge_terms(name: JudgeName) -> list[tuple[str, str]]:
    terms = [("judge", name.surname)]
    for start in range(len(name.initials)):
        terms.append(("judge", JudgeName(name.initials[start:], name.surname).full))
    if not name.initials:
        terms.append(("judge_bare", name.surname))
    terms.append(("judge_name", name.full))
    return terms


def judge_clause(query: str) -> list[tuple[str, str]]:
    """The terms any of which a judgment must hold to match a judge filter: with initials, that
    form or the surname of a judge named without initials; a surname alone, that surname."""
    names = judge_names(query)
    if not names:
        return [("judge", _title(_clean(query)))]
    name = names[0]
    if name.initials:
        return [("judge", name.full), ("judge_bare", name.surname)]
    return [("judge", name.surname)]


# --- statutes ------------------------------------------------------------------------------

_ACTS = (
    (r"\b(?:indian\s+penal\s+code|penal\s+code|i\.?\s?p\.?\s?c\b\.?)", "IPC"),
    (r"\b(?:code\s+of\s+criminal\s+procedure|criminal\s+procedure\s+code|cr\.?\s?p\.?\s?c\b\.?)", "CrPC"),
    (r"\b(?:code\s+of\s+civil\s+procedure|civil\s+procedure\s+code|c\.?\s?p\.?\s?c\b\.?)", "CPC"),
    (r"\b(?:bharatiya\s+nyaya\s+sanhita|b\.?\s?n\.?\s?s\b\.?)", "BNS"),
    (r"\b(?:bharatiya\s+nagarik\s+suraksha\s+sanhita|b\.?\s?n\.?\s?s\.?\s?s\b\.?)", "BNSS"),
    (r"\b(?:bharatiya\s+sakshya\s+adhiniyam|b\.?\s?s\.?\s?a\b\.?)", "BSA"),
    (r"\b(?:indian\s+)?evidence\s+act\b", "Evidence Act"),
    (r"\bconstitution\b", "Constitution"),
)
_NAMED_ACT = re.compile(
    r"((?:[A-Z][\w()&.'/-]*|of|and|the|for|&)(?:\s+(?:[A-Z][\w()&.'/-]*|of|and|the|for|&|\([^)]*\)))*?\s+"
    r"(?:Act|Code|Rules|Regulations|Ordinance))\b"
)
_SECTION_WORD = re.compile(r"\b(?:sections?|secs?\.?|ss?\.|u/ss?\.?|u/s|articles?|arts?\.?)\s*", re.I)
_NUMBERS = re.compile(r"(?:\d+[A-Z]{0,2}(?:\s*\([^)]*\))*\s*(?:,|/|\band\b|&|\bor\b|-|\bto\b)?\s*)+")
_NUMBER = re.compile(r"\d+[A-Z]{0,2}")

# A section filter may be widened by a correspondence table: `equivalents(label)` gives the
# labels of the same provision in other codes ('IPC s. 302' -> ['BNS s. 103']).
Equivalents = Callable[[str], Iterable[str]]


def equivalent_sections(label: str, equivalents: Equivalents | None = None) -> list[str]:
    found = [label]
    if equivalents is not None:
        found += [e for e in dict.fromkeys(equivalents(label)) if e not in found]
    return found


def act_of(text: str) -> str | None:
    for pattern, label in _ACTS:
        if re.search(pattern, text, re.I):
            return label
    found = _NAMED_ACT.search(text)
    return canonical_act(found[1]) if found else None


def canonical_act(name: str) -> str:
    """An act's name as stored: no leading 'the' / 'of', no year, words capitalised (acronyms kept)."""
    words = re.sub(r",?\s*\b\d{4}\b", "", name).replace(",", " ").split()
    while words and words[0].lower() in ("the", "of", "and", "for", "&"):
        words = words[1:]
    small = {"of", "and", "the", "for", "in", "on", "to"}
    return " ".join(
        w if w.isupper() else w.lower() if w.lower() in small and i else w.capitalize() for i, w in enumerate(words)
    )


def statute_refs(text: str) -> tuple[str | None, list[str], bool]:
    """(act or None, section numbers, articles?) of one statute reference as written."""
    act = act_of(text)
    numbers: list[str] = []
    article = False
    for word in _SECTION_WORD.finditer(text):
        article = article or word[0].lower().startswith("art")
        found = _NUMBERS.match(text, word.end())
        if found:
            numbers += _NUMBER.findall(re.sub(r"\([^)]*\)", "", found[0]))
    if act is None and article:
        act = "Constitution"
    return act, list(dict.fromkeys(numbers)), article


def section_label(act: str, number: str, article: bool = False) -> str:
    return f"{act} {'art.' if article or act == 'Constitution' else 's.'} {number}"


def statute_terms(text: str) -> list[tuple[str, str]]:
    act, numbers, article = statute_refs(text)
    terms = [("section_any", n) for n in numbers]
    if act:
        terms.append(("statute", act))
        terms += [("section", section_label(act, n, article)) for n in numbers]
    return terms


def statute_clause(query: str, equivalents: Equivalents | None = None) -> list[tuple[str, str]]:
    act, numbers, article = statute_refs(query)
    if act and numbers:
        return [
            ("section", label)
            for n in numbers
            for label in equivalent_sections(section_label(act, n, article), equivalents)
        ]
    if numbers:
        return [("section_any", n) for n in numbers]
    return [("statute", act or canonical_act(query))]


# --- dates, kinds, disposal ------------------------------------------------------------------

_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}


def parse_decided(raw: str | None) -> date | None:
    """The date of a judgment as written ('26 September 1973', 'September 26, 1973', '26.09.1973',
    '1973-09-26'), or None when it cannot be read."""
    if not raw:
        return None
    s = raw.lower()
    tries = []
    m = re.search(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b", s)
    if m:
        tries.append((int(m[1]), int(m[2]), int(m[3])))
    m = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+day\s+of)?[\s,.-]+([a-z]{3,9})\.?[\s,.-]+(\d{4})\b", s)
    if m and m[2][:3] in _MONTHS:
        tries.append((int(m[3]), _MONTHS[m[2][:3]], int(m[1])))
    m = re.search(r"\b([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", s)
    if m and m[1][:3] in _MONTHS:
        tries.append((int(m[3]), _MONTHS[m[1][:3]], int(m[2])))
    m = re.search(r"\b(\d{1,2})[./-](\d{1,2})[./-](\d{4})\b", s)
    if m:
        tries.append((int(m[3]), int(m[2]), int(m[1])))
    for year, month, day in tries:
        try:
            return date(year, month, day)
        except ValueError:
            continue
    return None


def normalise_kind(raw: str | None) -> str | None:
    if not raw:
        return None
    kind = " ".join(re.sub(r"[^\w ]+", " ", raw.lower()).split())
    return kind or None


_DISPOSAL = re.compile(
    r"\b(?:(?:partly|partially|in\s+part)\s+allowed|allowed\s+(?:in\s+part|partly|partially)|allowed|dismissed|rejected)\b",
    re.I,
)


def disposal_of(final_order: str | None) -> str | None:
    """allowed | dismissed | partly: the last disposal words of the final order ('... Appeal dismissed.')."""
    found = _DISPOSAL.findall(final_order or "")
    if not found:
        return None
    last = found[-1].lower()
    if "part" in last:
        return "partly"
    return "dismissed" if last in ("dismissed", "rejected") else "allowed"


# --- one summary's terms ---------------------------------------------------------------------


@dataclass(frozen=True)
class DocFacets:
    """What docs.sqlite stores for one document: its (field, value) terms and its date."""

    terms: tuple[tuple[str, str], ...]
    decided: str | None  # ISO date


def facets_of(summary: StructuredSummary) -> DocFacets:
    terms: list[tuple[str, str]] = []
    court = normalise_court(summary.court)
    if court:
        terms.append(("court", court[0]))
        if court[1]:
            terms.append(("court_level", court[1]))
    decided = parse_decided(summary.date)
    if decided:
        terms += [("year", str(decided.year)), ("decade", f"{decided.year // 10 * 10}s")]
    for entry in summary.bench:
        for name in judge_names(entry):
            terms += judge_terms(name)
    kind = normalise_kind(summary.judgment_kind)
    if kind:
        terms.append(("kind", kind))
        terms.append(("kind_head", kind.split()[-1]))
    for ref in summary.statutes:
        terms += statute_terms(ref.name)
    disposal = disposal_of(summary.final_judgment)
    if disposal:
        terms.append(("disposal", disposal))
    return DocFacets(tuple(dict.fromkeys(terms)), decided.isoformat() if decided else None)


# --- reading: filters to documents, and facet counts ------------------------------------------


# field of the request -> (label in notes, clause maker); a clause is any-of (field, value) terms
def _clauses(filters: Filters, equivalents: Equivalents | None = None) -> list[tuple[str, str, list[tuple[str, str]]]]:
    out = []
    if filters.court:
        court = normalise_court(filters.court)
        out.append(("court", filters.court, [("court", court[0] if court else filters.court)]))
    if filters.court_level:
        out.append(("court_level", filters.court_level, [("court_level", filters.court_level)]))
    if filters.judge:
        out.append(("judge", filters.judge, judge_clause(filters.judge)))
    if filters.kind:
        kind = normalise_kind(filters.kind) or filters.kind
        out.append(("kind", filters.kind, [("kind", kind), ("kind_head", kind)]))
    if filters.statute:
        out.append(("statute", filters.statute, statute_clause(filters.statute, equivalents)))
    if filters.disposal:
        out.append(("disposal", filters.disposal, [("disposal", filters.disposal)]))
    return out


class FacetRows(Protocol):
    """What the facets read of an index's doc store (embedded/docstore.py `DocStore`)."""

    def facet_ns(self, field: str, value: str) -> np.ndarray: ...

    def date_ns(self, lo: str, hi: str) -> np.ndarray: ...

    def facet_values(self, field: str, limit: int = 5000) -> list[str]: ...

    def shown_terms(self, ns: Sequence[int]) -> list[tuple[int, str]]: ...


# --- counting from memory ------------------------------------------------------------------

# docs.sqlite facet_shown.terms: a document's terms of the counted fields, "field<US>value" joined by <RS>
TERM_UNIT, TERM_RECORD = "\x1f", "\x1e"
ROW_WIDTH = 16  # a judgment's terms held in its row; more (many sections cited) go to `_more`
# Up to this many documents, the first count reads every document's terms (~7 us each: ~20 ms on
# AILA's 2,914, ~0.14 s at this size), so that no later search waits on the store for them.
READ_ALL_UP_TO = 20_000


class ShownTerms:
    """The counted facet terms of one generation's documents, read on first need."""

    def __init__(self, registry: FacetRows, size: int):
        self._registry, self._size = registry, size
        self._lock = threading.Lock()
        self._rows: np.ndarray | None = None  # n -> term numbers (0: none), made on first count
        self._read: np.ndarray | None = None  # n -> its terms are in `_rows`
        self._more: dict[int, list[int]] = {}  # n -> its term numbers beyond ROW_WIDTH
        self._number: dict[str, int] = {}  # a term as stored ("field<US>value") -> its number
        self._terms: list[str] = [""]  # number -> the term; 0 stands for none

    def counts(self, ns: Sequence[int]) -> dict[str, dict[str, int]]:
        """field -> value -> how many of the documents `ns` (each once) hold it."""
        ns = np.unique(np.asarray(ns, dtype=np.int64))
        ns = ns[(ns >= 0) & (ns < self._size)]
        with self._lock:
            if self._rows is None:
                self._rows = np.zeros((self._size, ROW_WIDTH), dtype=np.int32)
                self._read = np.zeros(self._size, dtype=bool)
                if self._size <= READ_ALL_UP_TO:
                    self._take(np.arange(self._size, dtype=np.int64))
            unread = ns[~self._read[ns]]
            if len(unread):
                self._take(unread)
            held = np.bincount(self._rows[ns].ravel(), minlength=len(self._terms))
            for n in set(ns.tolist()).intersection(self._more):
                for number in self._more[n]:
                    held[number] += 1
            terms = self._terms
        out: dict[str, dict[str, int]] = {}
        for number in np.flatnonzero(held[1:]).tolist():
            name, value = terms[number + 1].split(TERM_UNIT, 1)
            out.setdefault(name, {})[value] = int(held[number + 1])
        return out

    def _take(self, ns: np.ndarray) -> None:
        """Read the terms of `ns` into the rows (under the lock): one split of all their terms and
        one numpy assignment, not a step per document."""
        found = self._registry.shown_terms(ns.tolist())
        if found:
            held_by, stored = zip(*found)
            sizes = np.fromiter((terms.count(TERM_RECORD) + 1 for terms in stored), dtype=np.int64, count=len(stored))
            number, terms = self._number, self._terms
            numbers = []
            for term in TERM_RECORD.join(stored).split(TERM_RECORD):
                got = number.get(term)
                if got is None:
                    got = number[term] = len(terms)
                    terms.append(term)
                numbers.append(got)
            numbers = np.asarray(numbers, dtype=np.int32)
            row = np.repeat(np.asarray(held_by, dtype=np.int64), sizes)
            column = np.arange(len(numbers)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            fits = column < ROW_WIDTH
            self._rows[row[fits], column[fits]] = numbers[fits]
            for n, extra in zip(row[~fits].tolist(), numbers[~fits].tolist()):
                self._more.setdefault(n, []).append(extra)
        self._read[ns] = True


# the known values a note suggests for a clause that matches nothing
_SUGGEST_FROM = {
    "court": "court",
    "court_level": "court_level",
    "judge": "judge_name",
    "kind": "kind",
    "statute": "statute",
    "disposal": "disposal",
}


@dataclass
class Selection:
    """The documents a `Filters` request admits: `ns` (live n, sorted), or None when the filter
    admits every document (no restriction needed); `notes` say why a clause admitted none."""

    ns: np.ndarray | None
    notes: list[str] = field(default_factory=list)
    where: Where | None = None  # the same filter, for engines that apply it inside their search


class FacetReader:
    """A filtered search's view of docs.sqlite's facets at one committed generation."""

    def __init__(self, registry: FacetRows, live: np.ndarray, n_live: int):
        self._registry, self._live, self._n_live = registry, live, n_live
        self._memo: dict[tuple, np.ndarray] = {}  # a clause -> its live n, sorted (this generation's)
        self._shown = ShownTerms(registry, len(live))  # the counted terms, read once a document

    def _clause_ns(self, clause: Sequence[tuple[str, str]] | tuple[str, str, str]) -> np.ndarray:
        """The live n holding any term of `clause` (or, for ("date", lo, hi), decided in that range),
        memoised: a reader serves one committed generation, so a repeated filter costs no query."""
        key = tuple(clause)
        found = self._memo.get(key)
        if found is None:
            if key and key[0] == "date":
                found = self._live_only(self._registry.date_ns(key[1], key[2]))
            else:
                parts = [self._registry.facet_ns(*term) for term in clause]
                found = self._live_only(np.unique(np.concatenate(parts))) if parts else np.empty(0, dtype=np.int64)
            if len(self._memo) > 256:
                self._memo.clear()
            self._memo[key] = found
        return found

    def _live_only(self, ns: np.ndarray) -> np.ndarray:
        ns = ns[ns < len(self._live)]
        return ns[self._live[ns]]

    def select(self, filters: Filters, equivalents: Equivalents | None = None) -> Selection:
        """The judgments matching every clause of `filters`; `equivalents` widens a section to its
        counterparts in other codes (a correspondence table)."""
        notes: list[str] = []
        chosen: np.ndarray | None = None
        terms: list[tuple[str, ...]] = []
        dates = None
        for name, asked, clause in _clauses(filters, equivalents):
            terms.append(tuple(f"{f}{FIELD_SEP}{v}" for f, v in clause))
            ns = self._clause_ns(clause)
            if not len(ns):
                notes.append(self._unknown(name, asked))
            chosen = ns if chosen is None else np.intersect1d(chosen, ns, assume_unique=True)
        if filters.decided_from or filters.decided_to:
            lo = filters.decided_from.isoformat() if filters.decided_from else "0000-00-00"
            hi = filters.decided_to.isoformat() if filters.decided_to else "9999-99-99"
            ns = self._clause_ns(("date", lo, hi))
            dates = (date_number(lo), date_number(hi))
            if not len(ns):
                notes.append(
                    f"no judgment of this archive was decided between {lo if filters.decided_from else 'the first'} "
                    f"and {hi if filters.decided_to else 'the last'} (as far as their dates could be read)"
                )
            chosen = ns if chosen is None else np.intersect1d(chosen, ns, assume_unique=True)
        if chosen is not None and len(chosen) == self._n_live and not notes:
            return Selection(None, notes)
        return Selection(chosen, notes, Where(tuple(terms), dates))

    def _unknown(self, name: str, asked: str) -> str:
        known = self._registry.facet_values(_SUGGEST_FROM[name])
        pool = {k.lower(): k for k in known}
        close = [pool[c] for c in difflib.get_close_matches(asked.lower(), list(pool), n=3, cutoff=0.4)]
        if (
            not close
        ):  # a word of it in a known value ('Sikry' -> 'A. K. Sikri' by its first letters, 'Supreme' -> the court)
            words = [w[:4] for w in re.findall(r"[a-z]{4,}", asked.lower())]
            close = [k for k in known if any(w in k.lower() for w in words)][:3]
        said = (
            f"closest known: {', '.join(repr(c) for c in close)}"
            if close
            else (
                f"known values include: {', '.join(repr(k) for k in known[:5])}"
                if known
                else "this archive's summaries record none"
            )
        )
        return f"no judgment of this archive matches {name} {asked!r}; {said}"

    def counts(self, ns: Sequence[int], limit: int | None = FACETS_SHOWN) -> dict[str, list[tuple[str, int]]]:
        """Per facet, (value, count) over the documents `ns`, most frequent first (then by value),
        at most `limit` values each (None: all)."""
        raw = self._shown.counts(ns)
        out: dict[str, list[tuple[str, int]]] = {}
        for stored, facet in FACET_FIELDS.items():
            pairs = sorted(raw.get(stored, {}).items(), key=lambda p: (-p[1], p[0]))
            out[facet] = pairs if limit is None else pairs[:limit]
        return out

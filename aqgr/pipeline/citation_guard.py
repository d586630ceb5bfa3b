"""The citation guard: which judgments a model's explanation may cite.

An explanation may name only what the archive shows: a candidate of the closed list (its
parties, or a reporter citation in its summary) or a precedent the candidates' summaries
cite (its name or citation). The guard finds every common form of Indian case citation:

* a case name around "v.", "v", "vs", "vs.", "v/s" or "versus" ("Ram v. State of U.P.",
  "Ram v.State"), in any letter case ("ram v. state of up"; "versus" only beside a
  capitalised name);
* "In re X", "X, In re", "Re X";
* a case by a short name: "the X case", "X's case", "in the case of X", "X (supra)",
  "X, supra", "as held in X" (also "as ... observed / decided / laid down in X", and
  "held in X that"); X capitalised, not only generic words like "the Sessions case" nor
  an enactment or a court ("the Land Acquisition Act (supra)", "as held in the Kerala High
  Court"); for the first three, in a sentence
  with no capital letter at all, X holding a word the candidates never use;
* a bare reporter citation: SCC, AIR (also "AIR 2020 Supreme Court 99"), SCR, SCALE, JT,
  Cri LJ, Indlaw, SCC OnLine, INSC, MANU, ILR, MLJ, AC, All ER, numbered supplements, in any
  letter case (retrieval.citations.normalize).

Text is read after NFKC normalisation, with Cyrillic and Greek look-alike letters, curly
quotes and invisible characters mapped to ASCII or removed, accents stripped and words
casefolded: "Ｒａｍ ｖ. State" and "Ram v. State" are one name. A name is known when each
side's words are a title's parties' words (or abbreviate them: "Raj." for Rajasthan),
either way round; a side written without capitals may run on into ordinary words, so
there the words next to "v." must match, one of them distinctive. A sentence citing a
case the archive does not show is removed and counted. Words that merely sound legal
("the appellant", "the State", "Section 302", "Article 21", "the present case", "in
re-examination", "supra note 4", "AIR conditioning", "Re: the bail application") are not
citations.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import takewhile
from typing import NamedTuple

from aqgr.retrieval.citations.normalize import STATE_ABBREVIATIONS, citations, party_key
from aqgr.retrieval.text import STOPWORDS
from aqgr.schemas.results import CandidateQuestion
from aqgr.schemas.summary import StructuredSummary
from aqgr.summarizer.sentences import split_sentences

_LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4`", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff\u00ad", None),
        # Cyrillic and Greek letters drawn like Latin ones; small-capital v.
        **dict(zip("аеорсухіјѕѵАВЕКМНОРСТХІЈЅѴνοαΑΒΕΖΗΙΚΜΝΟΡΤΥΧᴠ", "aeopcyxijsvABEKMHOPCTXIJSVvoaABEZHIKMNOPTYXv")),
    }
)
_VS_SLASH = re.compile(r"\b(v)\s?/\s?(s)\b\.?", re.I)
_VS_GLUED = re.compile(r"(?<=\s)(vs?)\.(?=[A-Za-z])", re.I)  # "Ram v.State": the marker is its own word
_AIR_COURT = re.compile(
    r"(\bA\.?\s?I\.?\s?R\.?\s*\(?(?:18|19|20)\d{2}\)?\s*)Supreme\s+Court\b\.?", re.I
)  # "AIR 2020 Supreme Court 9" = "AIR 2020 SC 9"
_STATE_OF = re.compile(r"\b(state|government|govt\.?)\s+of\s+([a-z])\.?\s?([a-z])\b\.?", re.I)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'.&-]*")
_HARD = frozenset(',;:()[]{}"!?|')  # punctuation a name does not run across

_MARKERS = frozenset({"v", "vs", "versus"})
_CONNECTORS = frozenset({"of", "and", "the", "&", "de", "da", "bin"})
# Words that end a name: function words, and the words a sentence uses around a citation.
_STOP = (STOPWORDS - {"of", "and", "the", "up"}) | frozenset(
    """see vide cf per also held holds hold observed observes decided decides laid lays noted notes
    followed follows following relied relies relying reliance applied applies applying considered
    considers explained explains reiterated reiterates cited cites citing quoted distinguished
    distinguishes overruled approved affirmed reversed upheld says said stated states
    case cases judgment judgments decision decisions ruling supra ibid reported
    appellant appellants respondent respondents petitioner petitioners accused complainant
    counsel learned section sections article articles rule rules clause order chapter part
    schedule paragraph para like similarly namely viz""".split()
)
# A "v" after these is a numeral ("Chapter V of the Code"), not "versus".
_NUMBERED = frozenset(
    "chapter part schedule article section order rule clause appendix annexure form list vol volume book title entry item para paragraph table phase class grade type".split()
)
# Capitalised words that do not make "the X case" a name ("the Present case", "the Sessions Case").
_GENERIC = frozenset(
    """the this that present instant same said above aforesaid impugned prosecution defence defense state court
    supreme high apex trial sessions appellate bench constitution constitutional appellant appellants respondent
    respondents petitioner petitioners accused complainant government union india section article act code ipc
    crpc rule order criminal civil appeal appeals writ petition application revision reference suit complaint
    bail case decision judgment learned counsel justice honourable hon'ble original first second third earlier
    later latter former entire whole our their his her its your we it in see also following relying per as a
    an any every each no both all such similar landmark leading celebrated famous well-known cited decided
    reported lower magistrate police fir main principal subject relevant respective connected companion
    exception explanation proviso illustration miscellaneous transferred crime session st related other another current pending special lead test previous prior subsequent last next brief
    trial sessions review curative suo motu bail criminal civil election service tax contempt transfer
    dowry death murder rape theft robbery dacoity kidnapping cheating fraud forgery defamation narcotics
    ndps tada pota cbi corruption arms riot accident motor insurance compensation eviction rent partition
    succession probate arbitration company labour industrial land property matrimonial divorce custody
    maintenance""".split()
)
# A name ending in these is an enactment or a court ("the Land Acquisition Act (supra)", "as held in
# the Kerala High Court"), not a case.
_ENACTMENT = frozenset(
    "act acts code constitution rules regulations ordinance ipc crpc cpc court bench tribunal commission".split()
)
# "as held in X": the verbs before "in" (with "as" a few words before them).
_HELD = frozenset("held observed decided explained ruled stated opined noticed noted".split())
# Words a mention may add to a party's name: honorifics and "and others".
_ANY_PARTY = frozenset("sh mst pt thiru selvi sardar others another ors anr etc".split())
# Party words too common to tell one title from another.
_COMMON_PARTY = frozenset("state union india government others another people".split())


def normalise(text: str) -> str:
    """NFKC, look-alike letters, quotes and dashes mapped to ASCII, invisible characters removed, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).translate(_LOOKALIKES).split())


def fold(text: str) -> str:
    """`normalise`d text read for citations: accents stripped, "v/s" as "vs", "State of UP" spelt out."""
    text = "".join(ch for ch in unicodedata.normalize("NFKD", normalise(text)) if not unicodedata.combining(ch))
    text = _VS_SLASH.sub("vs", text)
    text = _VS_GLUED.sub(r"\1. ", text)
    text = _AIR_COURT.sub(r"\1SC ", text)

    def state(m: re.Match) -> str:
        name = STATE_ABBREVIATIONS.get((m.group(2) + m.group(3)).lower())
        return f"{m.group(1)} of {name} " if name else m.group(0)

    return _STATE_OF.sub(state, text)


@dataclass(frozen=True)
class Side:
    words: tuple[str, ...]  # normalised name words (retrieval.citations.normalize.party_key), nearest the marker first
    cased: bool  # read by capitals, so every word is part of the name


class Mention(NamedTuple):
    form: str  # "name" (X v. Y), "in re", "case" (the X case, X's case, the case of X), "report"
    text: str  # as read
    sides: tuple[Side, ...] = ()  # two for "name", one for "in re" and "case", none for "report"
    key: str = ""  # a report's key, e.g. "scc:2020:1:1"


class _Word(NamedTuple):
    raw: str
    bare: str  # casefolded, without a trailing period or "'s"
    start: int
    end: int


def _words(text: str) -> list[_Word]:
    out = []
    for m in _WORD.finditer(text):
        bare = m.group().casefold().rstrip(".")
        out.append(_Word(m.group(), bare[:-2] if bare.endswith("'s") else bare, m.start(), m.end()))
    return out


def _run(
    text: str, words: list[_Word], i: int, step: int, *, limit: int = 8, loose_first: str = ""
) -> tuple[list[int], bool]:
    """Indexes of the name words beside words[i] going `step` (-1 left, +1 right), in text
    order, and whether they were read by capitals. `loose_first`: punctuation the first gap
    may hold ("In re: X", "X, In re", "X (supra)")."""
    first = next(
        (j for j in range(i + step, i + step * 4, step) if 0 <= j < len(words) and words[j].bare not in _CONNECTORS),
        None,
    )
    cased = first is not None and words[first].raw[0].isupper()
    taken, prev, j = [], words[i], i + step
    while 0 <= j < len(words) and len(taken) < (limit if cased else min(limit, 5)):
        w = words[j]
        gap = text[w.end : prev.start] if step < 0 else text[prev.end : w.start]
        if loose_first and not taken:
            gap = "".join(c for c in gap if c not in loose_first)
        if any(c in _HARD for c in gap) or w.bare in _MARKERS or w.bare in _STOP:
            break
        if cased and not (w.raw[0].isupper() or w.raw[0].isdigit() or w.bare in _CONNECTORS):
            break
        taken.append(j)
        prev, j = w, j + step
    if taken and words[taken[0]].bare in _CONNECTORS - {"the"}:
        return [], cased  # "V of the Code": a name does not start at "of" or "and"
    taken.sort()
    while taken and words[taken[-1]].bare in _CONNECTORS:
        taken.pop()
    while taken and words[taken[0]].bare in _CONNECTORS:
        taken.pop(0)
    return taken, cased


def _side(words: list[_Word], taken: list[int], cased: bool, left: bool) -> Side | None:
    key = party_key(" ".join(words[j].raw for j in taken))
    if not any(w.isalpha() for w in key):
        return None
    return Side(tuple(reversed(key)) if left else key, cased)


def _span(text: str, words: list[_Word], indexes: Iterable[int]) -> str:
    indexes = list(indexes)
    return text[words[min(indexes)].start : words[max(indexes)].end]


def mentions(text: str, vocabulary: frozenset[str] | None = None) -> list[Mention]:
    """Every case citation in `text` (one sentence, or a summary's slot). `vocabulary`:
    words that are not names in a sentence written all in lower case (None: such
    sentences have no "the x case" names)."""
    text = fold(text)
    found = [Mention("report", text[c.start : c.end], key=c.key) for c in citations(text, every_form=True)]
    masked = text
    for c in citations(text, every_form=True):
        masked = masked[: c.start] + "|" * (c.end - c.start) + masked[c.end :]
    words = _words(masked)
    lower = not any(ch.isupper() for ch in text)  # written all in lower case: names have no capitals
    for i, w in enumerate(words):
        if w.bare in _MARKERS:
            found += _name(masked, words, i)
        elif w.bare == "in" and i + 1 < len(words) and words[i + 1].raw.casefold().rstrip(".") == "re":
            taken, cased = _run(masked, words, i + 1, 1, loose_first=":")
            side = _side(words, taken, cased, left=False) if taken else None
            if side:
                found.append(Mention("in re", _span(masked, words, [i, *taken]), (side,)))
            else:  # "X, In re"
                found += _named_beside(masked, words, i, -1, "in re", [i, i + 1], loose=",", vocabulary=vocabulary)
        elif w.raw == "Re" and (i == 0 or words[i - 1].bare != "in"):  # "Re X" (not "Re: the bail application")
            found += _named_beside(masked, words, i, 1, "in re", [i], vocabulary=vocabulary)
        elif w.bare == "supra":  # "X (supra)", "X, supra"
            found += _named_beside(masked, words, i, -1, "case", [i], loose="(,", vocabulary=vocabulary)
        elif w.bare == "in" and i >= 1 and _held_in(words, i):  # "as held in X", "held in X that"
            found += _named_beside(
                masked, words, i, 1, "case", [], vocabulary=vocabulary, then_that=not _as_before(words, i)
            )
        elif w.bare == "case":
            found += _short_name(masked, words, i, lower, vocabulary)
    return found


def _as_before(words: list[_Word], i: int) -> bool:
    return any(w.bare == "as" for w in words[max(0, i - 5) : i - 1])


def _held_in(words: list[_Word], i: int) -> bool:
    """words[i] is the "in" of "held in", "observed in", "laid down in"."""
    before = words[i - 1].bare
    return before in _HELD or (before == "down" and i >= 2 and words[i - 2].bare in ("laid", "lay", "lays"))


def _named_beside(
    text: str,
    words: list[_Word],
    i: int,
    step: int,
    form: str,
    extra: list[int],
    *,
    loose: str = "",
    vocabulary: frozenset[str] | None = None,
    then_that: bool = False,
) -> list[Mention]:
    """A capitalised case name right beside words[i] (going `step`) read as a one-sided mention of `form`:
    not generic words, not an enactment or a court. `then_that`: only when "that" follows the name ("held in X that")."""
    taken, cased = _run(text, words, i, step, limit=6, loose_first=loose)
    if not taken or not cased or words[taken[-1]].bare in _ENACTMENT:
        return []
    nearest = taken[0] if step > 0 else taken[-1]
    if any(w.bare != "the" for w in words[min(i, nearest) + 1 : max(i, nearest)]):
        return []  # the name must stand right beside the word ("as held in the X case": "the" between is fine)
    if then_that and not (taken[-1] + 1 < len(words) and words[taken[-1] + 1].bare == "that"):
        return []
    if not _name_like(words, taken, True, vocabulary):
        return []
    side = _side(words, taken, True, left=False)
    return [Mention(form, _span(text, words, [*taken, *extra]), (side,))] if side else []


def _name(text: str, words: list[_Word], i: int) -> list[Mention]:
    marker = words[i]
    if i == 0 or words[i - 1].bare in _NUMBERED or (len(words[i - 1].bare) == 1 and words[i - 1].bare.isalpha()):
        return []  # "Chapter V", or the initial in "K. V. Rao"
    if marker.raw[0] == "V" and any(w.bare in _MARKERS for w in words[i + 1 : i + 5]):
        return []  # "Ram V. Singh v. State": the first V is an initial
    left, left_cased = _run(text, words, i, -1)
    right, right_cased = _run(text, words, i, 1)
    if not left or not right or (marker.bare == "versus" and not (left_cased or right_cased)):
        return []
    sides = (_side(words, left, left_cased, left=True), _side(words, right, right_cased, left=False))
    if None in sides:
        return []
    return [Mention("name", _span(text, words, [*left, *right]), sides)]


def _short_name(text: str, words: list[_Word], i: int, lower: bool, vocabulary: frozenset[str] | None) -> list[Mention]:
    """ "the X case", "X's case", "the case of X"."""
    out = []
    if (
        i + 1 < len(words)
        and words[i + 1].bare == "of"
        and i >= 2
        and (words[i - 2].bare, words[i - 1].bare) == ("in", "the")
    ):
        taken, cased = _run(text, words, i + 1, 1, limit=6)
        side = _side(words, taken, True, left=False) if taken and cased and taken[0] == i + 2 else None
        if side and _name_like(words, taken, True, vocabulary):
            out.append(Mention("case", _span(text, words, [i - 2, *taken]), (side,)))
    if i + 1 < len(words) and re.match(r"(?:no|nos|number)(?![a-z])", words[i + 1].bare):
        return out  # "Sessions Case No. 5"
    taken, cased = _run(text, words, i, -1, limit=5)
    if not taken or taken[-1] != i - 1:
        return out
    if not cased:
        before = words[taken[0] - 1].bare if taken[0] > 0 else ""
        if not lower or vocabulary is None or not (before == "the" or words[i - 1].raw.casefold().endswith("'s")):
            return out
        taken = taken[-3:]
    side = _side(words, taken, cased, left=False) if _name_like(words, taken, cased, vocabulary) else None
    if side:
        out.append(Mention("case", _span(text, words, [*taken, i]), (side,)))
    return out


def _name_like(words: list[_Word], taken: list[int], cased: bool, vocabulary: frozenset[str] | None) -> bool:
    if cased:
        return any(
            words[j].raw[0].isupper()
            and words[j].bare.isalpha()
            and len(words[j].bare) > 1
            and words[j].bare not in _GENERIC
            for j in taken
        )
    known = (vocabulary or frozenset()) | _GENERIC | _STOP
    return any(words[j].bare.isalpha() and len(words[j].bare) >= 3 and words[j].bare not in known for j in taken)


# ---------------------------------------------------------------- what the archive shows


def _strings(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _covered(word: str, pool: frozenset[str]) -> bool:
    return (
        word in pool
        or word in _ANY_PARTY
        or (len(word) >= 3 and word.isalpha() and any(p.startswith(word) for p in pool))
    )


def _fits(side: Side, pool: frozenset[str]) -> bool:
    if side.cased:
        return all(_covered(w, pool) for w in side.words)
    matched = list(takewhile(lambda w: _covered(w, pool), side.words))
    return bool(matched) and (not pool - _COMMON_PARTY or any(w not in _COMMON_PARTY for w in matched))


class CitationGuard:
    """The citations explanations may make about `summaries` (the candidates): their
    parties, and every name and reporter citation their summaries contain, or `texts`
    (what the user wrote) contain. A model's summary holds only the names its judgment's
    text shows (aqgr/pipeline/grounding.py), so this is no licence for what a model invented."""

    def __init__(self, summaries: Iterable[StructuredSummary], texts: Iterable[str] = ()):
        self.titles: list[tuple[frozenset[str], frozenset[str]]] = []  # (one side's words, the other's)
        self.names: list[frozenset[str]] = []  # a precedent known by one name
        self.reports: set[str] = set()
        words: set[str] = set()
        for s in summaries:
            appellants = frozenset(w for p in s.parties.appellants for w in party_key(fold(p)))
            respondents = frozenset(w for p in s.parties.respondents for w in party_key(fold(p)))
            if appellants or respondents:
                self.titles.append((appellants, respondents))
            for text in _strings(s.model_dump(exclude={"provenance"})):
                words.update(w.bare for w in _words(fold(text)))
                self._learn(text)
            for p in s.precedents:
                if not any(m.form != "report" for m in mentions(p.name)):
                    name = fold(p.name)
                    for c in reversed(citations(name, every_form=True)):
                        name = name[: c.start] + " " + name[c.end :]
                    own = frozenset(party_key(name))
                    if any(w.isalpha() for w in own):
                        self.names.append(own)
        for text in texts:
            words.update(w.bare for w in _words(fold(text)))
            self._learn(text)
        self.vocabulary = frozenset(words)

    def _learn(self, text: str) -> None:
        for m in mentions(text):
            if m.form == "report":
                self.reports.add(m.key)
            elif m.form == "name":
                self.titles.append((frozenset(m.sides[0].words), frozenset(m.sides[1].words)))
            else:
                self.names.append(frozenset(m.sides[0].words))

    def known(self, mention: Mention) -> bool:
        if mention.form == "report":
            return mention.key in self.reports
        if mention.form == "name":
            left, right = mention.sides
            return any(
                (_fits(left, a) and _fits(right, b)) or (_fits(left, b) and _fits(right, a)) for a, b in self.titles
            ) or any(_fits(left, n) and _fits(right, n) for n in self.names)
        (side,) = mention.sides
        return any(_fits(side, a | b) for a, b in self.titles) or any(_fits(side, n) for n in self.names)

    def unknown(self, text: str) -> list[Mention]:
        """The citations in `text` that name nothing the candidates show."""
        return [m for m in mentions(text, self.vocabulary) if not self.known(m)]

    def clean(self, text: str) -> tuple[str, int]:
        """`text` (normalised) without the sentences citing an unknown case; how many were removed."""
        kept, removed = [], 0
        text = normalise(text)
        for sentence in split_sentences(text) or [text]:
            if self.unknown(sentence):
                removed += 1
            else:
                kept.append(sentence)
        return " ".join(kept).strip(), removed


def grounded_questions(
    questions: Sequence[CandidateQuestion], examples: Iterable[StructuredSummary], facts: str
) -> tuple[list[CandidateQuestion], int]:
    """The questions that cite only cases the examples (the summaries the generator was shown)
    or the facts show, in their order, and how many were dropped. A question is one sentence
    of a model's: it is dropped whole rather than rewritten. No guard is built when no
    question cites anything."""
    questions = list(questions)
    if not any(mentions(q.text, frozenset()) for q in questions):
        return questions, 0
    guard = CitationGuard(examples, texts=(facts,))
    kept = [q for q in questions if not guard.unknown(q.text)]
    return kept, len(questions) - len(kept)

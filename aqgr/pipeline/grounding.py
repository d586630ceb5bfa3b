"""Grounding: a model-written summary keeps only the names its judgment's text shows.

A model can write a party, court, date, judge, statute or precedent that the judgment never
names, and a stored summary is read as fact: shown in a hit, indexed, and learnt by the
citation guard as a case the archive shows. So every such value of a model's summary is
looked up in the judgment's own text (`Locator`), both read as normalised words (Unicode,
letter case and punctuation folded; honorifics, initials, "v."/"vs."/"versus", "and others"
and the abbreviations of retrieval.citations.normalize folded: "State of U.P." is "State of
Uttar Pradesh"):

* a name (a party, the court, a judge, a precedent's title): all its words within a few
  words of each other in the text, in any order; a word may abbreviate the text's or the
  reverse ("Raj." and "Rajasthan");
* a date: the same day in any common writing ("26 September 1973", "September 26, 1973",
  "26.09.1973", "1973-09-26"; numbers day first), else its words as a name;
* a statute: its words as a name with "IPC", "CrPC", "CPC" spelt out and "Indian" optional,
  or its numbers anywhere in the text and its other words as a name;
* a reporter citation: the same citation (retrieval.citations.normalize keys);
* a case cited inside free text (facts, reasoning, issues, arguments, principles; any form
  the citation guard reads): its citation located, and each party's words as a name.

What is not located is dropped, and recorded in `Provenance.ungrounded` ("slot: value") so
that a reader sees what the model claimed: a precedent, statute or judge is removed from its
list, the court or date set to null, a party's name removed from its side, a free-text
sentence citing an unlocated case removed. A summary none of whose parties is located, or
whose facts or final order would be left empty, is no summary of this judgment: it fails
with reason "ungrounded". Stored model summaries therefore name only what their judgments
show, and the citation guard, which learns what candidates' summaries name, learns nothing
else. The case number and the subjects are not names and are kept as written.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable

from aqgr.foundation.errors import SummarizeError
from aqgr.pipeline.citation_guard import fold, mentions
from aqgr.retrieval.citations.normalize import citations, tokens
from aqgr.schemas.summary import SummarySlots
from aqgr.summarizer.sentences import sentence_spans

# Words a name may add that the text need not repeat: honorifics, titles, roles, "and others".
_OPTIONAL = frozenset(
    """v hon ble honble honourable justice justices judge cj chief mr shri sri sh mst others another anr ors lrs lr etc
    appellant appellants respondent respondents petitioner petitioners plaintiff plaintiffs defendant defendants""".split()
)
_STATUTE_OPTIONAL = _OPTIONAL | frozenset(
    "indian india section sections sec ss article articles art rule rules clause sub".split()
)
_ACTS = tuple(
    (re.compile(p, re.I), f" {name} ")
    for p, name in (
        (r"\bCr\.?\s?P\.?\s?C\b\.?", "Code of Criminal Procedure"),
        (r"\bC\.?\s?P\.?\s?C\b\.?", "Code of Civil Procedure"),
        (r"\bI\.?\s?P\.?\s?C\b\.?", "Indian Penal Code"),
    )
)
_MONTHS = {
    m: i
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        ),
        1,
    )
    for m in names.split()
}
_MONTH = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATES = (
    ("dmy", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?{_MONTH},?\s+(\d{{4}})\b", re.I)),
    ("mdy", re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)),
    ("ymd", re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")),
    ("dmy", re.compile(r"\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})\b")),
)
_NOTE_CHARS = 200  # the most characters of a value quoted in Provenance.ungrounded


def _words(text: str, acts: bool = False) -> list[str]:
    """Normalised words: folded, abbreviations expanded, "498A" read as "498"."""
    text = fold(text)
    if acts:
        for pattern, name in _ACTS:
            text = pattern.sub(name, text)
    return [re.sub(r"^(\d+)[a-z]+$", r"\1", t.word) for t in tokens(text)]


def dates(text: str) -> set[tuple[int, int, int]]:
    """Every calendar day written in `text`, as (year, month, day)."""
    found = set()
    for order, pattern in _DATES:
        for m in pattern.finditer(text):
            a, b, c = m.groups()
            if order == "mdy":
                a, b = b, a
            day, month, year = (c, b, a) if order == "ymd" else (a, b, c)
            month = _MONTHS.get(month.lower().rstrip("."), 0) if not month.isdigit() else int(month)
            year = int(year) + (1900 if len(year) == 2 else 0)
            if 1 <= month <= 12 and 1 <= int(day) <= 31:
                found.add((year, month, int(day)))
    return found


class Locator:
    """One judgment's text, read once, and whether a value written about it is in it."""

    def __init__(self, text: str):
        self.text = text
        self._positions = self._index(_words(text))
        self._act_positions = self._index(_words(text, acts=True))
        self.reports = {c.key for c in citations(fold(text), every_form=True)}
        self.dates = dates(fold(text))

    @staticmethod
    def _index(words: list[str]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for n, w in enumerate(words):
            out.setdefault(w, []).append(n)
        return out

    @staticmethod
    def _where(word: str, positions: dict[str, list[int]]) -> list[int]:
        """Positions of `word` in the text, or of a word it abbreviates or that abbreviates it."""
        if word in positions or not (word.isalpha() and len(word) >= 3):
            return positions.get(word, [])
        near = [
            p for w, ps in positions.items() if len(w) >= 3 and (w.startswith(word) or word.startswith(w)) for p in ps
        ]
        return sorted(near)

    def _together(self, words: list[str], positions: dict[str, list[int]]) -> bool:
        """All `words` within a window of the text a little wider than their number."""
        words = list(dict.fromkeys(words))
        if not words:
            return True
        where = [self._where(w, positions) for w in words]
        if not all(where):
            return False
        reach = len(words) + 3
        rarest = min(range(len(words)), key=lambda i: len(where[i]))
        for p in where[rarest]:
            if all(i == rarest or _within(where[i], p - reach, p + reach) for i in range(len(words))):
                return True
        return False

    def name(self, value: str) -> bool:
        """A party, court, judge or case title: its words together in the text."""
        return self._together([w for w in _words(value) if w not in _OPTIONAL], self._positions)

    def date(self, value: str) -> bool:
        written = dates(fold(value))
        return written <= self.dates if written else self.name(value)

    def statute(self, value: str) -> bool:
        words = [w for w in _words(value, acts=True) if w not in _STATUTE_OPTIONAL]
        if self._together(words, self._act_positions):
            return True
        numbers = [w for w in words if w.isdigit()]
        return (
            bool(numbers)
            and all(n in self._act_positions for n in numbers)
            and self._together([w for w in words if not w.isdigit()], self._act_positions)
        )

    def precedent(self, value: str) -> bool:
        """A precedent: its reporter citations are the text's, its title's words together in it."""
        folded = fold(value)
        found = citations(folded, every_form=True)
        if any(c.key not in self.reports for c in found):
            return False
        for c in reversed(found):
            folded = folded[: c.start] + " " + folded[c.end :]
        return self.name(folded)

    def cited(self, sentence: str) -> bool:
        """Whether every case `sentence` cites (the citation guard's forms) is in the text."""
        for m in mentions(sentence):
            if m.form == "report":
                if m.key not in self.reports:
                    return False
            elif not all(
                self._together([w for w in side.words if w not in _OPTIONAL], self._positions) for side in m.sides
            ):
                return False
        return True

    def passage(self, text: str) -> tuple[str, list[str]]:
        """`text` without the sentences citing a case the judgment's text does not show (read sentence
        by sentence, as the citation guard reads); those sentences."""
        kept, removed, last = [], [], 0
        for start, end in sentence_spans(text):
            if not self.cited(text[start:end]):
                kept.append(text[last:start])
                removed.append(text[start:end])
                last = end
        if not removed:
            return text, []
        kept.append(text[last:])
        return re.sub(r"[ \t]{2,}", " ", "".join(kept)).strip(), removed


def _within(positions: list[int], low: int, high: int) -> bool:
    i = bisect_left(positions, low)
    return i < len(positions) and positions[i] <= high


def _note(slot: str, value: str) -> str:
    value = " ".join(value.split())
    return f"{slot}: {value[:_NOTE_CHARS]}{'...' if len(value) > _NOTE_CHARS else ''}"


def ground_summary(judgment_id: str, slots: SummarySlots, text: str) -> tuple[SummarySlots, list[str]]:
    """`slots` with every value naming what `text` (the judgment) does not show dropped, and what was
    dropped ("slot: value"). Raises SummarizeError('ungrounded') when no party, or no facts or final
    order, would be left."""
    where = Locator(text)
    notes: list[str] = []
    data = slots.model_dump()

    def keep(slot: str, value: str, located: Callable[[str], bool]) -> bool:
        if located(value):
            return True
        notes.append(_note(slot, value))
        return False

    def passage(slot: str, value: str) -> str:
        value, removed = where.passage(value)
        notes.extend(_note(slot, s) for s in removed)
        return value

    for slot in ("court", "date"):
        if data[slot] and not keep(slot, data[slot], where.name if slot == "court" else where.date):
            data[slot] = None
    data["bench"] = [j for j in data["bench"] if keep("bench", j, where.name)]
    named = [p for side in ("appellants", "respondents") for p in data["parties"][side]]
    for side in ("appellants", "respondents"):
        data["parties"][side] = [p for p in data["parties"][side] if keep(f"parties.{side}", p, where.name)]
    if named and not any(data["parties"].values()):
        raise SummarizeError(
            judgment_id,
            "ungrounded",
            f"none of the parties the model named ({'; '.join(named)[:_NOTE_CHARS]}) is in the judgment's text; "
            "the summary was not stored: summarise it again, or with another model",
        )
    data["statutes"] = [s for s in data["statutes"] if keep("statutes", s["name"], where.statute)]
    data["precedents"] = [p for p in data["precedents"] if keep("precedents", p["name"], where.precedent)]
    for slot in ("facts", "reasoning", "final_judgment", "judgment_kind", "disposed_in_favour_of"):
        if data[slot]:
            data[slot] = passage(slot, data[slot]) or (
                None if slot in ("judgment_kind", "disposed_in_favour_of") else ""
            )
    data["issues"] = [i for i in (passage("issues", i) for i in data["issues"]) if i]
    for side in ("appellants", "respondents"):
        data["arguments"][side] = [a for a in (passage(f"arguments.{side}", a) for a in data["arguments"][side]) if a]
    for slot in ("statutes", "precedents", "new_principles"):
        for ref in data[slot]:
            for part in ("principle", "application"):
                ref[part] = passage(f"{slot}.{part}", ref[part]) if ref[part] else ref[part]
    data["new_principles"] = [p for p in data["new_principles"] if p["principle"]]
    emptied = [slot for slot in ("facts", "final_judgment") if getattr(slots, slot).strip() and not data[slot].strip()]
    if emptied:
        raise SummarizeError(
            judgment_id,
            "ungrounded",
            f"every sentence of the model's {' and '.join(emptied)} cites a case the judgment's text does not show; "
            "the summary was not stored: summarise it again, or with another model",
        )
    return SummarySlots.model_validate(data), notes

"""Pinpoint citations: where a quoted passage stands in a judgment's own text.

`locate(quote, text)` finds a quote (an evidence slot, a summary passage, a model's
words) in the judgment text as stored, and returns character offsets into that text and
the judgment's own paragraph number. It tries, in order:

1. the quote verbatim (`match="exact"`);
2. the quote with whitespace runs collapsed on both sides (`"whitespace"`): the
   extractive summarizer's passages are the source's sentences with their whitespace
   normalised, so they are found here with the offsets of the sentences it copied;
3. the same, ignoring case and the kind of quotation marks and dashes (`"case"`);
4. the longest part of the quote of at least `MIN_PIECE_WORDS` words found as in 3
   (`"part"`): what follows a colon ("Section 302 of the Indian Penal Code: <principle>",
   how explanations quote a statute), a sentence, or a sentence's text either side of a
   colon. The span then covers that part only, not the whole quote (a model's paraphrase
   around a verbatim sentence).

A quote found none of these ways gives None: the caller says `located: false` rather
than pointing at a guess. A trailing " ..." (how aqgr marks a quote it shortened) is not
part of what is looked for.

Paragraph numbers come from the text itself (`ParagraphIndex`): Indian judgments number
their paragraphs at the start of a line as "12.", "(12)" or "12)". The numbered paragraphs
are the longest run of such markers, in one style, counting up by one (a single skipped
number tolerated), so lists inside a paragraph ("(1) ... (2) ...") and quoted paragraphs
of other judgments are not taken for the judgment's own numbering.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from aqgr.foundation.errors import UnknownJudgmentError
from aqgr.schemas.results import Evidence, Hit, Pinpoint, SummaryPinpoints
from aqgr.schemas.summary import StructuredSummary
from aqgr.summarizer.sentences import split_sentences

__all__ = [
    "Span",
    "ParagraphIndex",
    "JudgmentSource",
    "locate",
    "pinpoint",
    "pin_hits",
    "summary_pinpoints",
    "numbered_lines",
    "where",
    "judgment_pinpoints",
    "MIN_PIECE_WORDS",
]

MIN_PIECE_WORDS = (
    6  # a shorter piece ("The appeal is dismissed.") would be found in too many judgments to point anywhere
)
_CLIPPED = " ..."  # aqgr.pipeline.explain marks a quote it cut short so
_MIN_NUMBERED = 3  # markers needed to say a judgment numbers its paragraphs (2 when they start at 1)

# Paragraph markers at the start of a line, one group per style.
_MARKER = re.compile(r"^[ \t]*(?:(?P<dot>\d{1,3})\.|\((?P<paren>\d{1,3})\)|(?P<close>\d{1,3})\))(?=\s)", re.MULTILINE)
# Characters folded in the case-insensitive steps: curly quotes, dashes (one character each).
_FOLD = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u00a0": " "}
)
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Span:
    """Where a quote stands: text[start:end], in paragraph `paragraph` (None: not numbered there)."""

    start: int
    end: int
    paragraph: int | None
    match: str  # exact | whitespace | case | part


class ParagraphIndex:
    """The judgment's own paragraph numbers: which numbered paragraph a character offset is in."""

    def __init__(self, text: str):
        by_style: dict[str, list[tuple[int, int]]] = {}
        for m in _MARKER.finditer(text):
            style = m.lastgroup or "dot"
            by_style.setdefault(style, []).append((int(m.group(style)), m.start()))
        best: list[tuple[int, int]] = []
        for markers in by_style.values():
            chain = _longest_run(markers)
            if len(chain) > len(best):
                best = chain
        numbered = len(best) >= _MIN_NUMBERED or (len(best) >= 2 and best[0][0] == 1)
        self.marks: list[tuple[int, int]] = best if numbered else []  # (number, offset of the marker)
        self._starts = [offset for _, offset in self.marks]

    @property
    def numbered(self) -> bool:
        return bool(self.marks)

    def at(self, offset: int) -> int | None:
        """The number of the paragraph holding the character at `offset` (None before the first)."""
        i = bisect_right(self._starts, offset) - 1
        return self.marks[i][0] if i >= 0 else None


def _longest_run(markers: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence (in text order) whose numbers go up by one, or two (one skipped)."""
    best_end: dict[int, int] = {}  # number -> index of the marker ending the longest run ending in that number
    length: list[int] = []
    previous: list[int] = []
    for i, (number, _) in enumerate(markers):
        before = [best_end[n] for n in (number - 1, number - 2) if n in best_end]
        parent = max(before, key=lambda j: (length[j], j), default=-1)
        length.append(length[parent] + 1 if parent >= 0 else 1)
        previous.append(parent)
        if number not in best_end or length[i] > length[best_end[number]]:
            best_end[number] = i
    if not length:
        return []
    i = max(range(len(length)), key=lambda j: (length[j], -j))
    run = []
    while i >= 0:
        run.append(markers[i])
        i = previous[i]
    return run[::-1]


class _Normalised:
    """The text with whitespace runs collapsed to one space (and stripped), and a map back to
    raw offsets: `_raw_of[i]`, where the normalised character i stands in the raw text (a
    collapsed run: its first character). Made by numpy over the code points, not a Python
    loop per word: a judgment is normalised for every search that explains it."""

    def __init__(self, text: str):
        self.text, self._raw_of = _normalised_with_offsets(text)
        self.folded = _fold(self.text)

    def raw(self, offset: int) -> int:
        """The raw offset of the normalised character at `offset`."""
        return int(self._raw_of[offset])

    def span(self, start: int, length: int) -> tuple[int, int]:
        return self.raw(start), self.raw(start + length - 1) + 1


_LAST_SPACE = 0x3000  # no code point above U+3000 is whitespace (str.isspace, the `\s` of `_WS`)


@lru_cache(maxsize=1)
def _space_table() -> np.ndarray:
    """table[c]: code point c is whitespace, for c <= U+3000; the last entry (False) stands for every higher one."""
    return np.array([chr(c).isspace() for c in range(_LAST_SPACE + 1)] + [False])


def _normalised_with_offsets(text: str) -> tuple[str, np.ndarray]:
    """`_normalise(text)`, made of the code points the offsets keep (each kept space a " "), and
    the raw offset of each of its characters: every non-space character and the first of each
    inner whitespace run, in order (a fifth of the regular expression's time on a judgment)."""
    table = _space_table()
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    space = table[np.minimum(codes, len(table) - 1)]
    kept = ~space
    kept[1:] |= ~space[:-1]  # a run's first space (a leading run has none before it: dropped)
    offsets = np.flatnonzero(kept)
    if len(offsets) and space[offsets[-1]]:  # a trailing run's first space
        offsets = offsets[:-1]
    normalised = (
        np.where(space[offsets], np.uint32(ord(" ")), codes[offsets])
        .astype("<u4")
        .tobytes()
        .decode("utf-32-le", "surrogatepass")
    )
    return normalised, offsets.astype(np.int32 if len(text) < 2**31 else np.int64)


def _fold(text: str) -> str:
    """Lower case and plain quotes/dashes, one character for one (offsets stay aligned)."""
    folded = text.translate(_FOLD)
    lowered = folded.lower()
    if len(lowered) == len(folded):
        return lowered
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in folded)


def _normalise(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _pieces(quote: str) -> list[str]:
    """The quote's parts after a colon, its sentences and their parts either side of a colon,
    longest first, those long enough to point."""
    found: list[str] = re.split(r":\s+", quote)[1:]  # "Section 302 of the Indian Penal Code: <its principle>"
    for sentence in split_sentences(quote):
        found.append(sentence)
        found.extend(part for part in re.split(r":\s+", sentence) if part != sentence)
    pieces = {_normalise(p) for p in found}
    return sorted((p for p in pieces if len(p.split()) >= MIN_PIECE_WORDS), key=lambda p: (-len(p), p))


class JudgmentSource:
    """One judgment's text prepared for locating many quotes (normalised once, paragraphs once)."""

    def __init__(self, text: str):
        self.text = text
        self.paragraphs = ParagraphIndex(text)
        self._norm: _Normalised | None = None

    @property
    def normalised(self) -> _Normalised:
        if self._norm is None:
            self._norm = _Normalised(self.text)
        return self._norm

    def locate(self, quote: str) -> Span | None:
        quote = quote.strip()
        if quote.endswith(_CLIPPED):
            quote = quote[: -len(_CLIPPED)].rstrip()
        if not quote:
            return None
        found = self._find(quote)
        if found is None:
            return None
        start, end, how = found
        return Span(start, end, self.paragraphs.at(start), how)

    def _find(self, quote: str) -> tuple[int, int, str] | None:
        at = self.text.find(quote)
        if at >= 0:
            return at, at + len(quote), "exact"
        norm, wanted = self.normalised, _normalise(quote)
        at = norm.text.find(wanted)
        if at >= 0:
            return (*norm.span(at, len(wanted)), "whitespace")
        folded = _fold(wanted)
        at = norm.folded.find(folded)
        if at >= 0:
            return (*norm.span(at, len(folded)), "case")
        for piece in _pieces(quote):
            probe = _fold(piece)
            at = norm.folded.find(probe)
            if at >= 0:
                return (*norm.span(at, len(probe)), "part")
        return None


def locate(quote: str, text: str) -> Span | None:
    """Where `quote` stands in `text` (see the module docstring), or None when it is not there."""
    return JudgmentSource(text).locate(quote)


def pinpoint(quote: str, source: JudgmentSource | None) -> Pinpoint:
    """The schema's pinpoint of `quote` in `source` (`located=False` without a text or a match)."""
    span = source.locate(quote) if source is not None else None
    if span is None:
        return Pinpoint(located=False)
    return Pinpoint(located=True, start=span.start, end=span.end, paragraph=span.paragraph, match=span.match)


def _pinned_evidence(evidence: Evidence, source: JudgmentSource | None) -> Evidence:
    return evidence.model_copy(update=pinpoint(evidence.text, source).model_dump())


def pin_hits(hits: Sequence[Hit], texts: Callable[[Iterable[str]], Mapping[str, str]]) -> list[Hit]:
    """The hits with every piece of evidence they show (issue, reason, quoted slots) pinned to the
    judgments' texts: `texts(ids)` reads them in one call; each text is prepared once."""
    found = texts([h.judgment_id for h in hits]) if hits else {}
    sources = {i: JudgmentSource(t) for i, t in found.items() if t}
    out = []
    for hit in hits:
        source = sources.get(hit.judgment_id)
        out.append(
            hit.model_copy(
                update={
                    "legal_issue_at": pinpoint(hit.legal_issue, source),
                    "reason_at": pinpoint(hit.reason, source),
                    "evidence": [_pinned_evidence(e, source) for e in hit.evidence],
                }
            )
        )
    return out


def _slot_passages(summary: StructuredSummary) -> Iterator[tuple[str, str]]:
    """(slot name, passage) of every text slot; multi-passage slots split at their line breaks."""

    def passages(name: str) -> Iterator[tuple[str, str]]:
        return ((name, p) for p in getattr(summary, name).split("\n") if p.strip())

    yield from passages("facts")
    for side in ("appellants", "respondents"):
        yield from ((f"arguments.{side}[{i}]", t) for i, t in enumerate(getattr(summary.arguments, side)))
    yield from ((f"issues[{i}]", t) for i, t in enumerate(summary.issues))
    yield from passages("reasoning")
    yield from passages("final_judgment")
    for name in ("statutes", "precedents", "new_principles"):
        for i, ref in enumerate(getattr(summary, name)):
            for part in ("principle", "application"):
                if getattr(ref, part):
                    yield f"{name}[{i}].{part}", getattr(ref, part)


def summary_pinpoints(summary: StructuredSummary, text: str | None) -> SummaryPinpoints:
    """The summary with every passage of its text slots pinned to the judgment's `text` (None: the
    archive holds no text, as for an imported summary: every passage unlocated)."""
    source = JudgmentSource(text) if text else None
    passages = [Evidence(slot=slot, text=t, **pinpoint(t, source).model_dump()) for slot, t in _slot_passages(summary)]
    return SummaryPinpoints(
        summary=summary, paragraphs_numbered=bool(source and source.paragraphs.numbered), passages=passages
    )


def numbered_lines(text: str) -> Iterator[tuple[int | None, str]]:
    """The text's lines, each with the paragraph number that starts on it (None on the others)."""
    marks = dict((offset, number) for number, offset in ParagraphIndex(text).marks)
    at = 0
    for line in text.split("\n"):
        yield marks.get(at), line
        at += len(line) + 1


def where(pin: Pinpoint | Evidence | None) -> str:
    """How a pinpoint reads to a person: "para 12", "chars 310-520" (no numbered paragraph
    there), either with ", in part" when only a part of the quote was found, "not found in
    the judgment", or "" when it was not looked up."""
    if pin is None:
        return ""
    if not pin.located:
        return "not found in the judgment"
    part = ", in part" if pin.match == "part" else ""
    if pin.paragraph is not None:
        return f"para {pin.paragraph}{part}"
    return f"chars {pin.start}-{pin.end}{part}"


def judgment_pinpoints(
    judgment_id: str, summary: Callable[[str], StructuredSummary | None], text: Callable[[str], str | None]
) -> SummaryPinpoints:
    """`summary_pinpoints` of the archive's judgment `judgment_id` (`summary`, `text`: the archive's
    lookups by id). Raises UnknownJudgmentError when the archive has no summary of it."""
    found = summary(judgment_id)
    if found is None:
        raise UnknownJudgmentError(judgment_id)
    return summary_pinpoints(found, text(judgment_id))

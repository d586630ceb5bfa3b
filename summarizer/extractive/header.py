"""Header slots: parties, court, date, case number, kind of judgment, bench.

The header is the run of short lines before the first numbered or long paragraph
(reporters put the title, court, date, case number and "delivered by" there). Bench and
date are also looked for at the end, where judges sign. Nothing here assumes one
country: titles with "v." / "vs." / "versus", any "... Court ..." line, dates in the
usual written forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aqgr.summarizer.extractive.document import clip, normalise

MAX_HEADER_LINES = 16
MAX_HEADER_LINE = 400

_HEADER_END = re.compile(
    r"^\s*(?:the\s+(?:judgment|order|opinion)\b.{0,60}?\b(?:delivered|as follows)\b.*"
    r"|(?:common\s+|final\s+)?(?:j\s?u\s?d\s?g\s?e?\s?m\s?e\s?n\s?t|o\s?r\s?d\s?e\s?r)\s*:?)\s*$",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"\s*(?:\d{1,3}[.)]|\(\d{1,3}\))\s")
_VERSUS = re.compile(r"\s(?:v|vs|V|Vs|VS)\.?\s|\s(?:versus|Versus|VERSUS)\s")
_VERSUS_LINE = re.compile(r"\s*(?:v|vs|versus)\.?\s*$", re.IGNORECASE)
_IN_RE = re.compile(r"\s*(?:in re|in the matter of)\b", re.IGNORECASE)
_ROLE_TAIL = re.compile(
    r"[\s.\u2026]*(?:\.{2,}|\u2026)?\s*\(?(?:appellants?|petitioners?|respondents?|applicants?|plaintiffs?|defendants?|"
    r"complainants?|accused|opposite part(?:y|ies))\)?(?:\s*\(s\))?\s*[.:]*\s*$",
    re.IGNORECASE,
)
_SIDE_SPLIT = re.compile(r"\s*;\s*|\s*\(\d{1,2}\)\.?\s*")
_COURT = re.compile(r"\b(?:court|tribunal|commission)\b", re.IGNORECASE)
_COURT_PREFIX = re.compile(r"^\s*in\s+the\s+", re.IGNORECASE)

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
DATE = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?{_MONTH},?\s+\d{{4}}\b"
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b"
    r"|\b\d{1,2}[./-]\d{1,2}[./-](?:1[6-9]|20)\d{2}\b",
    re.IGNORECASE,
)
_CASE_NO = re.compile(
    r"\b(?:nos?|numbers?)\b\.?\s*(?:\(s\)\.?\s*)?[:.]?\s*\d"
    r"|\b\d+(?:\s*-\s*\d+)?\s*(?:of|OF|Of)\s+(?:1[6-9]|20)\d{2}\b"
    r"|\b(?:appeal|petition|case|suit|application|reference|revision)\b[^\n]{0,40}?\d+\s*/\s*\d{2,4}\b",
    re.IGNORECASE,
)
_CASE_NO_BODY = re.compile(
    r"\b(?:Civil|Criminal|Writ|Special Leave|Transfer|Review|Contempt|Original|First|Second)?\s*"
    r"(?:Appeal|Petition|Application|Case|Suit|Reference|Revision)\s*(?:\([A-Za-z.]{1,12}\)\s*)?"
    r"(?:Nos?\.?|Numbers?)\s*:?\s*\d[\d,\s-]{0,30}(?:\s*(?:of|/)\s*\d{2,4})?",
    re.IGNORECASE,
)
_UP_TO_YEAR = re.compile(r"^.*?\b(?:of|OF|Of)\s+(?:1[6-9]|20)\d{2}\b")
_BENCH_LINE = re.compile(
    r"^\s*(?:the\s+(?:judgment|order|opinion)\s+(?:of\s+the\s+court\s+)?was\s+delivered\s+by|coram|before|bench|present|judges?)"
    r"(?:\s*[:\-]\s*|(?<=by)\s+)(?P<names>.+)$",
    re.IGNORECASE,
)
_BENCH_SPLIT = re.compile(r"\s*(?:;|\band\b|&)\s*|(?<=J\.),\s*|(?<=J),\s*", re.IGNORECASE)
_JUDGE_TAIL = re.compile(r"[\s,]*(?:(?:C\.\s?)?J\.?|JJ\.?|CJI|C\.J\.I\.?)\s*[.,]*\s*$")
_SIGNATURE_DOTS = re.compile(r"^\s*[.\u2026]{3,}\s*,?\s*(?:C\.\s?)?J\.?\s*$")
_SIGNATURE_NAME = re.compile(r"^\s*[\[(]\s*([A-Z][A-Za-z.' ]{2,60}?)\s*[\])]\s*$")

# Kind of judgment: a label from a fixed vocabulary, chosen by the first cue that matches.
_KINDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), label)
    for pattern, label in (
        (r"special\s+leave\s+petition|\bS\.\s?L\.\s?P\b|\bSLP\b", "special leave petition"),
        (r"criminal\s+appeal|\bCr[il]?\.?\s?A\b\.?|appeal\s*\(cr[il]?\.?\)|\bCrl\.\s?A\b", "criminal appeal"),
        (r"civil\s+appeal|\bC\.\s?A\.|appeal\s*\(civil\)", "civil appeal"),
        (r"writ\s+petition|\bW\.\s?P\b|\bwrit\b", "writ petition"),
        (r"transfer\s+petition|\bT\.\s?P\.", "transfer petition"),
        (r"review\s+petition|\bR\.\s?P\.", "review petition"),
        (r"contempt", "contempt petition"),
        (r"\breference\b", "reference"),
        (r"\brevision\b", "revision"),
        (r"\bappeal", "appeal"),
        (r"\bpetition", "petition"),
        (r"\bapplication", "application"),
        (r"\bsuit\b", "suit"),
    )
)


_SELF_REFERENCE = re.compile(
    r"\b(?:this|these|the present|the instant)\s+(?:\w+\s+){0,3}?(?:appeals?|petitions?|references?|applications?|suits?|revisions?)\b",
    re.IGNORECASE,
)


@dataclass
class Header:
    court: str | None = None
    case_number: str | None = None
    judgment_kind: str | None = None
    appellants: list[str] = field(default_factory=list)
    respondents: list[str] = field(default_factory=list)
    date: str | None = None
    bench: list[str] = field(default_factory=list)
    body_start: int = 0  # offset of the first body character


def _header_lines(text: str) -> tuple[list[str], int]:
    """The leading header lines (whitespace-normalised) and the offset where the body starts.

    The header ends after a "delivered by" / "JUDGMENT" line when one comes early, else
    before the first long or numbered line.
    """
    lines: list[str] = []
    pos = 0
    for _ in range(MAX_HEADER_LINES + 4):
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        line = text[pos:end]
        if line.strip():
            lines.append(normalise(line))
            if len(line) <= MAX_HEADER_LINE and _HEADER_END.match(line):
                return lines, min(end + 1, len(text))
        if nl < 0:
            break
        pos = end + 1
    lines = []
    pos = 0
    while pos < len(text) and len(lines) < MAX_HEADER_LINES:
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        line = text[pos:end]
        if line.strip():
            if len(line) > MAX_HEADER_LINE or (_NUMBERED.match(line) and lines):
                return lines, pos
            lines.append(normalise(line))
        pos = end + 1
    if pos >= len(text) and len(lines) <= 3:
        return [], 0  # a short text: it is all body
    return lines, min(pos, len(text))


def _side(text: str) -> list[str]:
    text = _ROLE_TAIL.sub("", text)
    names = [part.strip(" ,.:;-") for part in _SIDE_SPLIT.split(text)]
    return [name for name in names if any(ch.isalpha() for ch in name)]


def _parties(lines: list[str]) -> tuple[list[str], list[str], int | None]:
    for i, line in enumerate(lines):
        if _VERSUS_LINE.fullmatch(line) and 0 < i < len(lines) - 1:
            return _side(lines[i - 1]), _side(lines[i + 1]), i
        match = _VERSUS.search(line)
        if match and line[: match.start()].strip() and line[match.end() :].strip():
            return _side(line[: match.start()]), _side(line[match.end() :]), i
    for i, line in enumerate(lines[:3]):
        if _IN_RE.match(line):
            return _side(line), [], i
    return [], [], None


def _court(lines: list[str], skip: set[int]) -> tuple[str | None, int | None]:
    for i, line in enumerate(lines):
        if i not in skip and len(line) <= 150 and _COURT.search(line) and not _BENCH_LINE.match(line):
            return _COURT_PREFIX.sub("", line).strip(" ,.:"), i
    return None, None


def _date(lines: list[str], text: str) -> str | None:
    for line in lines:
        match = DATE.search(line)
        if match:
            return normalise(match.group(0))
    for line in reversed(text[-2000:].split("\n")[-15:]):
        match = DATE.search(line) if len(line) <= 80 else None
        if match:  # a signature line: "New Delhi, March 5, 2010"
            return normalise(match.group(0))
    return None


def _case_number(lines: list[str], skip: set[int], text: str) -> str | None:
    for i, line in enumerate(lines):
        if i in skip or _BENCH_LINE.match(line) or DATE.fullmatch(line):
            continue
        if _CASE_NO.search(line):
            up_to_year = _UP_TO_YEAR.match(line)
            number = up_to_year.group(0) if up_to_year and len(up_to_year.group(0)) <= 200 else clip(line, 150)
            return number.strip(" ,.;:") or None
    match = _CASE_NO_BODY.search(text, 0, 3000)
    return normalise(match.group(0)).strip(" ,.;:") if match else None


def judgment_kind(case_number: str | None, opening: str) -> str | None:
    """The kind from the case number, else from "this appeal ..." in the opening lines."""
    self_reference = _SELF_REFERENCE.search(opening)
    for source in (case_number or "", self_reference.group(0) if self_reference else ""):
        for pattern, label in _KINDS:
            if pattern.search(source):
                return label
    return None


def _judges(names: str) -> list[str]:
    judges = []
    for part in _BENCH_SPLIT.split(names):
        name = _JUDGE_TAIL.sub("", part).strip(" ,.:;")
        if sum(ch.isalpha() for ch in name) >= 3 and name not in judges:
            judges.append(name)
    return judges


def _bench(lines: list[str], text: str) -> list[str]:
    judges: list[str] = []
    for line in lines:
        match = _BENCH_LINE.match(line)
        if match:
            judges += [j for j in _judges(match.group("names")) if j not in judges]
    tail_lines = [normalise(line) for line in text[-3000:].split("\n")]
    for before, line in zip(tail_lines, tail_lines[1:]):
        if _SIGNATURE_DOTS.match(before):
            match = _SIGNATURE_NAME.match(line)
            if match and match.group(1).strip() not in judges:
                judges.append(match.group(1).strip())
    return judges


def parse_header(text: str) -> Header:
    """Header slots of a judgment; every slot may be empty, nothing raises."""
    lines, body_start = _header_lines(text)
    appellants, respondents, title = _parties(lines)
    skip = {title} if title is not None else set()
    court, court_line = _court(lines, skip)
    if court_line is not None:
        skip.add(court_line)
    case_number = _case_number(lines, skip, text)
    return Header(
        court=court,
        case_number=case_number,
        judgment_kind=judgment_kind(case_number, text[body_start : body_start + 1500]),
        appellants=appellants,
        respondents=respondents,
        date=_date(lines, text),
        bench=_bench(lines, text),
        body_start=body_start,
    )

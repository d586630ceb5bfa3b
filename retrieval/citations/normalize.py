"""Normalising case titles and reporter citations so that a mention matches a title.

Titles: case, punctuation, honorifics, "and others" / "& ors", "State of X" / "X State",
common abbreviations ("U.P.", "Ltd.", "Corpn.", "UOI") and initials are folded, so
"State of U.P." and "State Of Uttar Pradesh" give the same tokens. Reporter citations
(Indlaw, AIR, SCC, SCR, Cri LJ, JT) become keys such as "scc:1994:3:112", so
"(1994) 3 SCC 112" and "1994 (3) SCC 112" are one citation. `citations(text, every_form=True)`
also reads numbered supplements, SCALE, SCC OnLine, INSC, MANU, ILR, MLJ, AC and All ER citations, in any letter
case, for checking what a model wrote; the graph links only the forms above.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

# Multi-word abbreviations, expanded before tokenising (regex on the raw text -> words).
_STATES = [
    ("U", "P", "Uttar Pradesh"),
    ("M", "P", "Madhya Pradesh"),
    ("A", "P", "Andhra Pradesh"),
    ("H", "P", "Himachal Pradesh"),
    ("T", "N", "Tamil Nadu"),
    ("W", "B", "West Bengal"),
]
# "UP" -> "Uttar Pradesh": the two-letter forms of the states above.
STATE_ABBREVIATIONS: dict[str, str] = {(a + b).lower(): name for a, b, name in _STATES}
# Each pattern begins with its first letter, the word boundary before it checked behind
# ("U(?<=\bU)" is "\bU"): a pattern that starts with a literal is searched for by that
# literal, one that starts with "\b" is tried at every position (100x slower on a judgment).
# The six states are one pattern (a class of first letters, the pair looked up): one scan of
# the text instead of six. The others carry what every match holds: one of these strings in
# the text, or (the case-insensitive UOI and NCT) in its lower case, where "ı" is read as "i"
# (re.I matches "I" to "ı" and "İ"). A text without them is not scanned: a case-insensitive
# pattern is tried at every position.
_STATE_OF: dict[tuple[str, str], str] = {(a, b): f" {name} " for a, b, name in _STATES}
_FIRSTS = "".join(sorted({a for a, _, _ in _STATES}))
_SECONDS = "".join(sorted({b for _, b, _ in _STATES}))
_STATE = re.compile(rf"([{_FIRSTS}])(?<=\b[{_FIRSTS}])\.?\s?([{_SECONDS}])\b\.?")  # "U.P.", "UP" (capitals only)


def _dotted(a: str, b: str, c: str) -> tuple[str, ...]:
    """The lower-case forms of a.b.c with or without each dot ("uoi", "u.oi", "uo.i", "u.o.i")."""
    return tuple(f"{a}{x}{b}{y}{c}" for x in ("", ".") for y in ("", "."))


_PHRASES: tuple[tuple[re.Pattern, str, tuple[str, ...], bool], ...] = tuple(
    [
        (re.compile(p, re.I), r, needs, lower)
        for p, r, needs, lower in [
            (r"J(?<=\bJ)\s?&\s?K\b", " Jammu and Kashmir ", ("&",), False),
            (r"U(?<=\bU)\.?O\.?I\b\.?", " Union of India ", _dotted("u", "o", "i"), True),
            (r"M(?<=\bM)/s\.?", " ", ("/",), False),
            (r"N(?<=\bN)\.?C\.?T\b\.?", " National Capital Territory ", _dotted("n", "c", "t"), True),
            (r"&", " and ", ("&",), False),
            (r"'s\b", " ", ("'",), False),
        ]
    ]
    # "Hussainara Khatoon (I)" and "(IV)" are different judgments: keep the numeral as a word.
    + [(re.compile(r"\(\s*(I{1,3}|IV|VI{0,3}|IX|X)\s*\)", re.I), r" No\1 ", ("(",), False)]
)


def _state(m: re.Match) -> str:
    return _STATE_OF.get((m[1], m[2]), m[0])  # a pair that is no state ("U.N.") stays as written


_WORDS: dict[str, str] = {
    "ltd": "limited",
    "pvt": "private",
    "co": "company",
    "coop": "cooperative",
    "corpn": "corporation",
    "corp": "corporation",
    "govt": "government",
    "admn": "administration",
    "admin": "administration",
    "assn": "association",
    "bd": "board",
    "commr": "commissioner",
    "dept": "department",
    "deptt": "department",
    "mfg": "manufacturing",
    "intl": "international",
    "natl": "national",
    "secy": "secretary",
    "dist": "district",
    "distt": "district",
    "vs": "v",
    "versus": "v",
    "ors": "others",
    "md": "mohammad",
    "mohd": "mohammad",
    "mohammed": "mohammad",
    "muhammad": "mohammad",
    "thr": "through",
    "thru": "through",
    "anr": "another",
    "orissa": "odisha",
    "uttaranchal": "uttarakhand",
}
_DROP = frozenset("""the of shri sri smt smt mr mrs ms dr kumari km late messrs m s and etc""".split())
_TRAILING = frozenset("others another anr ors etc connected matters cases appeals".split())


class Token(NamedTuple):
    word: str  # normalised word
    cap: bool  # the raw word began with a capital letter or a digit
    start: int  # offset of the raw word in the (phrase-expanded) text
    end: int


def expand(text: str) -> str:
    text = _STATE.sub(_state, text)
    lower = None  # text.lower(), made when first needed and again after a change
    for pattern, repl, needs, in_lower in _PHRASES:
        if in_lower and lower is None:
            lower = text.lower().replace("ı", "i")
        within = lower if in_lower else text
        if any(n in within for n in needs):
            text, changed = pattern.subn(repl, text)
            if changed:
                lower = None
    return text


def tokens(text: str, expanded: bool = False) -> list[Token]:
    """Normalised word tokens of `text` (initials, honorifics and function words dropped)."""
    if not expanded:
        text = expand(text)
    out = []
    for m in re.finditer(r"[A-Za-z0-9]+", text):
        raw = m.group()
        word = raw.lower()
        word = _WORDS.get(word, word)
        if word in _DROP or (len(word) == 1 and not word.isdigit()):
            continue
        out.append(Token(word, raw[0].isupper() or raw[0].isdigit(), m.start(), m.end()))
    return out


def party_key(name: str) -> tuple[str, ...]:
    """The normalised words of one party: "State Of U.P. & Ors" -> ("state", "uttar", "pradesh")."""
    words = [t.word for t in tokens(name)]
    while words and words[-1] in _TRAILING:
        words.pop()
    if len(words) > 1 and words[-1] == "state" and words[0] != "state":
        words = ["state", *words[:-1]]  # "Bihar State" -> "State of Bihar"
    return tuple(words)


_ALIAS = re.compile(
    r"\s(?:@|alias|urf)\s.*$|\(\s*(?:dead|d)\s*\).*$|\bthr(?:ough|\.)?\s+(?:his|her|its|their)?\s*l\.?\s?rs?\b.*$", re.I
)


def party_variants(name: str) -> set[tuple[str, ...]]:
    """The forms under which a party may be cited: as titled, without its alias or
    "(dead) by LRs" tail, and cut at its first comma or bracket ("Income Tax Officer,
    Special Circle" -> "Income Tax Officer")."""
    forms = {name, _ALIAS.sub("", name)}
    forms |= {re.split(r"[,(]", f, maxsplit=1)[0] for f in list(forms)}
    return {k for k in map(party_key, forms) if k}


# ---------------------------------------------------------------- reporter citations

_YEAR = r"((?:18|19|20)\d{2})"
_PATTERNS: tuple[tuple[str, str], ...] = (
    # A number glued to the next citation's year ("SC 10131991") is cut before that year.
    ("indlaw", _YEAR + r"\s+Indlaw\s+([A-Z]{2,6})\s+(\d{1,5}?)(?=(?:18|19|20)\d{2}\b|\b)"),
    ("air", r"A(?<=\bA)\.?\s?I\.?\s?R\.?\s*\(?" + _YEAR + r"\)?\s*([A-Z][A-Za-z]{1,8})\.?\s*(\d+)"),
    (
        "scc",
        r"[(\[]?" + _YEAR + r"[)\]]?\s*\(?(\d{1,2}|Supp)\)?\s*S\.?\s?C\.?\s?C\.?\s*(?:\((?:Cri|L\s*&\s*S)\)\s*)?(\d+)",
    ),
    ("scr", r"[(\[]?" + _YEAR + r"[)\]]?\s*\(?(\d{1,2}|Supp)?\)?\s*S\.?\s?C\.?\s?R\.?\s*(\d+)"),
    ("crilj", r"[(\[]?" + _YEAR + r"[)\]]?\s*Cr[il]?\.?\s*L\.?\s?J\.?\s*(\d+)"),
    ("jt", r"J(?<=\bJ)\.?\s?T\.?\s*" + _YEAR + r"\s*\((\d+)\)\s*S\.?\s?C\.?\s*(\d+)"),
)
# Forms the citation graph does not link (yet) but a check of free text must see:
# numbered supplements ("1995 Supp (2) SCC 10"), SCALE, SCC OnLine, neutral citations, Manupatra.
_SUPP = r"(Supp\.?\s*\(?\s*\d{1,2})\s*\)?"
_MORE_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "scc",
        r"[(\[]?" + _YEAR + r"[)\]]?\s*\(?" + _SUPP + r"\s*S\.?\s?C\.?\s?C\.?\s*(?:\((?:Cri|L\s*&\s*S)\)\s*)?(\d+)",
    ),
    ("scr", r"[(\[]?" + _YEAR + r"[)\]]?\s*\(?" + _SUPP + r"\s*S\.?\s?C\.?\s?R\.?\s*(\d+)"),
    ("scale", r"[(\[]?" + _YEAR + r"[)\]]?\s*\(?(\d{1,2}|Supp)?\)?\s*S\.?\s?C\.?\s?A\.?\s?L\.?\s?E\.?\s*(\d+)"),
    ("scconline", _YEAR + r"\s*SCC\s*On\s?Line\s*([A-Z][A-Za-z]{1,8})\.?\s*(\d+)"),
    ("insc", r"[(\[]?" + _YEAR + r"[)\]]?\s*INSC\s*(\d+)"),
    ("manu", r"\bMANU\s*/\s*([A-Z]{2,4})\s*/\s*(\d{1,5})\s*/\s*" + _YEAR),
    # Indian Law Reports ("ILR 1990 Kar 123", "I.L.R. (1950) 1 Cal 123"), Madras Law Journal
    # ("(1990) 2 MLJ 123"), English Appeal Cases ("[1932] AC 562": a bracketed year only, so that
    # "AC" in prose is no citation) and All England Reports ("[1990] 1 All ER 123").
    ("ilr", r"\bI\.?\s?L\.?\s?R\.?\s*[(\[]?" + _YEAR + r"[)\]]?\s*\(?(\d{1,2})?\)?\s*([A-Z][A-Za-z]{1,8})\.?\s*(\d+)"),
    ("mlj", r"[(\[]?" + _YEAR + r"[)\]]?\s*\(?(\d{1,2})?\)?\s*M\.?\s?L\.?\s?J\.?\s*(?:\((?:Cri|Crl)\.?\)\s*)?(\d+)"),
    ("ac", r"[(\[]" + _YEAR + r"[)\]]\s*(\d{1,2})?\s*A\.?\s?C\.?(?![A-Za-z])\s*(\d+)"),
    ("aller", r"[(\[]?" + _YEAR + r"[)\]]?\s*\(?(\d{1,2})?\)?\s*All\s?E\.?\s?R\.?\s*(\d+)"),
)
_CITATIONS = tuple((reporter, re.compile(p)) for reporter, p in _PATTERNS)
_ANY_YEAR = re.compile(_YEAR)
# Where a year begins (overlapping: "192019" holds two): a pattern that begins with its year,
# or a bracket and its year, can match only there or one character before.
_YEAR_STARTS = re.compile(r"(?=(?:18|19|20)\d{2})")
_YEAR_LED = frozenset(reporter for reporter, p in _PATTERNS if p.startswith((_YEAR, r"[(\[]?" + _YEAR)))
_EVERY_FORM = tuple((reporter, re.compile(p, re.I)) for reporter, p in _PATTERNS + _MORE_PATTERNS)
# Years a reporter's volume may trail the judgment by (AIR/SCC/SCR often print it next year).
REPORT_LAG = {
    "indlaw": 0,
    "air": 1,
    "scc": 1,
    "scr": 1,
    "crilj": 1,
    "jt": 1,
    "scale": 1,
    "scconline": 0,
    "insc": 0,
    "manu": 0,
    "ilr": 1,
    "mlj": 1,
    "ac": 1,
    "aller": 1,
}


class Citation(NamedTuple):
    key: str  # e.g. "scc:1994:3:112"
    reporter: str
    year: int
    start: int
    end: int


def citations(text: str, *, every_form: bool = False) -> list[Citation]:
    """Every reporter citation in `text`, in text order (overlaps resolved: first, longest).

    `every_form`: also the forms the citation graph does not link (numbered supplements,
    SCALE, SCC OnLine, INSC, MANU), in any letter case ("air 2020 sc 999"): for checking
    text a model wrote. The keys of the common forms are the same either way."""
    if not _ANY_YEAR.search(text):
        return []  # every form holds a year
    found = []
    years = None
    for reporter, pattern in _EVERY_FORM if every_form else _CITATIONS:
        if not every_form and reporter in _YEAR_LED:
            if years is None:
                years = [m.start() for m in _YEAR_STARTS.finditer(text)]
            matches = _year_led_matches(pattern, text, years)
        else:
            matches = pattern.finditer(text)
        for m in matches:
            parts = list(m.groups())
            if reporter == "manu":
                parts = parts[-1:] + parts[:-1]
            year = int(parts[0])
            rest = [re.sub(r"[^0-9a-z]+", "", str(p or "0").lower()) for p in parts[1:]]
            if reporter == "crilj":
                rest = rest[-1:]
            found.append(Citation(":".join([reporter, str(year), *rest]), reporter, year, m.start(), m.end()))
    found.sort(key=lambda c: (c.start, -(c.end - c.start)))
    kept: list[Citation] = []
    for c in found:
        if not kept or c.start >= kept[-1].end:
            kept.append(c)
    return kept


def _year_led_matches(pattern: re.Pattern, text: str, years: Sequence[int]) -> Iterator[re.Match]:
    """What `pattern.finditer(text)` finds, for a pattern that begins with a year (bracketed or
    not), tried only where a year begins: ten times faster on a judgment's paragraphs, whose
    regular-expression scan is otherwise tried at every character."""
    pos = 0
    for year in years:
        for start in (year - 1, year) if year and text[year - 1] in "([" else (year,):
            if start < pos:
                continue
            m = pattern.match(text, start)
            if m is not None:
                yield m
                pos = m.end()
                break


def year_fits(citation: Citation, year: int | None) -> bool:
    """Can a judgment of `year` be reported under this citation's year?"""
    if year is None:
        return True
    return year <= citation.year <= year + REPORT_LAG[citation.reporter]

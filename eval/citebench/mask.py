"""AILA-style masking of a query's facts, deterministic and model-free.

Sections -> "Section S"; statutes -> "Act A1", "Act A2" (numbered by first appearance,
common abbreviations folded: "I.P.C." is the Indian Penal Code); persons -> "P1", "P2"
(numbered by first appearance of each surface form). Persons are the natural-person
parties of the title, names introduced by an honorific or a cue ("Shri", "Smt.",
"one", "deceased", "son of"), and names followed by a witness/accused tag ("(PW-2)").
"""

from __future__ import annotations

import re

_NUM = r"\d+[A-Z]{0,2}(?:\s*\(\w{1,4}\))*"
_JOIN = r"(?:\s*(?:,|/|&|and|or|to|read with|r/w|r\.w\.)\s*)"
SECTION = re.compile(
    r"\b(?:[Uu]/[Ss]s?\.?|(?:[Ss]ub-?)?[Ss]ections?|[Ss]ecs?\.|Ss?\.)\s*" + _NUM + r"(?:" + _JOIN + _NUM + r")*"
)
_KNOWN_ACTS = [
    (
        r"\b(?:the\s+)?(?:Indian\s+Penal\s+Code|I\.\s?P\.\s?C\b\.?|IPC\b|Penal\s+Code)(?:,?\s*\d{4})?",
        "indian penal code",
    ),
    (
        r"\b(?:the\s+)?(?:Code\s+of\s+Criminal\s+Procedure|Criminal\s+Procedure\s+Code|Cr\.?\s?P\.\s?C\b\.?|Cr\.?P\.?C\b\.?|CrPC\b)(?:,?\s*\d{4})?",
        "code of criminal procedure",
    ),
    (
        r"\b(?:the\s+)?(?:Code\s+of\s+Civil\s+Procedure|Civil\s+Procedure\s+Code|C\.\s?P\.\s?C\b\.?|CPC\b)(?:,?\s*\d{4})?",
        "code of civil procedure",
    ),
]
# A named statute: capitalised words (small joining words allowed) ending in Act/Code/Ordinance.
_NAMED_ACT = re.compile(
    r"\b(?:the\s+)?((?:[A-Z][\w'()-]*|\((?:[A-Z][\w'-]*|of|and|for|in|on|to|the|\s)+\))"
    r"(?:\s+(?:[A-Z][\w'()-]*|of|and|for|in|on|to|\((?:[A-Z][\w'-]*|of|and|for|in|on|to|the|\s)+\))){0,9}"
    r"\s+(?:Act|Code|Ordinance))(?:,?\s*(\d{4}))?\b"
)
_NOT_ACT_START = frozenset("The This That Court High Supreme Section Sections Under Rule Article".split())

_NAME = r"(?:[A-Z]\.\s?)*[A-Z][a-z]{2,}(?:\s+(?:[A-Z]\.\s?)*[A-Z][a-z]{2,}){0,3}"
_CUE = re.compile(
    r"\b(?:Shri|Sri|Smt\.?|Mr\.?|Mrs\.?|Ms\.?|Dr\.?|Kumari|Km\.|one|named|deceased|accused|"
    r"son of|daughter of|wife of|husband of|widow of|[SDW]/[Oo]\.?|brother|sister|father|mother|son|daughter|"
    r"wife|husband|nephew|uncle|informant|complainant|witness|appellant|respondent|petitioner)\s+(" + _NAME + ")"
)
_TAGGED = re.compile(r"(" + _NAME + r")\s*[(\[,]\s*(?:P\.?\s?W|D\.?\s?W|A|C\.?\s?W)[\s.-]*\d+")
_NOT_NAME = frozenset(
    """The State Court High Supreme Sessions Appellant Appellants Respondent Respondents Petitioner
Government Union India Police Inspector Station District Magistrate Judge Justice Section Act Code Chief Special
Additional Collector Commissioner Officer Director Secretary Company Corporation Bank Board Municipal Council Society
Trust University Limited Ltd Private Pvt Tax Income Department Authority Committee Sub Deputy Assistant Senior Junior
Civil Criminal Central Public Prosecutor Counsel Advocate General Attorney Solicitor Tribunal Railway Railways
Administration Mills Industries Others Another Anr Ors Ministry Forest Revenue Excise Customs Estate Board""".split()
)
_ROLE = re.compile(r"\s+(?:and|&)\s+|,\s*|\s+(?:@|alias|urf)\s+", re.I)
_TITLE_NOISE = re.compile(
    r"\((?:dead|d)\).*$|\bby\s+l\.?rs\b.*$|\b(?:and|&)\s+(?:others|ors|anr|another)\b.*$"
    r"|\b(?:etc|others|ors|anr)\b\.?",
    re.I,
)


def title_persons(*parties: str) -> list[str]:
    """The natural persons among a title's parties ("Anil Kumar and Ors" -> ["Anil Kumar"])."""
    names = []
    for party in parties:
        for piece in _ROLE.split(_TITLE_NOISE.sub("", party)):
            piece = re.sub(r"^(?:Shri|Sri|Smt\.?|Mr\.?|Mrs\.?|Dr\.?|M/s\.?|The)\s+", "", piece.strip())
            words = piece.split()
            if words and not any(w.strip(".,()") in _NOT_NAME for w in words) and piece[:1].isupper():
                names.append(piece)
    return names


def person_names(text: str, parties: tuple[str, ...] = ()) -> list[str]:
    found = set(title_persons(*parties))
    for pattern in (_CUE, _TAGGED):
        for m in pattern.finditer(text):
            name = m.group(1).strip()
            if name.split()[0] not in _NOT_NAME:
                found.add(name)
    # Each multi-word name also hides its parts ("Manoj Kumar" -> "Manoj", "Kumar").
    parts = {w for name in found for w in name.split() if len(w) >= 3 and w[0].isupper() and w not in _NOT_NAME}
    return sorted(found | parts, key=lambda s: (-len(s), s))


def mask_sections(text: str) -> str:
    text = re.sub(r"\b[Uu]/[Ss]s?\.?\s*(?=\d)", "under Section ", text)
    return SECTION.sub("Section S", text)


def mask_acts(text: str) -> str:
    numbers: dict[str, int] = {}

    def act(canonical: str) -> str:
        numbers.setdefault(canonical, len(numbers) + 1)
        return f"Act A{numbers[canonical]}"

    spans = []
    for pattern, canonical in _KNOWN_ACTS:
        spans += [(m.start(), m.end(), canonical) for m in re.finditer(pattern, text)]
    for m in _NAMED_ACT.finditer(text):
        name = m.group(1)
        first = name.split()[0]
        if first in _NOT_ACT_START or name in ("Act", "Code"):
            continue
        spans.append((m.start(1), m.end(), " ".join(name.lower().split())))
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out, pos = [], 0
    for start, end, canonical in spans:
        if start < pos:
            continue
        out += [text[pos:start], act(canonical)]
        pos = end
    return "".join(out + [text[pos:]])


def mask_persons(text: str, names: list[str]) -> str:
    if not names:
        return text
    pattern = re.compile(r"(?<![\w.])(?:" + "|".join(re.escape(n) for n in names) + r")(?!\w)")
    numbers: dict[str, int] = {}

    def person(m: re.Match) -> str:
        numbers.setdefault(m.group(), len(numbers) + 1)
        return f"P{numbers[m.group()]}"

    return pattern.sub(person, text)


def mask(text: str, parties: tuple[str, ...] = ()) -> str:
    """Sections, then statutes, then persons (names read before anything is replaced)."""
    names = person_names(text, parties)
    return mask_persons(mask_acts(mask_sections(text)), names)

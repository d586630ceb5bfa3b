"""Statutes and precedents a judgment refers to, each with the sentences around it.

Statutes: provisions ("Section 302 of the Indian Penal Code", "Art. 14 of the
Constitution", "u/s. 23", "Sections 3 and 4 of the X Act, 1950") and named enactments
("the Land Acquisition Act, 1894"). Precedents: case titles around "v." / "vs." /
"versus" with any law-report citation that follows, and bare law-report citations
("(1978) 1 SCC 248", "AIR 1973 SC 1461", "[1955] 1 SCR 1045", "2004 Indlaw SC 123").
The principle is the sentence(s) where the reference is first explained; the
application a later sentence that applies it. All text is verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aqgr.summarizer.extractive.document import Document, Sentence, clip, normalise

# ---- statutes ------------------------------------------------------------------------

_PROVISION = r"(?:Sections?|Secs?\.|Ss?\.|u/ss?\.?|Articles?|Arts?\.|Rules?|Regulations?|Clauses?|Order)"
_NUM = r"\d{1,4}(?:[A-Z]{1,2}|\s?[A-Z](?![A-Za-z.]))?(?:\s?\([0-9a-zA-Z]{1,4}\)){0,4}"
_NUMS = rf"{_NUM}(?:\s*(?:,|and|or|to|&|/|-)\s*{_NUM}){{0,8}}"
_CONNECT = r"(?:of|and|for|on|the|in|to|&)"
_ACT = (
    rf"(?:(?:[A-Z][\w'&-]*|\([A-Z][\w' ]{{0,24}}\))\s+(?:{_CONNECT}\s+){{0,2}}){{0,9}}?"
    r"(?:Act|Code|Constitution|Rules|Regulations|Ordinance)\b(?:,?\s+(?:1[6-9]|20)\d{2}\b)?"
)
_ACT_ABBREVIATION = r"(?:I\.\s?P\.\s?C\.?|Cr\.\s?P\.\s?C\.?|C\.\s?P\.\s?C\.?|IPC|Cr\.?PC|CrPC|CPC)(?![A-Za-z])"
STATUTE = re.compile(
    rf"(?<![\w/])(?P<provision>{_PROVISION}\s*{_NUMS})"
    rf"(?:\s*,?\s+(?:of\s+)?(?:the\s+)?(?P<act>{_ACT_ABBREVIATION}|{_ACT}))?"
)
ACT = re.compile(rf"(?<![\w(/.-])(?P<act>[A-Z][A-Za-z'&-]+\s+(?:{_CONNECT}\s+){{0,2}}{_ACT})")
_ACT_LEADING = re.compile(
    r"^(?:(?:The|In|Under|By|That|This|And|As|For|See|Since|Where|When|If|Of|Thus|Hence|But|Now|"
    r"Section|Sections|Article|Articles|Rule|Rules|Clause|Chapter|Schedule|Part|Learned|Counsel|Court|"
    r"High|Supreme|Whether|Although|Though|Even|It|Also|Both|All|No|A|An|Any|the|of|and|in|under|by)\s+)+"
)
_GENERIC_ACT = re.compile(
    r"^(?:Central|State|Principal|Parent|Amending|Amendment|Old|New|Present|Main|Original|Earlier|Said|Repealed|"
    r"Impugned|Later|Former|Previous|Penal|Civil|Criminal|Special|General|Local|Union|Provincial|Federal|English|Indian)\s+\w+$"
)
_BARE_ACTS = {"act", "code", "constitution", "rules", "regulations", "ordinance"}

# ---- precedents ----------------------------------------------------------------------

_VERSUS = re.compile(r"\s(?:v|vs|Vs|VS)\.?\s|\s(?:versus|Versus|VERSUS)\s")  # not "V.": an initial
_REPORT = (
    r"\(\d{4}\)\s*\d{0,3}\s*(?:SCC|SCR|S\.C\.C\.|S\.C\.R\.|SCALE|JT)(?:\s*\((?:Cri|L&S|Tax)\))?\s*\d+"
    r"|\[\d{4}\]\s*(?:\d+\s*)?[A-Z][A-Za-z.]{1,8}(?:\s[A-Z][A-Za-z.]{1,8})?\s*\d+"
    r"|AIR\s*\(?\d{4}\)?\s*[A-Z][A-Za-z]*\.?\s*\d+"
    r"|\d{4}\s*(?:\(\d+\)\s*)?(?:SCC|SCR|SCALE|JT|Supp\.?|Cri\.?\s?L\.?\s?J\.?|Cr\.?\s?L\.?\s?J\.?|Crl\.?\s?L\.?\s?J\.?)\s*(?:\(\d+\)\s*)?\d+"
    r"|\d{4}\s+Indlaw\s+[A-Z]+\s+\d+"
    r"|\d{1,4}\s+(?:U\.\s?S\.|C\.\s?L\.\s?R\.|L\.\s?Ed\.?|S\.\s?Ct\.|F\.\s?\d?d|I\.\s?L\.\s?R\.)\s*\d+"
)
REPORT = re.compile(_REPORT)
_REPORTS_AFTER = re.compile(rf"[\s,:;(\[]*(?:reported\s+in\s+|in\s+)?(?:{_REPORT})(?:[\s,:;=]*(?:{_REPORT})){{0,3}}\)?")
_NAME_CONNECTORS = {
    "of",
    "and",
    "the",
    "&",
    "for",
    "in",
    "de",
    "da",
    "bin",
    "d'",
    "others",
    "another",
    "ors.",
    "anr.",
    "ors",
    "anr",
}
_NAME_OPENERS = {
    "in",
    "see",
    "also",
    "vide",
    "cf.",
    "case",
    "and",
    "of",
    "the",
    "this",
    "that",
    "thus",
    "similarly",
    "however",
    "further",
    "following",
    "relying",
    "reliance",
    "then",
    "again",
    "as",
    "by",
    "on",
    "per",
    "under",
    "where",
    "while",
    "decision",
    "judgment",
    "court",
    "held",
    "followed",
    "but",
    "although",
    "even",
    "learned",
    "counsel",
    "placed",
}
_ABBREVIATED = re.compile(
    r"^(?:(?:[A-Z]\.)+|Ltd\.|Co\.|Corpn\.|Ors\.|Anr\.|M/s\.|Pvt\.|Dr\.|Mr\.|Mrs\.|Smt\.|Inc\.|Bros\.|St\.|Govt\.)$"
)
_MAX_NAME_WORDS = 10
_REPORT_START = re.compile(r"^[\[(]?(?:\d|AIR\b|SCC\b|SCR\b|S\.C\.R\.|S\.C\.C\.)")

# ---- shared cues ---------------------------------------------------------------------

_EXPLAINS = re.compile(
    r"\b(?:provides?|lays? down|laid down|reads?|says?|enacts?|contemplates?|mandates?|prescribes?|defines?|deals? with|"
    r"envisages?|empowers?|stipulates?|postulates?|is as follows|held|observed|ruled|opined|pointed out|enunciated)\b",
    re.IGNORECASE,
)
_APPLIES = re.compile(
    r"\b(?:present case|instant case|this case|case (?:before us|in hand|at hand)|facts of|appl(?:y|ies|ied|icable)|"
    r"attracted|squarely|distinguish\w*|relied|reliance|follow(?:ed|ing)|invoked?|violat\w*|convicted|charged|"
    r"the appellants?|the respondents?|the petitioners?)\b",
    re.IGNORECASE,
)


@dataclass
class Reference:
    key: str
    name: str
    first: int  # offset of the first mention
    sentences: list[Sentence] = field(default_factory=list)
    count: int = 0
    explicit: bool = True  # statute with its enactment named; precedent with a title


@dataclass(frozen=True)
class Cited:
    name: str
    principle: str
    application: str


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def _add(found: dict[str, Reference], key: str, name: str, offset: int, doc: Document, explicit: bool = True) -> None:
    ref = found.get(key)
    if ref is None:
        ref = found[key] = Reference(key, name, offset, explicit=explicit)
    elif len(name) > len(ref.name) and ref.count < 3:
        ref.name = name  # prefer the fuller form seen early (title with its citation)
    ref.count += 1
    sentence = doc.sentence_at(offset)
    if sentence is not None and (not ref.sentences or ref.sentences[-1].index != sentence.index):
        ref.sentences.append(sentence)


def _clean_act(act: str) -> str:
    return _ACT_LEADING.sub("", act).strip(" ,.")


def _statute_refs(doc: Document) -> dict[str, Reference]:
    found: dict[str, Reference] = {}
    covered_acts: set[str] = set()
    for match in STATUTE.finditer(doc.text, doc.body_start):
        provision = normalise(match.group("provision")).rstrip(" ,-/&")
        act = _clean_act(match.group("act") or "")
        if act.lower() in _BARE_ACTS - {"constitution"}:
            act = ""
        if act:
            start = match.start()
            name = normalise(doc.text[start : match.end("act")])
            covered_acts.add(_key(act))
            _add(found, _key(provision + " " + act), name, start, doc)
        else:
            _add(found, _key(provision), provision, match.start(), doc, explicit=False)
    for match in ACT.finditer(doc.text, doc.body_start):
        act = _clean_act(normalise(match.group("act")))
        if act.lower() in _BARE_ACTS or len(act) < 8 or not act[:1].isupper() or _GENERIC_ACT.match(act):
            continue
        key = _key(act)
        if key not in covered_acts:
            _add(found, "act " + key, act, match.start() + match.group("act").find(act.split()[0]), doc)
    return found


def _walk_left(text: str, anchor: int) -> tuple[int, list[str]]:
    """Start offset and words of the party name that ends at `anchor`."""
    window_start = max(0, anchor - 160)
    words = [(m.start() + window_start, m.group(0)) for m in re.finditer(r"\S+", text[window_start:anchor])]
    taken: list[tuple[int, str]] = []
    for offset, word in reversed(words):
        if len(taken) >= _MAX_NAME_WORDS or word[-1] in ",;:" or (word.endswith(".") and not _ABBREVIATED.match(word)):
            break
        if not (word[0].isupper() or word[0] in "(&\"'" or word.lower() in _NAME_CONNECTORS):
            break
        taken.append((offset, word))
    taken.reverse()
    while taken and (taken[0][1].lower().strip("(\"'") in _NAME_OPENERS or not taken[0][1][0].isalnum()):
        taken.pop(0)
    return (taken[0][0] if taken else anchor), [w for _, w in taken]


def _walk_right(text: str, anchor: int) -> tuple[int, list[str]]:
    """End offset and words of the party name that starts at `anchor`."""
    words = [(m.start() + anchor, m.group(0)) for m in re.finditer(r"\S+", text[anchor : anchor + 160])]
    taken: list[tuple[int, str]] = []
    for offset, word in words:
        if len(taken) >= _MAX_NAME_WORDS:
            break
        bare = word.rstrip(",;:.)")
        if not bare or not (bare[0].isupper() or bare[0] in "(&" or bare.lower() in _NAME_CONNECTORS):
            break
        if _REPORT_START.match(word):
            break
        taken.append((offset, word))
        if word[-1] in ",;:" or (word.endswith(".") and not _ABBREVIATED.match(word)):
            break
    while taken and taken[-1][1].rstrip(",;:.").lower() in {"of", "and", "the", "&", "for", "in"}:
        taken.pop()
    if not taken:
        return anchor, []
    offset, word = taken[-1]
    word = word.rstrip(",;:") if not _ABBREVIATED.match(word.rstrip(",;:")) else word.rstrip(",;:")
    if word.endswith(".") and not _ABBREVIATED.match(word):
        word = word[:-1]
    name = text[anchor : offset + len(word)]
    if word.endswith(")") and name.count("(") < name.count(")"):
        word = word[:-1]
    return offset + len(word), [w for _, w in taken]


def _precedent_refs(doc: Document, own_title: str) -> dict[str, Reference]:
    found: dict[str, Reference] = {}
    text = doc.text
    spans: list[tuple[int, int]] = []
    own_key = _key(own_title)
    for match in _VERSUS.finditer(text, doc.body_start):
        start, left = _walk_left(text, match.start())
        end, right = _walk_right(text, match.end())
        if not left or not right or not any(w[0].isupper() for w in left) or not right[0][0].isupper():
            continue
        key = _key(" ".join(left) + " v " + " ".join(right))
        if own_key and key == own_key:
            continue
        reports = _REPORTS_AFTER.match(text, end)
        if reports and reports.end() - end < 200:
            end = reports.end()
            if text[end - 1] == ")" and text[start:end].count("(") < text[start:end].count(")"):
                end -= 1
        spans.append((start, end))
        _add(found, key, normalise(text[start:end]).rstrip(" ,;:"), start, doc)
    spans.sort()
    for match in REPORT.finditer(text, doc.body_start):
        if any(a <= match.start() < b for a, b in spans[max(0, _bisect(spans, match.start()) - 1) :][:2]):
            continue
        _add(found, "report " + _key(match.group(0)), normalise(match.group(0)), match.start(), doc, explicit=False)
    return found


def _bisect(spans: list[tuple[int, int]], offset: int) -> int:
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid][0] <= offset:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _explain(ref: Reference, doc: Document, limit: int) -> tuple[str, str]:
    """(principle, application): the sentence explaining the reference, and one applying it."""
    if not ref.sentences:
        return "", ""
    principle_at = next((s for s in ref.sentences if _EXPLAINS.search(s.text)), ref.sentences[0])
    last = principle_at
    following = doc.sentences[principle_at.index + 1] if principle_at.index + 1 < len(doc.sentences) else None
    if (
        len(principle_at.text) < 160
        and following is not None
        and following.paragraph == principle_at.paragraph
        and following not in ref.sentences
    ):
        last = following
    principle = clip(doc.passage(principle_at, last), limit)
    later = [s for s in ref.sentences if s.index > last.index]
    application_at = next((s for s in reversed(later) if _APPLIES.search(s.text)), later[-1] if later else None)
    application = clip(application_at.text, limit) if application_at is not None else ""
    return principle, application


def _ranked(found: dict[str, Reference], cap: int) -> list[Reference]:
    refs = sorted(found.values(), key=lambda r: (not r.explicit, -r.count, r.first))
    return sorted(refs[:cap], key=lambda r: (not r.explicit, -r.count, r.first))


def statutes(doc: Document, *, cap: int, limit: int) -> list[Cited]:
    return [Cited(ref.name, *_explain(ref, doc, limit)) for ref in _ranked(_statute_refs(doc), cap)]


def precedents(doc: Document, *, own_title: str = "", cap: int, limit: int) -> list[Cited]:
    return [Cited(ref.name, *_explain(ref, doc, limit)) for ref in _ranked(_precedent_refs(doc, own_title), cap)]

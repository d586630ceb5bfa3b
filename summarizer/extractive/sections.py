"""Facts, arguments per side, reasoning, final order and who the case went for.

Sentences are classified by cue phrases ("learned counsel for the appellant contended",
"we are of the opinion", "the appeal is dismissed"); the slots are the verbatim
sentences, adjacent ones merged into passages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aqgr.summarizer.extractive.document import Cue, CueSet, Document, Sentence, clip

_APPELLANT_SIDE = r"(?:appellants?|petitioners?|accused|plaintiffs?|applicants?|assessees?|writ petitioners?)"
_RESPONDENT_SIDE = (
    r"(?:respondents?|State|prosecution|defendants?|complainants?|Union of India|Revenue|Department|Government|"
    r"Corporation|Commissioner|opposite part(?:y|ies)|caveators?)"
)
_SPEAKER = (
    r"(?:counsel|advocates?|advocate[- ]general|solicitor[- ]general|attorney[- ]general|Mr\.|Ms\.|Mrs\.|Shri|Sri)"
)
_SUBMITS = r"(?:contend|submi|urg|argu|canvass|point(?:ed|s)? out|maintain|assail|plead|stress|emphasi|press|question|rel(?:y|ied|ies) on)"


def _side_cues(side: str) -> CueSet:
    return CueSet(
        [
            Cue(
                "counsel-for",
                rf"\b{_SPEAKER}[^.;]{{0,80}}?\b(?:for|on behalf of|appearing for)\s+(?:the\s+)?(?:learned\s+)?{side}\b[^.;]{{0,120}}?\b{_SUBMITS}",
                3.0,
            ),
            Cue(
                "it-was-urged",
                rf"\b(?:it\s+(?:was|is|has\s+been)|was\s+it)\s+(?:\w+\s+){{0,2}}{_SUBMITS}\w*\s+(?:\w+\s+){{0,3}}(?:on\s+behalf\s+of|for|by)\s+the\s+{side}\b",
                3.0,
            ),
            Cue("side-urges", rf"\bthe\s+(?:learned\s+)?{side}\s+(?:has|have|had)?\s*{_SUBMITS}", 2.0),
        ]
    )


APPELLANT_ARGUMENTS = _side_cues(_APPELLANT_SIDE)
RESPONDENT_ARGUMENTS = _side_cues(_RESPONDENT_SIDE)
_CONTINUES = re.compile(
    r"^(?:He|She|They|It was (?:also |further )?|According to (?:him|her|them)|(?:Learned )?counsel (?:also|further)|Further|Furthermore|Moreover|In addition|Lastly|Finally)\b"
)

REASONING_CUES = CueSet(
    [
        Cue(
            "we-opine",
            r"\b(?:we are|I am|this court is|the court is)\s+(?:\w+\s+){0,2}of\s+the\s+(?:\w+\s+)?(?:opinion|view)\b",
            3.0,
        ),
        Cue("in-our-view", r"\bin\s+(?:our|my)\s+(?:\w+\s+)?(?:opinion|view|judgment)\b", 3.0),
        Cue("we-hold", r"\b(?:we|I)\s+(?:\w+\s+)?(?:hold|conclude|find|answer)\b", 2.5),
        Cue(
            "we-see",
            r"\b(?:we\s+(?:are|do|did|have|see|find)|I\s+(?:am|have|see|find))\s+(?:not\s+|no\s+|unable\s+|satisfied|inclined|persuaded|impressed|convinced|clearly|therefore)",
            2.0,
        ),
        Cue("we-agree", r"\b(?:we|I)\s+(?:\w+\s+)?(?:agree|accept|reject|uphold|endorse)\b", 2.0),
        Cue(
            "no-hesitation",
            r"\bno hesitation\b|\bno (?:merit|substance|force)\b|\bcannot be (?:accepted|sustained|countenanced|faulted)\b",
            2.0,
        ),
        Cue(
            "court-below",
            r"\bthe (?:high court|trial court|tribunal|courts? below|appellate court|learned (?:single )?judge)\s+(?:was|were|has|had|is|rightly|erred|committed|fell)\b",
            1.5,
        ),
        Cue(
            "it-is-clear",
            r"\bit (?:is|was) (?:therefore |thus )?(?:clear|evident|obvious|manifest|apparent|plain|established|well settled)\b|\bit follows\b",
            1.5,
        ),
        Cue(
            "therefore",
            r"\b(?:therefore|consequently|hence|thus|in (?:the|these) circumstances|in (?:the|this) view of the matter)\b",
            1.0,
        ),
    ]
)

ORDER_CUES = CueSet(
    [
        Cue(
            "appeal-allowed",
            r"\b(?:appeals?|petitions?|applications?|suits?|references?|revisions?|cases?|matters?)\b[^.;]{0,60}?"
            r"\b(?:is|are|stands?|shall stand|be|must be|should be|will be|hereby|accordingly|partly)[\s,]+"
            r"(?:\w+[\s,]+){0,2}(?:allowed|dismissed|disposed of|rejected|accepted|answered|quashed|granted|refused|withdrawn)",
            3.0,
        ),
        Cue(
            "terminal",
            r"^\s*(?:appeals?|petitions?|applications?|writ petitions?)\s+(?:partly\s+|accordingly\s+)?(?:allowed|dismissed|disposed of|rejected)",
            3.0,
        ),
        Cue(
            "order-accordingly",
            r"^\s*(?:order|ordered)\s+accordingly\b|\b(?:is|are|stands?|be)\s+(?:\w+\s+)?(?:dismissed|allowed)\b",
            3.0,
        ),
        Cue(
            "we-order",
            r"\b(?:we|I)[\s,]+(?:\w+[\s,]+){0,2}(?:allow|dismiss|reject|set aside|quash|remit|remand|acquit|direct|dispose|confirm|affirm|uphold)\w*\b",
            2.0,
        ),
        Cue(
            "dismiss-the-appeal",
            r"\b(?:dismiss|allow|reject)(?:es|ed)?\s+(?:the|this|these|his|her|their|its|both|all)\s+(?:\w+\s+)?(?:appeals?|petitions?|applications?)\b",
            3.0,
        ),
        Cue(
            "set-aside",
            r"\b(?:is|are|stands?|be|hereby)\s+(?:\w+\s+)?(?:set aside|quashed|acquitted|remitted|remanded|restored|upheld|affirmed|confirmed|modified|discharged|made absolute)\b",
            2.0,
        ),
        Cue(
            "costs",
            r"\bno order as to costs\b|\bwith costs\b|\bbear (?:their|its) own costs\b|\bcosts? (?:quantified|assessed)\b",
            2.0,
        ),
        Cue("rule", r"\brule (?:is )?(?:made absolute|discharged)\b", 2.0),
        Cue("accordingly", r"\baccordingly\b", 1.0),
    ],
    flags=re.IGNORECASE | re.MULTILINE,
)

_OUTCOME = re.compile(
    r"\b(?:(?P<won>allowed|allow|accepted|set aside|quashed|acquitted|acquit|made absolute|remitted|remanded|granted)"
    r"|(?P<lost>dismissed|dismiss|rejected|discharged|refused|upheld|uphold|affirmed|confirmed)"
    r"|(?P<neutral>disposed of|withdrawn))\b",
    re.IGNORECASE,
)
_EXPLICIT_OUTCOME = re.compile(
    r"\b(?:appeals?|petitions?|applications?|suits?|revisions?)\b[^.;]{0,60}?\b(?P<verb>allowed|dismissed|disposed of|rejected|accepted)\b",
    re.IGNORECASE,
)
_ROLE_WORDS = {
    "appellants": ("appellant", "petitioner", "applicant", "plaintiff"),
    "respondents": ("respondent", "defendant", "State"),
}


@dataclass(frozen=True)
class Arguments:
    appellants: list[str]
    respondents: list[str]


def arguments(doc: Document, *, cap: int, limit: int) -> tuple[Arguments, set[int]]:
    """Verbatim submissions per side, and the indices of the sentences used."""
    used: set[int] = set()
    sides: list[list[str]] = []
    for cues in (APPELLANT_ARGUMENTS, RESPONDENT_ARGUMENTS):
        scores = {i: s for i, s in cues.scores(doc).items() if i not in used and not doc.sentences[i].quoted}
        chosen = sorted(sorted(scores, key=lambda i: (-scores[i], i))[:cap])
        texts: list[str] = []
        for i in chosen:
            first = last = doc.sentences[i]
            nxt = doc.sentences[i + 1] if i + 1 < len(doc.sentences) else None
            if (
                nxt is not None
                and nxt.paragraph == first.paragraph
                and _CONTINUES.match(nxt.text)
                and len(first.text) < limit // 2
            ):
                last = nxt
            used.update(range(first.index, last.index + 1))
            text = clip(doc.passage(first, last), limit)
            if text not in texts:
                texts.append(text)
        sides.append(texts)
    return Arguments(*sides), used


def final_order(doc: Document, *, limit: int, tail_paragraphs: int = 6) -> tuple[str, set[int]]:
    """The closing order: the trailing paragraphs that carry order cues, from their first order sentence."""
    if not doc.sentences:
        return "", set()
    scores = ORDER_CUES.scores(doc)
    by_paragraph: dict[int, list[Sentence]] = {}
    for sentence in doc.sentences[-60:]:
        by_paragraph.setdefault(sentence.paragraph, []).append(sentence)
    paragraphs = sorted(by_paragraph, reverse=True)[:tail_paragraphs]
    first: Sentence | None = None
    for number in paragraphs:  # from the last paragraph back, while paragraphs carry order cues
        cued = [s for s in by_paragraph[number] if scores.get(s.index, 0.0) >= 2.0]
        if not cued:
            if first is not None or len(" ".join(s.text for s in by_paragraph[number])) > 200:
                break
            continue  # a short trailer line without a cue ("Appeal dismissed" is cued; a signature is not)
        first = cued[0]
    if first is None:
        return "", set()
    last = doc.sentences[-1]
    while first.index > 0 and len(doc.passage(first, last)) < 40:  # a bare "Order accordingly."
        previous = doc.sentences[first.index - 1]
        if previous.quoted or len(doc.passage(previous, last)) > limit:
            break
        first = previous
    if len(doc.passage(first, last)) > limit:
        return clip(doc.passage(first, last), limit), set(range(first.index, last.index + 1))
    return doc.passage(first, last), set(range(first.index, last.index + 1))


def reasoning(doc: Document, *, limit: int, exclude: set[int], max_sentence: int = 900) -> str:
    """The court's own reasoning: the highest-scoring cue sentences (later ones preferred), in document order."""
    scores = REASONING_CUES.scores(doc)
    candidates = {
        i: s + doc.position(doc.sentences[i])
        for i, s in scores.items()
        if i not in exclude
        and s >= 2.0
        and not doc.sentences[i].quoted
        and not doc.sentences[i].text.endswith(":")
        and 40 <= len(doc.sentences[i].text) <= max_sentence
    }
    chosen: list[Sentence] = []
    budget = limit
    for i in sorted(candidates, key=lambda i: (-candidates[i], -i)):
        cost = len(doc.sentences[i].text) + 1
        if cost <= budget:
            chosen.append(doc.sentences[i])
            budget -= cost
        if budget < 60:
            break
    if not chosen:  # no cue: the paragraphs just before the order
        tail = [s for s in doc.sentences if s.index not in exclude][-8:]
        chosen = [s for s in tail if not s.quoted]
    return doc.passages(chosen, limit)


def facts(doc: Document, *, limit: int, exclude: set[int], stop: set[int], horizon: float = 0.6) -> str:
    """The narrative before the arguments and issues: leading body sentences not used elsewhere."""
    chosen: list[Sentence] = []
    size = 0
    for sentence in doc.sentences:
        if sentence.index in stop and size >= 300:
            break
        if doc.position(sentence) > horizon and chosen:
            break
        if sentence.index in exclude or sentence.quoted or len(sentence.text) < 25:
            continue
        chosen.append(sentence)
        size += len(sentence.text) + 1
        if size >= limit:
            break
    return doc.passages(chosen, limit)


def disposed_in_favour_of(order: str, appellants: list[str], respondents: list[str], text: str) -> str | None:
    """The side the final order favours, named as in the judgment (a party, else its role word)."""
    if not order:
        return None
    explicit = list(_EXPLICIT_OUTCOME.finditer(order))
    verb = explicit[-1].group("verb").lower() if explicit else None
    if verb is None:
        outcomes = list(_OUTCOME.finditer(order))
        if not outcomes:
            return None
        verb = outcomes[-1].group(0).lower()
    match = _OUTCOME.fullmatch(verb)
    if match is None or match.lastgroup == "neutral":
        return None
    side = "appellants" if match.lastgroup == "won" else "respondents"
    names = appellants if side == "appellants" else respondents
    if names:
        return names[0]
    lowered = text.lower()
    for role in _ROLE_WORDS[side]:
        if role.lower() in lowered:
            return role
    return None

"""New legal principles: sentences that state a rule ("it is well settled that ...",
"the law is ...", "we hold that ..."), each with the next sentence when it applies the
rule to the case at hand.
"""

from __future__ import annotations

import re

from aqgr.summarizer.extractive.document import Cue, CueSet, Document, clip

PRINCIPLE_CUES = CueSet(
    [
        Cue(
            "settled",
            r"\bwell[- ]settled\b|\bsettled (?:law|position|principle|proposition|rule)\b|\bit is (?:now )?(?:well )?settled\b|\btrite\b",
            3.0,
        ),
        Cue(
            "the-law-is",
            r"\bthe (?:law|legal position|position (?:in|of) law|correct (?:legal )?position|settled law) (?:is|on the (?:point|subject)|in this regard)\b",
            3.0,
        ),
        Cue("we-hold-that", r"\b(?:we|I) (?:therefore |accordingly |thus )?hold that\b", 2.5),
        Cue(
            "principle",
            r"\b(?:the|a|this) (?:principle|rule|test|doctrine|ratio)\b[^.;]{0,40}?\b(?:is|that|laid down|applies|enunciated|requires)\b",
            2.5,
        ),
        Cue(
            "law-laid-down",
            r"\blaw laid down\b|\blaid down (?:the|a) (?:principle|law|rule|test)\b|\bestablished (?:principle|rule|law)\b",
            2.0,
        ),
        Cue(
            "must",
            r"\b(?:it must be (?:held|borne in mind|remembered)|it is (?:a )?(?:fundamental|cardinal|basic|elementary) (?:principle|rule))\b",
            2.0,
        ),
    ]
)
_APPLIES = re.compile(
    r"\b(?:present case|instant case|this case|case (?:before us|in hand|at hand)|facts of (?:the|this) case|in the case on hand)\b",
    re.IGNORECASE,
)


def new_principles(doc: Document, *, cap: int, limit: int) -> list[tuple[str, str]]:
    """Up to `cap` (principle, application) pairs, strongest first among unquoted sentences, in document order."""
    scores = PRINCIPLE_CUES.scores(doc)
    usable = {
        i: s - (1.5 if doc.sentences[i].quoted else 0.0)
        for i, s in scores.items()
        if s >= 2.0 and 40 <= len(doc.sentences[i].text) <= 1500
    }
    chosen = sorted(sorted(usable, key=lambda i: (-usable[i], i))[:cap])
    found: list[tuple[str, str]] = []
    for i in chosen:
        principle = clip(doc.sentences[i].text, limit)
        application = ""
        if i + 1 < len(doc.sentences) and _APPLIES.search(doc.sentences[i + 1].text):
            application = clip(doc.sentences[i + 1].text, limit)
        if all(principle != p for p, _ in found):
            found.append((principle, application))
    return found

"""Issues or questions of law: sentences that pose the question the court must answer.

Strong cues: "the question (that arises / for consideration) is ...", "the point for
determination", "the issue involved", "falls for consideration", a sentence opening
with "Whether". A bare "whether" is a weak cue, used only when no strong cue is found.
"""

from __future__ import annotations

import re

from aqgr.summarizer.extractive.document import Cue, CueSet, Document, Sentence, clip

_ENUMERATOR = re.compile(r"^\s*(?:\(?[0-9ivxab]{1,4}[.)]\s*)?[\"'\u201c\u2018]?(?=\S)")
_WHETHER_OPENS = re.compile(r"^\s*(?:\(?[0-9ivxab]{1,4}[.)]\s*)?[\"'\u201c\u2018]?whether\b", re.IGNORECASE)

STRONG = 3.0
ISSUE_CUES = CueSet(
    [
        Cue(
            "question-arises",
            r"\b(?:questions?|issues?|points?)\b[^.?;]{0,60}?\b(?:for (?:our |the )?(?:consideration|determination|decision|adjudication)"
            r"|(?:that|which) (?:arises?|arise|falls?|fall|calls?|call|requires?|require|needs?|need|comes?|come)\b"
            r"|arising|involved|raised|to be (?:decided|determined|considered|answered))",
            STRONG,
        ),
        Cue(
            "falls-for",
            r"\b(?:falls?|arises?|arise|comes?) for (?:our |the )?(?:consideration|determination|decision)",
            STRONG,
        ),
        Cue(
            "the-question",
            r"\bthe (?:short|only|sole|main|core|moot|primary|principal|crucial|important|real|next|first|second|third|"
            r"larger|substantial|central|basic|pivotal|vexed) (?:question|issue|point|controversy)s?\b",
            STRONG,
        ),
        Cue(
            "question-whether",
            r"\b(?:questions?|issues?|points?|controversy|dispute)\b[^.?;]{0,40}?\bwhether\b",
            STRONG,
        ),
        Cue("question-of-law", r"\bsubstantial questions? of law\b|\bquestions? of law\b", 1.0),
        Cue("whether", r"\bwhether\b", 1.0),
    ]
)


def _score(sentence: Sentence, cue_score: float) -> float:
    score = cue_score
    if _WHETHER_OPENS.match(sentence.text):
        score += STRONG
    if sentence.quoted:
        score -= 1.0
    return score


def issues(doc: Document, *, cap: int, limit: int, exclude: set[int] = frozenset()) -> tuple[list[str], set[int]]:
    """Up to `cap` issue sentences in document order (strong cues first, else the best weak
    ones), and the indices of the sentences used."""
    scored = {i: _score(doc.sentences[i], s) for i, s in ISSUE_CUES.scores(doc).items() if i not in exclude}
    usable = {i: s for i, s in scored.items() if 30 <= len(doc.sentences[i].text) <= 2000}
    strong = [i for i, s in usable.items() if s >= STRONG]
    chosen = strong or sorted(usable, key=lambda i: (-usable[i], i))[: min(cap, 3)]
    chosen = sorted(sorted(chosen, key=lambda i: (-usable[i], i))[:cap])
    found: list[str] = []
    for i in chosen:
        text = clip(doc.sentences[i].text, limit)
        if text not in found:
            found.append(text)
    return found, set(chosen)

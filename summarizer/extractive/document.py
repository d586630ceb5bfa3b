"""A judgment's text seen as paragraphs and sentences with offsets, plus cue scanning.

Slots are cut out of the source as verbatim passages: a passage is the source text
between the start of one sentence and the end of another, with its whitespace
normalised, so every passage is a substring of the whitespace-normalised judgment.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from aqgr.summarizer.sentences import paragraph_spans, sentence_spans

QUOTE_OPENERS = "\"'\u201c\u2018"
PASSAGE_SEPARATOR = "\n"  # joins the verbatim passages of a multi-passage slot


def normalise(text: str) -> str:
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """A prefix of `text` of at most `limit` characters, cut after a sentence end or a word."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max(head.rfind(". "), head.rfind("? "), head.rfind("; "))
    if cut >= limit // 2:
        return head[: cut + 1]
    space = head.rfind(" ")
    return head[:space] if space > 0 else head


@dataclass(frozen=True)
class Sentence:
    index: int
    paragraph: int
    start: int
    end: int
    text: str  # whitespace-normalised

    @property
    def quoted(self) -> bool:
        return self.text[:1] in QUOTE_OPENERS


class Document:
    """Paragraphs and sentences of the body (the text after the header)."""

    def __init__(self, text: str, body_start: int = 0):
        self.text = text
        self.body_start = body_start
        self.paragraphs = paragraph_spans(text, body_start)
        sentences: list[Sentence] = []
        for p_index, (p_start, p_end) in enumerate(self.paragraphs):
            for s_start, s_end in sentence_spans(text, p_start, p_end):
                sentences.append(Sentence(len(sentences), p_index, s_start, s_end, normalise(text[s_start:s_end])))
        self.sentences = sentences
        self._starts = [s.start for s in sentences]

    def sentence_at(self, offset: int) -> Sentence | None:
        """The sentence containing the character at `offset` (None outside the body)."""
        i = bisect_right(self._starts, offset) - 1
        if i < 0 or offset >= self.sentences[i].end:
            return None
        return self.sentences[i]

    def position(self, sentence: Sentence) -> float:
        """Where the sentence sits in the body, from 0.0 (first) to 1.0 (last)."""
        return sentence.index / max(1, len(self.sentences) - 1)

    def passage(self, first: Sentence, last: Sentence) -> str:
        return normalise(self.text[first.start : last.end])

    def passages(self, chosen: Iterable[Sentence], limit: int) -> str:
        """Chosen sentences in document order, adjacent ones merged into one passage, within `limit` chars."""
        runs: list[list[Sentence]] = []
        for s in sorted(set(chosen), key=lambda s: s.index):
            if runs and runs[-1][-1].index == s.index - 1:
                runs[-1].append(s)
            else:
                runs.append([s])
        parts: list[str] = []
        used = 0
        for run in runs:
            room = limit - used - (len(PASSAGE_SEPARATOR) if parts else 0)
            if room < 40:
                break
            part = clip(self.passage(run[0], run[-1]), room)
            if part:
                parts.append(part)
                used += len(part) + (len(PASSAGE_SEPARATOR) if len(parts) > 1 else 0)
        return PASSAGE_SEPARATOR.join(parts)

    @cached_property
    def length(self) -> int:
        return len(self.text)


@dataclass(frozen=True)
class Cue:
    name: str
    pattern: str
    weight: float


class CueSet:
    """A family of weighted cue patterns, scanned in one pass over the text."""

    def __init__(self, cues: Sequence[Cue], flags: int = re.IGNORECASE):
        self.cues = {f"c{i}": cue for i, cue in enumerate(cues)}
        self.regex = re.compile("|".join(f"(?P<{key}>{cue.pattern})" for key, cue in self.cues.items()), flags)

    def scores(self, doc: Document) -> dict[int, float]:
        """Sentence index -> summed weight of the cues found in it (each cue counted once per sentence)."""
        found: dict[int, dict[str, float]] = {}
        for match in self.regex.finditer(doc.text, doc.body_start):
            sentence = doc.sentence_at(match.start())
            if sentence is not None:
                cue = self.cues[match.lastgroup]
                found.setdefault(sentence.index, {})[cue.name] = cue.weight
        return {index: sum(weights.values()) for index, weights in found.items()}

    def search(self, text: str) -> re.Match[str] | None:
        return self.regex.search(text)

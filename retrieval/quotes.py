"""Which statutes a judgment quotes, word for word.

Judgments quote the provisions they apply ("Section 304-B ... Where the death of a woman is
caused by any burns ..."). A quotation is found as a run of `shingle` consecutive words of
a statute's text inside the judgment: the judgment links to the statute when at least
`min_shingles` distinct shingles of it occur there (with the defaults, about ten words
quoted in a row, or two shorter quotations). Shingles that several statutes share
(boilerplate such as "shall be punished with imprisonment of either description for a term
which may extend to") are not evidence for any of them and are dropped.

Measured on the AILA corpus (2,914 judgments, 197 statutes): 852 judgments quote at least
one statute, 1,554 links, 165 statutes quoted at least once; 37 of the 44 statutes relevant
to the dev queries are among them (docs/experiments/2026-11-30-statutes-through-precedents.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# Eight words in a row are rarely shared by chance outside boilerplate; three distinct
# shingles = ten consecutive words (or several shorter quotations).
SHINGLE_WORDS = 8
MIN_SHINGLES = 3
# A shingle in more statutes than this is boilerplate: it identifies none of them.
MAX_STATUTES_PER_SHINGLE = 3

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class QuoteFinder:
    """The shingles of a set of statutes, to find them quoted in judgments."""

    def __init__(
        self,
        statutes: Mapping[str, str],
        *,
        shingle: int = SHINGLE_WORDS,
        min_shingles: int = MIN_SHINGLES,
        max_statutes_per_shingle: int = MAX_STATUTES_PER_SHINGLE,
    ):
        if shingle < 2 or min_shingles < 1 or max_statutes_per_shingle < 1:
            raise ValueError("shingle must be at least 2 words, min_shingles and max_statutes_per_shingle at least 1")
        self.shingle, self.min_shingles = shingle, min_shingles
        owners: dict[int, set[str]] = {}
        for statute_id, text in statutes.items():
            for key in self._shingles(_words(text or "")):
                owners.setdefault(key, set()).add(statute_id)
        self._owners = {key: tuple(sorted(ids)) for key, ids in owners.items() if len(ids) <= max_statutes_per_shingle}

    def _shingles(self, words: list[str]) -> set[int]:
        n = self.shingle
        return {hash(tuple(words[i : i + n])) for i in range(len(words) - n + 1)}

    def quoted(self, text: str) -> dict[str, int]:
        """Statute id -> distinct shingles of it found in `text`, for the statutes quoted enough."""
        counts: dict[str, int] = {}
        for key in self._shingles(_words(text or "")):
            for statute_id in self._owners.get(key, ()):
                counts[statute_id] = counts.get(statute_id, 0) + 1
        return {s: n for s, n in sorted(counts.items()) if n >= self.min_shingles}

    def links(self, judgments: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
        """Judgment id -> the statutes it quotes (sorted ids), for the judgments that quote any."""
        out: dict[str, list[str]] = {}
        for judgment_id, text in judgments:
            found = self.quoted(text)
            if found:
                out[judgment_id] = sorted(found)
        return out

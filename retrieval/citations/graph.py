"""Which judgments of an archive cite which, and the precedents a ranking refers to.

`CitationGraph.from_texts(texts)` runs the link finder (retrieval/citations/links.py:
case titles and reporter citations, with date checks) over every judgment's text and
keeps the distinct (citing, cited) pairs; both ends are judgments of the archive.

`referred(ranking)`: the precedents the best-ranked judgments cite. A judgment x gets,
from each of the first `depth` judgments y that cites it, 1 / rank(y) (a judgment that
is not in the first `depth` counts 0), divided according to `norm` by n, the number of
archive judgments citing x:

* "mean" (the default): / n, the mean over x's citing judgments of how well each ranks
  for the query. A precedent that similar cases rely on scores high; one every judgment
  cites (a landmark on procedure) gets a small share from each.
* "cosine": / sqrt(n), the cosine between x's citing judgments and the ranking's
  reciprocal ranks; much-cited judgments keep more of their votes.
* "sum": no division; the more ranked judgments cite x, the higher (landmarks rise).

Excluded judgments (a query's own citing judgment in the citation benchmark) neither
vote nor count as citing.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

FORMAT = "citations.v2"  # v2: each link keeps how it was found and the matched text
READABLE = ("citations.v1", FORMAT)  # v1 files (pairs only) still load, without the mentions
FILE_NAME = "citations.json"
NORMS = ("mean", "cosine", "sum")  # how a judgment's votes are divided by its number of citing judgments


@dataclass(frozen=True)
class Referral:
    """Citation evidence for one judgment: its share of votes and the ranked judgments citing it."""

    votes: float
    cited_by: tuple[str, ...]  # best-ranked first


@dataclass(frozen=True)
class Mention:
    """Where a citing judgment names the cited one: by its "title" or a reporter "citation"."""

    how: str
    text: str


class CitationGraph:
    """Distinct citations between judgments of one archive, with the first mention of each
    (`mentions[(citing, cited)]`, when known) so a reader can check the link."""

    def __init__(self, pairs: Iterable[tuple[str, str]], mentions: Mapping[tuple[str, str], Mention] | None = None):
        cites: dict[str, set[str]] = defaultdict(set)
        cited_by: dict[str, set[str]] = defaultdict(set)
        for citing, cited in pairs:
            if citing != cited:
                cites[citing].add(cited)
                cited_by[cited].add(citing)
        self.cites = {k: frozenset(v) for k, v in cites.items()}
        self.cited_by = {k: frozenset(v) for k, v in cited_by.items()}
        self.mentions = {p: m for p, m in (mentions or {}).items() if p[1] in self.cites.get(p[0], ())}

    def __len__(self) -> int:
        return sum(len(v) for v in self.cites.values())

    def pairs(self) -> list[tuple[str, str]]:
        return sorted((a, x) for a, cited in self.cites.items() for x in cited)

    @classmethod
    def from_texts(cls, texts: Iterable[tuple[str, str]], progress: Callable[[int], None] | None = None) -> "CitationGraph":
        """The citations among `texts` ((judgment id, source text) pairs); `progress(n)` after each parsed."""
        from aqgr.retrieval.citations.judgments import parse_judgment
        from aqgr.retrieval.citations.links import find_links

        judgments = {}
        for n, (doc_id, text) in enumerate(texts, 1):
            judgments[doc_id] = parse_judgment(doc_id, text)
            if progress is not None:
                progress(n)
        links = sorted(find_links(judgments), key=lambda link: link.paragraph)  # the first mention of a pair wins
        mentions: dict[tuple[str, str], Mention] = {}
        for link in links:
            mentions.setdefault((link.citing, link.cited), Mention(link.how, link.evidence))
        return cls(mentions.keys(), mentions)

    def referred(self, ranking: Sequence[str], *, depth: int, exclude: set[str] | frozenset[str] = frozenset(),
                 norm: str = "mean") -> dict[str, Referral]:
        """Judgment id -> its Referral from the first `depth` judgments of `ranking` (see the module)."""
        votes: dict[str, float] = defaultdict(float)
        by: dict[str, list[str]] = defaultdict(list)
        rank = 0
        for doc_id in ranking:
            if doc_id in exclude:
                continue
            rank += 1
            if rank > depth:
                break
            for cited in self.cites.get(doc_id, ()):
                if cited not in exclude:
                    votes[cited] += 1.0 / rank
                    by[cited].append(doc_id)
        if norm not in NORMS:
            raise ValueError(f"unknown citation norm {norm!r}; known: {', '.join(NORMS)}")
        out = {}
        for cited, v in votes.items():
            citing = self.cited_by[cited]
            n = len(citing - exclude) if exclude else len(citing)
            out[cited] = Referral(v / (n if norm == "mean" else math.sqrt(n) if norm == "cosine" else 1), tuple(by[cited]))
        return out

    # -- saving ------------------------------------------------------------
    def save(self, path: Path, judgments: Iterable[str]) -> None:
        """Write atomically, with a digest of the judgment ids it was found among."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        links = []
        for pair in self.pairs():
            mention = self.mentions.get(pair)
            links.append([*pair, mention.how, mention.text] if mention else list(pair))
        body = {"format": FORMAT, "judgments": ids_digest(judgments), "links": links}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".citations-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(body, f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path, judgments: Iterable[str] | None = None) -> "CitationGraph | None":
        """The saved graph, or None when absent, unreadable, of another format, or (with
        `judgments`) found among other judgments than these."""
        try:
            body = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(body, Mapping) or body.get("format") not in READABLE or not isinstance(body.get("links"), list):
            return None
        if judgments is not None and body.get("judgments") != ids_digest(judgments):
            return None
        try:
            pairs = [(str(link[0]), str(link[1])) for link in body["links"]]
            mentions = {pair: Mention(str(link[2]), str(link[3])) for pair, link in zip(pairs, body["links"]) if len(link) == 4}
        except (TypeError, ValueError, IndexError, KeyError):
            return None
        return cls(pairs, mentions)


def ids_digest(judgments: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(judgments)).encode()).hexdigest()[:24]

"""Which judgments of an archive cite which, and the precedents a ranking refers to.

`CitationGraph.from_texts(texts)` runs the link finder (retrieval/citations/links.py:
case titles and reporter citations, with date checks) over every judgment's text and
keeps the distinct (citing, cited) pairs; both ends are judgments of the archive. It
holds every parsed judgment in memory: an archive's graph is kept and updated instead by
`CitationStore` (retrieval/citations/store.py), whose `graph()` finds the same pairs and
mentions.

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

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice

import numpy as np

from aqgr.retrieval.citations.treatment import SEVERITY, WARN, Treatment

NORMS = ("mean", "cosine", "sum")  # how a judgment's votes are divided by its number of citing judgments


@dataclass(frozen=True)
class Referral:
    """Citation evidence for one judgment: its share of votes and the ranked judgments citing it."""

    votes: float
    cited_by: tuple[str, ...]  # best-ranked first


@dataclass(frozen=True)
class Mention:
    """Where a citing judgment names the cited one: by its "title" or a reporter "citation";
    `treatment`, how it treats it there (retrieval/citations/treatment.py), when read."""

    how: str
    text: str
    treatment: "Treatment | None" = None


class CitationGraph:
    """Distinct citations between judgments of one archive, with the first mention of each
    (`mentions[(citing, cited)]`, when known) so a reader can check the link.

    Compact for a large archive: judgment ids are numbered once (`_Names`), and what each
    judgment cites and is cited by are two CSR arrays; `cites` and `cited_by` read them as
    mappings id -> frozenset of ids. `mentions` is a dict here, or read from the citation
    store on demand (retrieval/citations/store.py)."""

    def __init__(self, pairs: Iterable[tuple[str, str]], mentions: Mapping[tuple[str, str], Mention] | None = None):
        index: dict[str, int] = {}
        distinct = {(a, b) for a, b in pairs if a != b}
        citing = [index.setdefault(a, len(index)) for a, _ in distinct]
        cited = [index.setdefault(b, len(index)) for _, b in distinct]
        self._set(list(index), np.array(citing, dtype=np.int64), np.array(cited, dtype=np.int64))
        self.mentions: Mapping[tuple[str, str], Mention] = {p: m for p, m in (mentions or {}).items() if p in distinct}
        self._treated = None

    @classmethod
    def from_arrays(
        cls,
        names: Sequence[str],
        citing: np.ndarray,
        cited: np.ndarray,
        mentions: Mapping[tuple[str, str], Mention],
        treated: "Callable[[str, Iterable[str]], list[tuple[str, Treatment]]] | None" = None,
        joined: bytes | None = None,
    ) -> "CitationGraph":
        """The graph of the links names[citing[i]] -> names[cited[i]] (distinct, no self-links),
        with `mentions` as given (not filtered); `treated`: a faster `treated_by` (the store's);
        `joined`: `names` encoded, each followed by a newline (a snapshot's; see `_Names`)."""
        graph = cls.__new__(cls)
        graph._set(names, np.asarray(citing, dtype=np.int64), np.asarray(cited, dtype=np.int64), joined)
        graph.mentions = mentions
        graph._treated = treated
        return graph

    def treated_by(self, cited: str, labels: Iterable[str] = WARN) -> list[tuple[str, "Treatment"]]:
        """(citing id, treatment) of the judgments whose treatment of `cited` is one of
        `labels` (default: overruled or doubted), most severe first."""
        if self._treated is not None:
            return self._treated(cited, labels)
        labels = set(labels)
        found = []
        for citing in self.cited_by.get(cited, ()):
            mention = self.mentions.get((citing, cited))
            if mention is not None and mention.treatment is not None and mention.treatment.label in labels:
                found.append((citing, mention.treatment))
        return sorted(found, key=lambda item: (SEVERITY[item[1].label], item[0]))

    def _set(self, names: Sequence[str], citing: np.ndarray, cited: np.ndarray, joined: bytes | None = None) -> None:
        n = max(len(names), 1)
        keep = citing != cited
        edges = np.sort(citing[keep] * n + cited[keep])  # by citing, then cited
        edges = edges[np.concatenate(([True], edges[1:] != edges[:-1]))] if len(edges) else edges
        citing, cited = np.divmod(edges, n)
        self._out = _Rows.of_sorted(citing, cited, len(names))
        del edges
        cited, citing = np.divmod(np.sort(cited * n + citing), n)  # by cited, then citing
        self._in = _Rows.of_sorted(cited, citing, len(names))
        self._names = _Names(names, joined)
        self.cites: Mapping[str, frozenset[str]] = _Adjacency(self._names, self._out)
        self.cited_by: Mapping[str, frozenset[str]] = _Adjacency(self._names, self._in)

    def __len__(self) -> int:
        return len(self._out.indices)

    def pairs(self) -> list[tuple[str, str]]:
        name = self._names.name
        return sorted((name(a), name(int(x))) for a in range(len(self._names)) for x in self._out.row(a))

    @classmethod
    def from_texts(
        cls, texts: Iterable[tuple[str, str]], progress: Callable[[int], None] | None = None, treatments=None
    ) -> "CitationGraph":
        """The citations among `texts` ((judgment id, source text) pairs); `progress(n)` after each
        parsed; `treatments`: the treatment engine (default: store.TREATMENT, offline)."""
        from aqgr.retrieval.citations.judgments import parse_judgment
        from aqgr.retrieval.citations.links import find_links

        judgments, texts_by_id = {}, {}
        for n, (doc_id, text) in enumerate(texts, 1):
            judgments[doc_id] = parse_judgment(doc_id, text)
            texts_by_id[doc_id] = text
            if progress is not None:
                progress(n)
        from aqgr.retrieval.citations.passes import paragraph_starts, treat
        from aqgr.retrieval.citations.store import TREATMENT
        from aqgr.retrieval.citations.treatment import create, more_severe

        engine, starts = treatments or create(TREATMENT), {}
        links = sorted(find_links(judgments), key=lambda link: link.paragraph)  # the first mention of a pair wins
        mentions: dict[tuple[str, str], Mention] = {}
        treated: dict[tuple[str, str], Treatment] = {}
        for link in links:
            pair = (link.citing, link.cited)
            mentions.setdefault(pair, Mention(link.how, link.evidence))
            if link.citing not in starts:
                starts[link.citing] = paragraph_starts(texts_by_id[link.citing], judgments[link.citing])
            treated[pair] = more_severe(
                treated.get(pair), treat(engine, link, judgments[link.citing], starts[link.citing])
            )
        mentions = {pair: replace(m, treatment=treated[pair]) for pair, m in mentions.items()}
        return cls(mentions.keys(), mentions)

    def referred(
        self,
        ranking: Sequence[str],
        *,
        depth: int,
        exclude: set[str] | frozenset[str] = frozenset(),
        norm: str = "mean",
    ) -> dict[str, Referral]:
        """Judgment id -> its Referral from the first `depth` judgments of `ranking` (see the module)."""
        if norm not in NORMS:
            raise ValueError(f"unknown citation norm {norm!r}; known: {', '.join(NORMS)}")
        voters = list(islice((doc_id for doc_id in ranking if doc_id not in exclude), max(depth, 0)))
        nodes = self._names.nodes(voters)
        ranks = np.flatnonzero(nodes >= 0)  # 0-based rank of each voter in the graph
        cited, voter = self._out.gather(nodes[ranks])
        excluded = self._names.nodes(list(exclude))
        excluded = excluded[excluded >= 0]
        if len(excluded):
            keep = ~np.isin(cited, excluded)
            cited, voter = cited[keep], voter[keep]
        if not len(cited):
            return {}
        voter = ranks[voter]
        # Each cited judgment's votes, summed in rank order (as a loop over the ranking would).
        order = np.argsort(cited, kind="stable")
        cited, voter = cited[order], voter[order]
        targets, starts = np.unique(cited, return_index=True)
        votes = np.zeros(len(targets))
        np.add.at(votes, np.searchsorted(targets, cited), 1.0 / (voter + 1))
        citing = self._in.indptr[targets + 1] - self._in.indptr[targets]
        if len(excluded):  # excluded judgments do not count among the citing ones
            gone, _ = self._out.gather(excluded)
            citing = citing - np.bincount(
                np.searchsorted(targets, gone[np.isin(gone, targets)]), minlength=len(targets)
            )
        divisor = citing if norm == "mean" else np.sqrt(citing) if norm == "cosine" else np.ones(len(targets))
        voter_list, bounds = voter.tolist(), [*starts.tolist(), len(voter)]
        return {
            self._names.name(target): Referral(v / d, tuple(voters[r] for r in voter_list[bounds[i] : bounds[i + 1]]))
            for i, (target, v, d) in enumerate(zip(targets.tolist(), votes.tolist(), divisor.tolist()))
        }


class _Names:
    """Judgment ids numbered 0..n-1, compact: one UTF-8 blob (each id followed by a newline) with
    offsets, found through a sorted array of their (in-process) string hashes; colliding hashes
    are told apart by name. `joined`: that blob already made (the graph's snapshot), whose
    newlines then mark where each id ends (its ids hold none)."""

    def __init__(self, names: Sequence[str], joined: bytes | None = None):
        self._offsets = np.zeros(len(names) + 1, dtype=np.int64)
        if joined is None:
            encoded = [name.encode() for name in names]
            np.cumsum([len(e) + 1 for e in encoded], out=self._offsets[1:])
            joined = b"".join(e + b"\n" for e in encoded)
        else:
            self._offsets[1:] = np.flatnonzero(np.frombuffer(joined, dtype=np.uint8) == 10) + 1
        self._blob = joined
        hashes = np.fromiter((hash(name) for name in names), dtype=np.int64, count=len(names))
        self._order = np.argsort(hashes, kind="stable").astype(np.int32 if len(names) < 2**31 else np.int64)
        self._hashes = hashes[self._order]

    def __len__(self) -> int:
        return len(self._order)

    def name(self, node: int) -> str:
        return self._blob[self._offsets[node] : self._offsets[node + 1] - 1].decode()

    def nodes(self, names: Sequence[str]) -> np.ndarray:
        """Each name's number, -1 for a name not in the graph."""
        found = np.full(len(names), -1, dtype=np.int64)
        if not len(names) or not len(self._order):
            return found
        hashes = np.fromiter((hash(name) for name in names), dtype=np.int64, count=len(names))
        at = np.minimum(np.searchsorted(self._hashes, hashes), len(self._hashes) - 1)
        for k in np.flatnonzero(self._hashes[at] == hashes).tolist():
            i = int(at[k])
            while i < len(self._hashes) and self._hashes[i] == hashes[k]:  # told apart by name where hashes collide
                if self.name(int(self._order[i])) == names[k]:
                    found[k] = self._order[i]
                    break
                i += 1
        return found


@dataclass(frozen=True)
class _Rows:
    """CSR adjacency: node i's neighbours are indices[indptr[i]:indptr[i + 1]], ascending."""

    indptr: np.ndarray
    indices: np.ndarray

    @classmethod
    def of_sorted(cls, sources: np.ndarray, targets: np.ndarray, n: int) -> "_Rows":
        """From (source, target) pairs sorted by source, then target."""
        indptr = np.zeros(n + 1, dtype=np.int32 if len(sources) < 2**31 else np.int64)
        np.cumsum(np.bincount(sources, minlength=n), dtype=indptr.dtype, out=indptr[1:])
        return cls(indptr, targets.astype(np.int32 if n < 2**31 else np.int64))

    def row(self, node: int) -> np.ndarray:
        return self.indices[self.indptr[node] : self.indptr[node + 1]]

    def gather(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The neighbours of `nodes`, row after row, and for each the position in `nodes` of its row."""
        starts, ends = self.indptr[nodes], self.indptr[nodes + 1]
        lengths = ends - starts
        owner = np.repeat(np.arange(len(nodes)), lengths)
        offsets = np.arange(len(owner)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return self.indices[starts[owner] + offsets].astype(np.int64), owner


class _Adjacency(Mapping[str, frozenset[str]]):
    """id -> the ids it links to, over one direction of the graph (ids without a link are absent)."""

    def __init__(self, names: _Names, rows: _Rows):
        self._names, self._rows = names, rows

    def __getitem__(self, doc_id: str) -> frozenset[str]:
        node = int(self._names.nodes([doc_id])[0])
        row = self._rows.row(node) if node >= 0 else ()
        if not len(row):
            raise KeyError(doc_id)
        return frozenset(self._names.name(i) for i in row.tolist())

    def __iter__(self) -> Iterator[str]:
        lengths = np.diff(self._rows.indptr)
        return (self._names.name(int(node)) for node in np.flatnonzero(lengths))

    def __len__(self) -> int:
        return int(np.count_nonzero(np.diff(self._rows.indptr)))

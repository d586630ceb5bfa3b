"""Statutes beside the case archive: searched with the same legal questions as the judgments.

A statute has no structured summary: each is indexed as its title and text with the
same BM25 + dense index code as the judgments (`SummaryIndex.from_texts`). The
collection lives in `<home>/statutes/`: `statutes.json` (id, title, text) and `index/`
(a saved index with its manifest). Add statutes with `aqgr statutes PATH...`: plain-text
files, one statute each, either in the AILA form ("Title: ..." then "Desc: ...") or a
title on the first line and the text below; the file name (without suffix) is the id.

Search: the questions (the user's, or the top ones the case archive generates for the
facts) each query the statute index together with the facts, and the runs are fused
(reciprocal rank fusion), as for judgments (SPEC.md, stage 3). Nothing is explained by
a model: statute hits are the stored texts themselves.

Statutes through the precedents: judgments quote the provisions they apply, word for word
(retrieval/quotes.py). `links.json` records which judgments of the archive quote which
statutes; it is made when statutes are added to an archive with judgments, and again
whenever the case index is built. Given the case archive's ranking for the same facts
(`precedents`), each of the first PRECEDENT_DEPTH judgments votes 1/rank for the statutes it
quotes; a statute's score is its votes divided by the top vote, plus TEXT_WEIGHT times its
direct (text) score divided by the top one, so the text match orders the statutes no
precedent quotes and breaks ties. Each hit lists the precedents that quote it
(`quoted_by`). Measured: AILA dev statutes MAP 0.083 -> 0.210 (this search, as shipped), and on a 183-query statute
benchmark built from the corpus's own quotations (`python -m aqgr.eval
build-citation-benchmark --statutes ...`) 0.213 -> 0.523 (this search, as shipped)
(docs/experiments/2026-11-30-statutes-through-precedents.md).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from aqgr.foundation.errors import NoStatutesError, ReadError
from aqgr.foundation.files import atomic_file, write_atomic
from aqgr.foundation.inputs import check_count, files_in, many
from aqgr.pipeline.config import Settings
from aqgr.retrieval.protocol import Index
from aqgr.retrieval.types import ScoredDoc, ranked
from aqgr.schemas.statutes import StatuteHit, StatuteResult

STATUTES_DIR = "statutes"
EXCERPT_CHARS = 1000  # a statute hit carries at most this much of its text
LINKS_FILE = "links.json"  # judgment id -> the statutes it quotes (retrieval/quotes.py)
LINKS_VERSION = 1
# The case ranking's judgments that vote (a 1/rank weight makes deeper ones count little;
# the citation benchmark's statute queries: 50 / 100 / 1000 give 0.514 / 0.521 / 0.527 MAP, ties).
PRECEDENT_DEPTH = 100
# The direct text match's share: it only orders what the votes leave tied (0 / 0.05 / 0.1 /
# 0.25: 0.520 / 0.521 / 0.515 / 0.498 MAP on the same benchmark).
TEXT_WEIGHT = 0.05
QUOTED_BY_SHOWN = 5  # precedents listed per statute hit
QUESTION_WEIGHT = 0.5  # a question's share of its dense query (SearchOptions.question_weight's default)


def read_statute(path: Path) -> tuple[str, str]:
    """(title, text) of one statute file: AILA's 'Title:'/'Desc:' form, or a title line then the text."""
    from aqgr.summarizer.readers.common import decode_text, normalise_text

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ReadError(str(path), "unreadable", str(exc)) from exc
    raw = normalise_text(decode_text(data, str(path))).strip()  # 'binary' for bytes that are not text, as for judgments
    if not raw:
        raise ReadError(str(path), "empty", "the statute file is empty")
    if not any(ch.isalnum() for ch in raw):
        raise ReadError(str(path), "empty", "the statute file has no words")
    return split_statute(raw)


def split_statute(raw: str) -> tuple[str, str]:
    """(title, text) of a statute's raw text (the forms `read_statute` reads)."""
    lines = raw.strip().splitlines()
    if not lines:
        return "", ""
    if lines[0].startswith("Title:"):
        title = lines[0][len("Title:") :].strip()
        rest = lines[1:]
        if rest and rest[0].startswith("Desc:"):
            rest = [rest[0][len("Desc:") :].strip(), *rest[1:]]
        return title, "\n".join(rest).strip()
    return lines[0].strip(), "\n".join(lines[1:]).strip()


def _statute_files(paths: Iterable[str | Path]) -> list[Path]:
    return files_in(paths, "*.txt", recursive=True, missing="no such file or folder")


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """What changes when a file is rewritten or atomically replaced (mtime, size, inode); None if absent.
    Used to reload statute links here and the index in aqgr/interfaces/server/service.py."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def rank_with_precedents(
    direct: Sequence[ScoredDoc],
    precedents: Sequence[str],
    links: Mapping[str, Sequence[str]],
    *,
    text_weight: float = TEXT_WEIGHT,
    depth: int = PRECEDENT_DEPTH,
) -> tuple[list[ScoredDoc], dict[str, list[str]]]:
    """Statutes ranked by the votes of the precedents that quote them, plus `text_weight` x
    the direct ranking's score (each divided by its top); and, per statute, the voting
    precedents in rank order. Statutes are those of `direct` and those the precedents quote."""
    votes: dict[str, float] = {}
    quoted_by: dict[str, list[str]] = {}
    for rank, judgment_id in enumerate(precedents[:depth], start=1):
        for statute_id in links.get(judgment_id, ()):
            votes[statute_id] = votes.get(statute_id, 0.0) + 1.0 / rank
            quoted_by.setdefault(statute_id, []).append(judgment_id)
    if not votes:
        return list(direct), {}
    top_vote = max(votes.values())
    top_direct = max((d.score for d in direct), default=0.0) or 1.0
    scores = {statute_id: v / top_vote for statute_id, v in votes.items()}
    for d in direct:
        scores[d.doc_id] = scores.get(d.doc_id, 0.0) + text_weight * max(d.score, 0.0) / top_direct
    return ranked(scores.items()), quoted_by


def statute_queries(
    index: Index, facts: str, questions: Sequence[str], question_weight: float
) -> list[tuple[int | None, str, object]]:
    """(question number or None, lexical text, dense vector) of each statute query: the facts,
    then each question with the facts. A question's dense query combines the facts' vector
    and the question's (normalise(v(facts) + question_weight * v(question))), as the case
    search does: the long facts are embedded once, not again with every question."""
    base = index.embed_query(facts)
    out: list[tuple[int | None, str, object]] = [(None, facts, base)]
    for number, question in enumerate(questions):
        out.append(
            (number, f"{question}\n{facts}", index.combined_vector(base, index.embed_query(question), question_weight))
        )
    return out


def statutes_for(
    searcher,
    collection: "StatuteCollection",
    facts: str,
    questions: Sequence[str] | None = None,
    *,
    k: int = 10,
    exclude: Iterable[str] | None = None,
    options=None,
    filters=None,
) -> StatuteResult:
    """The product's statute search: one case ranking for the facts (`searcher.rank` to
    PRECEDENT_DEPTH: the given questions, or the case archive's top generated ones, planned
    once), then `collection.search` with those questions and that ranking's judgments as the
    precedents. `searcher`: the case archive's aqgr.pipeline.search.Searcher; `exclude`: judgments kept
    out of the case ranking (and so from voting); `options`: the case search's SearchOptions
    (default the searcher's); `filters` (aqgr.schemas.filters.Filters): only judgments matching them
    rank and vote."""
    check_count(k, "k")
    options = options or searcher.options
    cases, ranking = searcher.rank(
        facts,
        questions,
        depth=PRECEDENT_DEPTH,
        exclude=set(exclude) if exclude else None,
        options=options,
        filters=filters,
    )
    return collection.search(
        facts,
        cases.questions,
        k=k,
        precedents=[d.doc_id for d in ranking],
        question_weight=options.question_weight,
        correspondence=getattr(searcher, "correspondence", None),
    )


class StatuteCollection:
    """The statutes of one archive home, and their index (loaded once, reloaded when rebuilt)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.root = settings.home / STATUTES_DIR
        self._lock = threading.Lock()
        self._loaded: tuple[int, object, dict] | None = None  # (manifest mtime, index, statutes)
        self._links: tuple[tuple, dict] | None = None  # (files' stamps, links)

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    def exists(self) -> bool:
        return (self.index_dir / "manifest.json").exists() and (self.root / "statutes.json").exists()

    def release(self):
        """Forget the loaded statute index and return it (its caller closes it; loaded again on use)."""
        with self._lock:
            loaded, self._loaded = self._loaded, None
        return loaded[1] if loaded is not None else None

    def statutes(self) -> dict[str, dict]:
        path = self.root / "statutes.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def _digest(self) -> str:
        import hashlib

        path = self.root / "statutes.json"
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""

    def link(self, judgments: Iterable[tuple[str, str]]) -> int:
        """Find which of `judgments` ((id, text) pairs) quote which statutes and save it
        (`links.json`, replacing the old one); returns how many judgments quote any."""
        from aqgr.retrieval.quotes import QuoteFinder

        statutes = self.statutes()
        if not statutes:
            raise NoStatutesError(self.root)
        links = QuoteFinder({i: s["text"] for i, s in statutes.items()}).links(judgments)
        payload = {"version": LINKS_VERSION, "statutes_sha256": self._digest(), "links": links}
        write_atomic(self.root / LINKS_FILE, json.dumps(payload, ensure_ascii=False))
        return len(links)

    def links(self) -> dict[str, list[str]]:
        """Judgment id -> quoted statute ids, as last linked; {} when never linked or when
        the statutes changed since (link again: `aqgr statutes` or `aqgr index` does).
        Read again only when links.json or statutes.json changed on disk."""
        stamp = (file_stamp(self.root / LINKS_FILE), file_stamp(self.root / "statutes.json"))
        with self._lock:
            if self._links is not None and self._links[0] == stamp:
                return self._links[1]
        links = self._read_links()
        with self._lock:
            self._links = (stamp, links)
        return links

    def _read_links(self) -> dict[str, list[str]]:
        path = self.root / LINKS_FILE
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
            links = payload["links"]
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError):  # unreadable or cut short: as if never linked
            return {}
        if payload.get("version") != LINKS_VERSION or payload.get("statutes_sha256") != self._digest():
            return {}
        return links

    def add(self, paths: Iterable[str | Path], judgments: Iterable[tuple[str, str]] | None = None) -> int:
        """Add (or replace, by id) the statute files under `paths` and rebuild the statute index;
        with `judgments` ((id, text) pairs: the archive's), also link them (`link`). Returns the count."""
        from aqgr.retrieval.dense.cache import EmbeddingCache
        from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex, clean_leftovers

        paths = list(many(paths, "add_statutes() paths", "['statutes/']"))
        statutes = self.statutes()
        for path in _statute_files(paths):
            title, text = read_statute(path)
            statutes[path.stem] = {"title": title, "text": text}
        if not statutes:
            raise ReadError(", ".join(map(str, paths)), "empty", "no statute (.txt) files found")
        spec = self.settings.index or IndexSpec()
        ids = sorted(statutes)
        texts = {i: {"title": statutes[i]["title"], "text": statutes[i]["text"]} for i in ids}
        self.settings.cache_dir.mkdir(parents=True, exist_ok=True)
        with EmbeddingCache(self.settings.cache_dir / "embeddings.sqlite") as cache:
            index = SummaryIndex.from_texts(ids, texts, spec, cache=cache)
        self.root.mkdir(parents=True, exist_ok=True)
        clean_leftovers(self.index_dir)  # what a killed earlier save left beside it
        # The statutes and their index change together: the new statutes.json is written whole beside
        # the old one first, then the index is swapped in, then the file renamed over the old one; a
        # full disk at any step leaves both as they were (only the rename, which needs no space, is last).
        try:
            with atomic_file(self.root / "statutes.json") as out:
                out.write(json.dumps(statutes, ensure_ascii=False))
                out.flush()
                os.fsync(out.fileno())
                index.save(self.index_dir)
        finally:
            index.close()
        if judgments is not None:
            self.link(judgments)
        return len(statutes)

    def renew(self) -> bool:
        """Build the statute index again from the collection's own statutes when an older aqgr made
        it (`SummaryIndex.load` refuses such an index; `aqgr index` calls this); whether it did."""
        from aqgr.retrieval.embedded.index import SummaryIndex

        if not self.exists() or not SummaryIndex.saved_outdated(self.index_dir):
            return False
        self.add([])
        return True

    def _load(self) -> tuple[Index, dict]:
        from aqgr.retrieval.embedded.index import SummaryIndex

        manifest = self.index_dir / "manifest.json"
        if not self.exists():
            raise NoStatutesError(self.root)
        stamp = manifest.stat().st_mtime_ns
        with self._lock:
            if self._loaded is None or self._loaded[0] != stamp:
                self._loaded = (stamp, SummaryIndex.load(self.index_dir), self.statutes())
            return self._loaded[1], self._loaded[2]

    def search(
        self,
        facts: str,
        questions: Sequence[str],
        *,
        k: int = 10,
        per_query_k: int = 12,
        precedents: Sequence[str] | None = None,
        question_weight: float = QUESTION_WEIGHT,
        correspondence=None,
    ) -> StatuteResult:
        """Statutes for the facts and the questions (each question is asked together with the
        facts); with `precedents` (the case archive's ranking for the same facts, judgment ids
        best first), also through the statutes those judgments quote (`rank_with_precedents`);
        with `correspondence` (aqgr/pipeline/correspondence.py), the lexical queries also carry the
        sections' counterparts in the other code and each hit lists its sections in both."""
        from aqgr.retrieval.fusion import fusers

        index, statutes = self._load()
        facts = " ".join((facts or "").split())
        used = [" ".join(q.split()) for q in questions if q and q.strip()]
        runs, retrieved_for = [], {}
        for number, query, vector in statute_queries(index, facts, used, question_weight):
            if correspondence:
                query = correspondence.expand(query)
            for run in index.retrieve(query, per_query_k, vector=vector).values():
                runs.append(run)
                for doc in run:
                    if number is not None:
                        retrieved_for.setdefault(doc.doc_id, set()).add(number)
        fused = fusers.create("rrf.v1")(runs, None)
        quoted_by: dict[str, list[str]] = {}
        if precedents:
            fused, quoted_by = rank_with_precedents(fused, precedents, self.links())
        hits = [
            StatuteHit(
                rank=rank,
                statute_id=d.doc_id,
                title=statutes[d.doc_id]["title"],
                text=statutes[d.doc_id]["text"][:EXCERPT_CHARS],
                score=round(d.score, 6),
                questions=sorted(retrieved_for.get(d.doc_id, ())),
                quoted_by=quoted_by.get(d.doc_id, [])[:QUOTED_BY_SHOWN],
                sections=correspondence.describe(
                    f"{statutes[d.doc_id]['title']}\n{statutes[d.doc_id]['text']}", facts=facts
                )
                if correspondence
                else [],
            )
            for rank, d in enumerate((d for d in fused if d.doc_id in statutes), 1)
            if rank <= k
        ]
        return StatuteResult(
            facts=facts, questions=used, hits=hits, embedder=index.manifest.get("embedder", {}).get("name", "")
        )

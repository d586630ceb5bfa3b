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
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Iterable, Sequence

from aqgr.config import Settings
from aqgr.errors import AqgrError, ReadError
from schemas.statutes import StatuteHit, StatuteResult

STATUTES_DIR = "statutes"
EXCERPT_CHARS = 1000  # a statute hit carries at most this much of its text


class NoStatutesError(AqgrError):
    """The archive has no statute collection."""

    def __init__(self, where: Path):
        super().__init__(f"the archive has no statutes at {where}: add them with `aqgr statutes PATH...` (plain-text files, one statute each)")


def read_statute(path: Path) -> tuple[str, str]:
    """(title, text) of one statute file: AILA's 'Title:'/'Desc:' form, or a title line then the text."""
    try:
        raw = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError as exc:
        raise ReadError(str(path), "unreadable", str(exc)) from exc
    lines = raw.splitlines()
    if not lines:
        raise ReadError(str(path), "empty", "the statute file is empty")
    if lines[0].startswith("Title:"):
        title = lines[0][len("Title:"):].strip()
        rest = lines[1:]
        if rest and rest[0].startswith("Desc:"):
            rest = [rest[0][len("Desc:"):].strip(), *rest[1:]]
        return title, "\n".join(rest).strip()
    return lines[0].strip(), "\n".join(lines[1:]).strip()


def _statute_files(paths: Iterable[str | Path]) -> list[Path]:
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.txt") if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise ReadError(str(path), "not_found", "no such file or folder")
    return found


class StatuteCollection:
    """The statutes of one archive home, and their index (loaded once, reloaded when rebuilt)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.root = settings.home / STATUTES_DIR
        self._lock = threading.Lock()
        self._loaded: tuple[int, object, dict] | None = None  # (manifest mtime, index, statutes)

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    def exists(self) -> bool:
        return (self.index_dir / "manifest.json").exists() and (self.root / "statutes.json").exists()

    def statutes(self) -> dict[str, dict]:
        path = self.root / "statutes.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def add(self, paths: Iterable[str | Path]) -> int:
        """Add (or replace, by id) the statute files under `paths` and rebuild the statute index; returns the count."""
        from retrieval.embed_cache import EmbeddingCache
        from retrieval.index import IndexSpec, SummaryIndex

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
        tmp = self.root / f".statutes.json.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(statutes, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, self.root / "statutes.json")
        index.save(self.index_dir)
        return len(statutes)

    def _load(self):
        from retrieval.index import SummaryIndex

        manifest = self.index_dir / "manifest.json"
        if not self.exists():
            raise NoStatutesError(self.root)
        stamp = manifest.stat().st_mtime_ns
        with self._lock:
            if self._loaded is None or self._loaded[0] != stamp:
                self._loaded = (stamp, SummaryIndex.load(self.index_dir), self.statutes())
            return self._loaded[1], self._loaded[2]

    def search(self, facts: str, questions: Sequence[str], *, k: int = 10, per_query_k: int = 12) -> StatuteResult:
        """Statutes for the facts and the questions (each question is asked together with the facts)."""
        from retrieval.fusion import fusers

        index, statutes = self._load()
        facts = " ".join((facts or "").split())
        used = [" ".join(q.split()) for q in questions if q and q.strip()]
        runs, retrieved_for = [], {}
        for number, query in [(None, facts)] + [(i, f"{q}\n{facts}") for i, q in enumerate(used)]:
            for run in index.retrieve(query, per_query_k).values():
                runs.append(run)
                for doc in run:
                    if number is not None:
                        retrieved_for.setdefault(doc.doc_id, set()).add(number)
        fused = fusers.create("rrf.v1")(runs, None)
        hits = [
            StatuteHit(
                rank=rank,
                statute_id=d.doc_id,
                title=statutes[d.doc_id]["title"],
                text=statutes[d.doc_id]["text"][:EXCERPT_CHARS],
                score=round(d.score, 6),
                questions=sorted(retrieved_for.get(d.doc_id, ())),
            )
            for rank, d in enumerate((d for d in fused if d.doc_id in statutes), 1)
            if rank <= k
        ]
        return StatuteResult(facts=facts, questions=used, hits=hits, embedder=index.manifest.get("embedder", {}).get("name", ""))

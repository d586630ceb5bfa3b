"""The summary index: BM25 + FAISS over field-based documents, saved as a directory.

A saved index is a directory:

    manifest.json          format and schema version, spec (slots, embedder name and
                           fingerprint, tokenizer, BM25 parameters and n-grams, window size), doc-id
                           order, build timings, file names and their sha256
    documents.json         the slot texts of every document (what was indexed)
    bm25.npz, bm25.vocab.json        retrieval/bm25.py (over the indexed slot texts)
    dense.faiss, dense.windows.npz   retrieval/dense.py
    fulltext.npz, fulltext.vocab.json  optional: BM25 over the judgments' full texts
                                     (`build(..., full_texts=...)`; retriever "fulltext")

Each retriever (bm25, dense, fulltext) is a class in retrieval/retrievers.py that builds,
saves, loads and scores its own part; SummaryIndex loops over them. The reading side it
shares with the Milvus backend is retrieval/protocol.py `Index`.
    sentences.npz                    optional: short texts embedded at build time (the
                                     summaries' issue sentences, which question generation
                                     compares with the facts): `embed_query` finds them here

`save` is atomic: files are written into a temporary sibling directory which is then
renamed into place; a failure while writing leaves the previous index untouched.
`load` refuses an index built differently (IndexMismatchError naming every difference,
telling to rebuild) and recomputes nothing.

Importing this module loads neither torch, faiss, sentence-transformers nor llama-index.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, ClassVar, Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from aqgr.errors import EmptyArchiveError, IndexMismatchError, NoIndexError, UnknownNameError
from aqgr.schemas.summary import SCHEMA_VERSION, StructuredSummary

from .bm25 import BM25_B, BM25_EPSILON, BM25_IDF, BM25_K1, IDF_KINDS, QUERY_TF_KINDS
from .dense import SENTENCES_FILE, WINDOW_CHARS, QueryVectors, embed_sentences, load_sentences, save_sentences
from .documents import DEFAULT_SLOTS, check_slots, slot_texts
from .embed_cache import EmbeddingCache
from .embedders import DEFAULT_EMBEDDER, Embedder, embedders
from .protocol import select_retrievers
from .retrievers import RETRIEVERS, BuildContext, Query, Retriever, retriever_kinds
from .text import tokenizers
from .types import ScoredDoc, ranked

# Bump on any change to the files or their meaning; an index of another version is refused.
# 2: optional full-text BM25 (fulltext.npz / fulltext.vocab.json), listed in "retrievers";
#    optional pre-embedded sentences (sentences.npz), listed in "sentences".
# 3: "ngrams" (terms, or terms and adjacent pairs, per BM25 retriever).
FORMAT_VERSION = 3
MANIFEST = "manifest.json"
DOCUMENTS = "documents.json"
DEFAULT_TOKENIZER = "words.v1"
# Terms and adjacent pairs for the full texts (citation benchmark, full-text BM25 alone:
# MAP 0.120 -> 0.140); terms alone for the summaries until pairs are measured there.
BM25_NGRAMS = 1
FULLTEXT_NGRAMS = 2
# Full-text BM25 only (the summary BM25 keeps bm25_k1 and raw query counts: its documents
# are short, and Milvus scores it server-side). A judgment's facts as the query repeat their
# main words; "log" query tf keeps them from swamping the rest. k1 = 2.0, the top of
# Robertson and Zaragoza's usual 1.2-2.0 range: judgments are long and, with word pairs,
# each repeated phrase counts twice over, so term frequency saturates later. Citation
# benchmark, full-text BM25 alone (terms + pairs, Lucene idf, b = 0.75): raw / k1 1.2
# 0.1398, log / 1.2 0.1445, log / 2.0 0.1452 MAP (docs/experiments/2026-11-30-fulltext-bm25-settings.md).
FULLTEXT_K1 = 2.0
FULLTEXT_QUERY_TF = "log"

Progress = Callable[[str, int, int], None]


class IndexSpec(BaseModel):
    """How an index is built. Every default is declared once, where it comes from:

    slots: retrieval/documents.py DEFAULT_SLOTS (the study's retrieval slots, no precedents);
    embedder: retrieval/embedders.py (minilm-l6.v1, shipped in a package);
    tokenizer: retrieval/text.py (words.v1);
    bm25_k1 / bm25_b / bm25_epsilon / bm25_idf: retrieval/bm25.py (both BM25 retrievers);
    window_chars: retrieval/dense.py (fits MiniLM's 256-token input);
    bm25_ngrams / fulltext_ngrams: retrieval/text.py `with_pairs` (1: terms; 2: terms and
    adjacent pairs), for the summary and the full-text BM25 retrievers;
    fulltext_k1 / fulltext_query_tf: the full-text BM25's own k1 and query-side term
    frequency (retrieval/bm25.py QUERY_TF_KINDS); b, epsilon and idf are shared;
    dense_slots: the slots the dense retriever embeds (None, the default: every indexed
    slot; e.g. retrieval/documents.py DENSE_SLOTS, the legal ones: `dense_texts` takes
    those among `slots`, and a document with none of them is embedded whole).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    slots: tuple[str, ...] = DEFAULT_SLOTS
    embedder: str = DEFAULT_EMBEDDER
    tokenizer: str = DEFAULT_TOKENIZER
    bm25_k1: float = BM25_K1
    bm25_b: float = BM25_B
    bm25_epsilon: float = BM25_EPSILON
    bm25_idf: str = BM25_IDF
    window_chars: int = WINDOW_CHARS
    bm25_ngrams: int = BM25_NGRAMS
    fulltext_ngrams: int = FULLTEXT_NGRAMS
    fulltext_k1: float = FULLTEXT_K1
    fulltext_query_tf: str = FULLTEXT_QUERY_TF
    dense_slots: tuple[str, ...] | None = None

    @field_validator("slots", mode="before")
    @classmethod
    def _known_slots(cls, value):
        return check_slots(value)

    @field_validator("dense_slots", mode="before")
    @classmethod
    def _known_dense_slots(cls, value):
        return None if value is None else check_slots(value)

    @field_validator("window_chars")
    @classmethod
    def _positive_window(cls, value: int) -> int:
        if value < 100:
            raise ValueError("window_chars must be at least 100")
        return value

    @field_validator("bm25_idf", "fulltext_query_tf")
    @classmethod
    def _one_of(cls, value: str, info: ValidationInfo) -> str:
        allowed = {"bm25_idf": IDF_KINDS, "fulltext_query_tf": QUERY_TF_KINDS}[info.field_name]
        if value not in allowed:
            raise ValueError(f"{info.field_name} must be one of {', '.join(allowed)}")
        return value

    @field_validator("bm25_ngrams", "fulltext_ngrams")
    @classmethod
    def _ngrams(cls, value: int) -> int:
        if value not in (1, 2):
            raise ValueError("ngrams must be 1 (terms) or 2 (terms and adjacent pairs)")
        return value

    @classmethod
    def from_manifest(cls, manifest: dict) -> "IndexSpec":
        """The spec a saved index's manifest records (`describe()`'s inverse)."""
        ngrams = manifest.get("ngrams", {})
        # Indexes saved before the full-text BM25 had parameters of its own used the shared k1
        # and raw query counts.
        fulltext = manifest.get("fulltext_bm25", {})
        return cls(
            slots=tuple(manifest["slots"]),
            embedder=manifest["embedder"]["name"],
            tokenizer=manifest["tokenizer"],
            bm25_k1=manifest["bm25"]["k1"],
            bm25_b=manifest["bm25"]["b"],
            bm25_epsilon=manifest["bm25"]["epsilon"],
            bm25_idf=manifest["bm25"].get("idf", "okapi"),
            window_chars=manifest["window_chars"],
            bm25_ngrams=ngrams.get("bm25", 1),
            fulltext_ngrams=ngrams.get("fulltext", 1),
            fulltext_k1=fulltext.get("k1", manifest["bm25"]["k1"]),
            fulltext_query_tf=fulltext.get("query_tf", "raw"),
            # Indexes saved before dense_slots existed embedded every indexed slot.
            dense_slots=manifest.get("dense_slots"),
        )

    def describe(self) -> dict:
        """The spec as recorded in (and compared against) a manifest."""
        return {
            "slots": list(self.slots),
            "embedder": self.embedder,
            "tokenizer": self.tokenizer,
            "bm25": {"k1": self.bm25_k1, "b": self.bm25_b, "epsilon": self.bm25_epsilon, "idf": self.bm25_idf},
            "window_chars": self.window_chars,
            "ngrams": {"bm25": self.bm25_ngrams, "fulltext": self.fulltext_ngrams},
            "fulltext_bm25": {"k1": self.fulltext_k1, "query_tf": self.fulltext_query_tf},
            "dense_slots": None if self.dense_slots is None else list(self.dense_slots),
        }


def summarizer_of(summaries: Sequence[StructuredSummary]) -> str | None:
    """The engine that wrote `summaries` (their provenance), or None when several did."""
    engines = {s.provenance.engine for s in summaries}
    return engines.pop() if len(engines) == 1 else None


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _top_k(scores: np.ndarray, candidates: np.ndarray, doc_ids: Sequence[str], k: int) -> list[ScoredDoc]:
    """The k best candidates by (-score, id hash); ties at the cut are resolved by the hash rule."""
    idx = np.flatnonzero(candidates)
    if k <= 0 or idx.size == 0:
        return []
    if idx.size > k:
        threshold = np.partition(scores[idx], idx.size - k)[idx.size - k]
        idx = idx[scores[idx] >= threshold]
    return ranked((doc_ids[i], float(scores[i])) for i in idx)[:k]


def combine_vectors(base: np.ndarray | None, extra: np.ndarray | None, weight: float) -> np.ndarray | None:
    """normalise(base + weight * extra): a query vector leaning towards `extra` (a question)
    without embedding the combined text again (the facts' vector is memoised)."""
    if base is None or extra is None or weight == 0:
        return base if base is not None else extra
    mixed = np.asarray(base, dtype=np.float32) + np.float32(weight) * np.asarray(extra, dtype=np.float32)
    norm = float(np.linalg.norm(mixed))
    return (mixed / norm).astype(np.float32) if norm > 0 else None


def _resolve_embedder(spec: IndexSpec, embedder: Embedder | None) -> Embedder:
    if embedder is None:
        return embedders.create(spec.embedder)
    if embedder.name != spec.embedder:
        raise ValueError(f"embedder {embedder.name!r} given but the spec names {spec.embedder!r}")
    return embedder


class SummaryIndex:
    """The retrievers of retrieval/retrievers.py (bm25, dense, fulltext when built with full
    texts) over the same documents (one per summary)."""

    backend: ClassVar[str] = "embedded.v1"
    needs_uri: ClassVar[bool] = False  # the index lives in its directory (retrieval/backends.py)
    takes_full_texts: ClassVar[bool] = True  # `build(..., full_texts=)` adds the optional "fulltext" retriever
    serves: ClassVar[tuple[str, ...]] = RETRIEVERS  # every registered retriever (an index has those it was built with)

    def __init__(
        self,
        *,
        spec: IndexSpec,
        doc_ids: Sequence[str],
        texts: dict[str, dict[str, str]],
        parts: Mapping[str, Retriever],
        embedder: Embedder,
        manifest: dict,
        sentences: tuple[list[str], np.ndarray] | None = None,
    ):
        self.spec = spec
        # name -> retriever, in RETRIEVERS order (the order `retrievers` and `retrieve` use)
        self._parts = {name: parts[name] for name in RETRIEVERS if name in parts}
        self._sentences = sentences
        self._sentence_vectors: dict[str, np.ndarray] = (
            {t: v for t, v in zip(sentences[0], sentences[1])} if sentences is not None else {}
        )
        self._doc_ids = tuple(doc_ids)
        self._texts = texts
        self._embedder = embedder
        self._queries = QueryVectors(embedder, spec.window_chars, self._sentence_vectors)
        self._tokenizer = tokenizers.create(spec.tokenizer)
        self._manifest = manifest

    # --- building -----------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        summaries: Sequence[StructuredSummary],
        spec: IndexSpec | None = None,
        *,
        cache: EmbeddingCache | None = None,
        embedder: Embedder | None = None,
        progress: Progress | None = None,
        full_texts: Mapping[str, str] | None = None,
    ) -> "SummaryIndex":
        """Index `summaries` (one document each) as `spec` says (default: IndexSpec()).

        `cache` reuses vectors of unchanged windows; `embedder` overrides the registry's
        instance (it must carry the spec's embedder name); `progress(stage, done, total)`
        is called with stages "tokenize", "embed", "bm25", "faiss" (and "fulltext").
        `full_texts` (judgment id -> its whole text) adds the "fulltext" retriever: BM25
        over the judgments themselves, for recall beyond what the summaries kept.
        """
        spec = spec or IndexSpec()
        if not summaries:
            raise EmptyArchiveError("index")
        doc_ids = [s.judgment_id for s in summaries]
        texts = {s.judgment_id: slot_texts(s, spec.slots) for s in summaries}
        issues = [" ".join(issue.split()) for s in summaries for issue in s.issues]
        return cls.from_texts(doc_ids, texts, spec, cache=cache, embedder=embedder, progress=progress,
                              full_texts=full_texts, sentences=[t for t in issues if t], summarizer=summarizer_of(summaries))

    @classmethod
    def from_texts(
        cls,
        doc_ids: Sequence[str],
        texts: dict[str, dict[str, str]],
        spec: IndexSpec | None = None,
        *,
        cache: EmbeddingCache | None = None,
        embedder: Embedder | None = None,
        progress: Progress | None = None,
        full_texts: Mapping[str, str] | None = None,
        sentences: Sequence[str] | None = None,
        summarizer: str | None = None,
    ) -> "SummaryIndex":
        """Index documents given directly as field texts (`texts[doc_id] = {field: text}`).

        `full_texts` adds the "fulltext" retriever; `sentences` are short texts embedded now
        (one window each) so that `embed_query` of any of them costs no model call;
        `summarizer` (the engine that wrote the summaries) is recorded in the manifest.

        For documents that have no structured summary (statutes: title + description).
        The fields are indexed as given; `spec` supplies everything else (embedder,
        tokenizer, BM25 parameters, window size). `build` goes through here.
        """
        spec = spec or IndexSpec()
        doc_ids = list(doc_ids)
        if not doc_ids:
            raise EmptyArchiveError("index")
        missing = [d for d in doc_ids if d not in texts]
        if missing:
            raise ValueError(f"no texts for {len(missing)} document(s), e.g. {missing[0]}")
        texts = {d: dict(texts[d]) for d in doc_ids}
        report = progress or (lambda stage, done, total: None)
        if len(set(doc_ids)) != len(doc_ids):
            dupes = sorted({d for d in doc_ids if doc_ids.count(d) > 1})
            raise ValueError(f"judgment ids must be unique; repeated: {', '.join(dupes[:10])}")
        embedder = _resolve_embedder(spec, embedder)
        context = BuildContext(doc_ids=doc_ids, texts=texts, spec=spec, tokenizer=tokenizers.create(spec.tokenizer),
                               embedder=embedder, cache=cache, full_texts=full_texts, report=report)
        parts = {}
        for name in RETRIEVERS:
            part = retriever_kinds.get(name).build(context)
            if part is not None:
                parts[name] = part
        seconds = context.seconds

        stored, n_sentences_embedded = None, 0
        if sentences:
            start = time.perf_counter()
            stored, n_sentences_embedded = embed_sentences(embedder, sentences, spec.window_chars, cache,
                                                           lambda done, total: report("sentences", done, total))
            seconds["sentences"] = time.perf_counter() - start

        manifest = {
            "format_version": FORMAT_VERSION,
            "schema_version": SCHEMA_VERSION,
            **spec.describe(),
            "embedder": {"name": embedder.name, "fingerprint": embedder.fingerprint, "dim": embedder.dim},
            "retrievers": {name: list(part.files) for name, part in parts.items()},
            "sentences": [SENTENCES_FILE] if stored is not None else [],
            "n_sentences": len(stored[0]) if stored is not None else 0,
            "embedded_sentences": n_sentences_embedded,
            "documents": DOCUMENTS,
            **({"summarizer": summarizer} if summarizer else {}),
            "n_docs": len(doc_ids),
            **context.facts,
            "created_at": datetime.now(timezone.utc).isoformat(),
            "build_seconds": {part: round(s, 4) for part, s in seconds.items()},
            "doc_ids": doc_ids,
        }
        return cls(spec=spec, doc_ids=doc_ids, texts=texts, parts=parts, embedder=embedder, manifest=manifest,
                   sentences=stored)

    # --- saving and loading -------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write the index to `directory` atomically (replacing an index already there)."""
        target = Path(directory)
        if target.exists() and (not target.is_dir() or (any(target.iterdir()) and not (target / MANIFEST).exists())):
            raise FileExistsError(f"{target} exists and is not an aqgr index: choose another directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        tag = uuid.uuid4().hex[:12]
        tmp = target.parent / f".{target.name}.tmp-{tag}"
        old = target.parent / f".{target.name}.old-{tag}"
        tmp.mkdir()
        try:
            self._write(tmp)
            if target.exists():
                os.replace(target, old)
                try:
                    os.replace(tmp, target)
                except BaseException:
                    os.replace(old, target)
                    raise
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return target

    def _write(self, directory: Path) -> None:
        names = [name for part in self._parts.values() for name in part.save(directory)]
        if self._sentences is not None:
            names.append(save_sentences(directory, self._sentences))
        (directory / DOCUMENTS).write_text(
            json.dumps({d: self._texts[d] for d in self._doc_ids}, ensure_ascii=False), encoding="utf-8"
        )
        names.append(DOCUMENTS)
        manifest = dict(self._manifest, sha256={name: _sha256_file(directory / name) for name in names})
        with open(directory / MANIFEST, "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, ensure_ascii=False, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        self._manifest = manifest

    @classmethod
    def load(
        cls, directory: str | Path, expect: IndexSpec | None = None, *, embedder: Embedder | None = None
    ) -> "SummaryIndex":
        """Open a saved index; `expect` (optional) is the spec it must have been built with.

        Raises NoIndexError when there is none, IndexMismatchError (listing every
        difference) when it was built differently or its files changed since it was saved.
        """
        path = Path(directory)
        if not (path / MANIFEST).is_file():
            raise NoIndexError(str(path))
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
            spec = IndexSpec.from_manifest(manifest)
        except Exception as exc:  # unreadable, missing keys, unknown slot names, ...
            raise IndexMismatchError(str(path), [f"manifest.json is unreadable ({type(exc).__name__}: {exc})"]) from None

        differences = _compare(manifest, spec, expect)
        differences += _check_files(path, manifest)
        embedder, problem = _manifest_embedder(manifest, spec, embedder)
        if problem:
            differences.append(problem)
        if differences:
            raise IndexMismatchError(str(path), differences)

        # Every retriever a build always makes, and the optional ones the manifest lists.
        recorded = manifest.get("retrievers", {})
        try:
            parts = {name: retriever_kinds.get(name).load(path, spec) for name in RETRIEVERS
                     if not retriever_kinds.get(name).optional or name in recorded}
            sentences = load_sentences(path) if manifest.get("sentences") else None
            texts = json.loads((path / DOCUMENTS).read_text(encoding="utf-8"))
        except Exception as exc:
            raise IndexMismatchError(str(path), [f"index files unreadable ({type(exc).__name__}: {exc})"]) from None
        doc_ids = list(manifest["doc_ids"])
        sizes = {"manifest": len(doc_ids), "documents": len(texts), **{name: part.n_docs for name, part in parts.items()}}
        if len(set(sizes.values())) != 1 or set(texts) != set(doc_ids) or manifest.get("n_docs") != len(doc_ids):
            raise IndexMismatchError(str(path), [f"index parts disagree on the documents ({sizes})"])
        return cls(spec=spec, doc_ids=doc_ids, texts=texts, parts=parts, embedder=embedder, manifest=manifest,
                   sentences=sentences)

    # --- reading ------------------------------------------------------------------------

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return self._doc_ids

    @property
    def manifest(self) -> dict:
        return json.loads(json.dumps(self._manifest))

    def embed_query(self, text: str) -> np.ndarray | None:
        """A query's normalised vector (its windows embedded and mean-pooled); memoised."""
        return self._queries.one(text)

    def embed_queries(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        """`embed_query` of each text, the windows of all texts embedded in one model call."""
        return self._queries.many(texts)

    @staticmethod
    def combined_vector(base: np.ndarray | None, extra: np.ndarray | None, weight: float) -> np.ndarray | None:
        return combine_vectors(base, extra, weight)

    @property
    def retrievers(self) -> tuple[str, ...]:
        """The retrievers this index has (an optional one, "fulltext", only when it was built)."""
        return tuple(self._parts)

    @property
    def tokenizer(self):
        """The BM25 tokenizer (`spec.tokenizer`): text -> list of terms."""
        return self._tokenizer

    def idf(self) -> dict[str, float]:
        """A smooth, non-negative idf of every indexed term: log(1 + (N - df + 0.5) / (df + 0.5)).

        (BM25's own idf is floored and can be 0 for a term in half the documents; this
        one orders terms by rarity everywhere, which is what term weighting outside
        BM25 scoring needs.) The terms and document frequencies are the summary BM25's."""
        bm25 = self._parts["bm25"].matrix
        n = bm25.n_docs
        values = np.log1p((n - bm25.df + 0.5) / (bm25.df + 0.5))
        return dict(zip(bm25.terms, values.tolist()))

    def __len__(self) -> int:
        return len(self._doc_ids)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._texts

    def texts(self, doc_id: str) -> dict[str, str]:
        """The indexed slot texts of one document (KeyError if it is not in the index)."""
        return dict(self._texts[doc_id])

    def document_text(self, doc_id: str) -> str:
        """The indexed text of one document: non-empty slot texts joined by blank lines."""
        return "\n\n".join(t for t in self._texts[doc_id].values() if t)

    def retrieve(
        self,
        query: str,
        k: int,
        retrievers: Iterable[str] | None = None,
        restrict: set[str] | None = None,
        exclude: set[str] | None = None,
        *,
        vector: np.ndarray | None = None,
    ) -> dict[str, list[ScoredDoc]]:
        """Top-k documents per retriever (default: every one the index has), after keeping
        only `restrict` and dropping `exclude`.

        bm25 and fulltext return only documents with a non-zero score (sharing a query
        term); dense returns documents by their best window's cosine similarity to the
        query, or to `vector` when given (a query vector made by the caller).
        """
        absent = {name: retriever_kinds.get(name).absent for name in RETRIEVERS
                  if name not in self._parts and retriever_kinds.get(name).optional}
        names = select_retrievers(self.retrievers, retrievers, k, absent)
        allowed = np.ones(len(self._doc_ids), dtype=bool)
        if restrict is not None:
            keep = set(restrict)
            allowed &= np.fromiter((d in keep for d in self._doc_ids), dtype=bool, count=len(self._doc_ids))
        if exclude:
            drop = set(exclude)
            allowed &= np.fromiter((d not in drop for d in self._doc_ids), dtype=bool, count=len(self._doc_ids))
        asked = Query(query, self._tokenizer, lambda: self.embed_query(query) if allowed.any() and k else None, vector)
        runs: dict[str, list[ScoredDoc]] = {}
        for name in names:
            part = self._parts[name]
            scores = part.scores(asked)
            runs[name] = _top_k(scores, allowed & part.candidates(scores), self._doc_ids, k)
        return runs


def _compare(manifest: dict, spec: IndexSpec, expect: IndexSpec | None, version: int = FORMAT_VERSION) -> list[str]:
    diffs = []
    if manifest.get("format_version") != version:
        diffs.append(f"index format version {manifest.get('format_version')!r}, this aqgr reads {version!r}")
    if manifest.get("schema_version") != SCHEMA_VERSION:
        diffs.append(f"summary schema version {manifest.get('schema_version')!r}, current is {SCHEMA_VERSION!r}")
    if expect is not None:
        have, want = spec.describe(), expect.describe()
        for key in want:
            if have[key] != want[key]:
                diffs.append(f"{key} {have[key]!r}, expected {want[key]!r}")
    return diffs


def _check_files(path: Path, manifest: dict) -> list[str]:
    diffs = []
    for name, digest in sorted(manifest.get("sha256", {}).items()):
        if not (path / name).is_file():
            diffs.append(f"file {name} is missing")
        elif _sha256_file(path / name) != digest:
            diffs.append(f"file {name} changed since the index was saved")
    if not manifest.get("sha256"):
        diffs.append("manifest lists no file checksums")
    return diffs


def _manifest_embedder(manifest: dict, spec: IndexSpec, embedder: Embedder | None) -> tuple[Embedder | None, str | None]:
    """The embedder to query with, and a difference if it is not the one the index was built with."""
    try:
        embedder = _resolve_embedder(spec, embedder)
    except (UnknownNameError, ValueError) as exc:
        return None, f"embedder not available here ({exc})"
    recorded = manifest.get("embedder", {})
    if recorded.get("fingerprint") != embedder.fingerprint:
        return embedder, (
            f"embedder {spec.embedder!r} fingerprint {recorded.get('fingerprint')!r}, "
            f"the installed one is {embedder.fingerprint!r}"
        )
    if recorded.get("dim") != embedder.dim:
        return embedder, f"embedding dimension {recorded.get('dim')!r}, the embedder gives {embedder.dim}"
    return embedder, None

"""The systems that run through aqgr's own pipeline: summaries -> index -> (question-guided) search.

Each configuration in `PIPELINE_CONFIGS` is one named system (one flag to select):

* `bm25-summary`, `dense-summary`, `ensemble-summary`: the facts alone against the
  structured summaries (`SummaryIndex.retrieve`, fused with `rrf.v1` for the ensemble);
* `aqgr`: question-guided search as built (`Searcher.rank`: generated questions + facts,
  full-text BM25 + summary BM25 + dense, score fusion weighted 3/2/1 by the retrievers'
  standalone quality order, queries without the anonymisation placeholders, the
  precedents the fused judgments cite lifted through the archive's citation graph
  (`citation_graph`, saved in the archive home as `aqgr index` does), explanations); its
  own returned set is the explained hits a plain search returns;
* ablations of `aqgr`, each changing one thing (`PIPELINE_CONFIGS`): `aqgr-no-citations`
  (no precedents referred), `aqgr-citations-0.1`, `aqgr-citations-1`, `aqgr-citations-cosine`,
  `aqgr-citations-sum` (votes / sqrt(citing judgments), or summed), `aqgr+precedents`,
  `aqgr-facts-only` (no questions), `aqgr-question-weight-1`, `aqgr-keep-masks`,
  `aqgr-no-fulltext`, `aqgr-lexical-only`, `aqgr-equal-weights`, `aqgr-rrf`,
  `aqgr-bm25-only`, `aqgr-dense-only`, `aqgr-common-terms` (the full text without terms held by
  more than a fifth of the judgments), `aqgr-dense-once` (the facts' dense run stands in for the
  questions'), `aqgr-large` (every default above 100,000 judgments); `*-fused-order` variants rank in fused order
  (explain_top=1: no re-ordering by the explanation score); `aqgr-v1` /
  `aqgr-v1-facts-only` are the first configuration (summary BM25 + dense, RRF, raw facts).

Caching (`prepare`): the corpus is summarised ONCE per summariser into an aqgr Archive
home `<cache>/archives/<corpus fingerprint>` (judgment id = file stem: C1.txt -> C1);
indexes are built per IndexSpec into `<home>/indexes/<spec hash>` with the embedding
cache `<home>/cache/embeddings.sqlite`. A rerun reads the summaries and loads the saved
index: it costs only the retrieval. Loaded indexes are shared by the systems of one
process (`_LOADED`).

Backends: `<name>@milvus` is the same configuration, summaries and IndexSpec served by the
Milvus backend instead of the embedded one (eval/systems/on_backend.py: its index is cached beside
the embedded one, from the same embedding cache); a configuration naming a retriever the
backend lacks (`fulltext`) is refused.

Statutes (`aila-statutes`): statutes have no structured summary. The summary systems
index each as one document (title + description, `SummaryIndex.from_texts`, embeddings
cached in the same cache) and query it with the facts. The `aqgr` systems run the
product's statute search, as the server and the MCP tool do: the dataset's statutes are
added to a statute collection beside the case archive (`aqgr.pipeline.statutes.StatuteCollection`,
linked to the judgments that quote them, as `aqgr statutes` does; built once, in
`<cache>/statutes/collections/`), then `aqgr.pipeline.statutes.statutes_for` with the case
archive's Searcher (its questions, the question-guided case ranking as the precedents,
`rrf.v1` over 12 statutes per query and retriever) returns the top `depth` statutes: the
product's ranking, cut where the product cuts it (a statute it does not return counts
as not found). `aqgr-statutes-text-only` and the other systems without
`statutes_via_precedents` call the collection's search without the precedents.

Restrict (the study's pool) and exclude (citebench's citing judgment) are applied inside
retrieval (`SummaryIndex.retrieve`, `Searcher.rank`), so they shape the candidates, the
in-context examples and the fused scores, not only the final list.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from aqgr.eval.datasets import Dataset, find_documents, list_documents
from aqgr.eval.systems import on_backend
from aqgr.eval.systems.registry import Progress, default_cache_dir, systems
from aqgr.foundation.errors import ConfigError, DatasetError, IndexMismatchError, NoIndexError
from aqgr.pipeline.config import FULLTEXT_MAX_DF, SUMMARY_MAX_DF
from aqgr.retrieval.text import strip_masks

ARCHIVE_FORMAT = 1  # bump when what an eval archive home holds changes
DEFAULT_SUMMARIZER = "extractive.v1"
# Facts of real queries are long; the tiny test queries are not. Evaluation never refuses a query.
EVAL_MIN_CONTENT_WORDS = 1


@dataclass(frozen=True)
class PipelineConfig:
    """What differs between the summary-based systems and ablations."""

    retrievers: tuple[str, ...] = ("bm25", "dense")
    questions: bool = False  # question-guided (AQgR) search vs the facts alone
    precedents_slot: bool = False  # index the precedents slot too (the study: off scores higher on FIRE)
    fuser: str = "rrf.v1"
    weights: dict[str, float] | None = None  # fusion weight by retriever name; None = equal
    explain: bool = False  # Searcher.rank (questions, explanations); returned set = the explained hits
    drop_masks: bool = False  # query without the anonymisation placeholders (P1, Act A1, Section S)
    question_weight: float = 0.5  # dense query of a question: normalise(v(facts) + w * v(question))
    explain_top: int | None = None  # fused candidates the explainer re-orders (None: SearchOptions' default)
    explainer: str = "evidence.v2"  # the offline explainer (evidence.v1: scores add lexical coverage)
    bm25_ngrams: int | None = None  # summary BM25: 1 terms, 2 terms + adjacent pairs (None: IndexSpec's default)
    fulltext_ngrams: int | None = None  # full-text BM25, likewise
    bm25_idf: str | None = None  # both BM25 retrievers: "okapi" (rank-bm25) or "lucene" (None: IndexSpec's default)
    fulltext_k1: float | None = None  # full-text BM25's k1 (None: IndexSpec's default)
    fulltext_query_tf: str | None = None  # full-text BM25's query term frequency, "raw" or "log" (None: IndexSpec's)
    lexical_engine: str | None = None  # the engine under both BM25 retrievers (retrieval/lexical/; None: IndexSpec's)
    dense_legal_slots: bool = False  # dense embeds only the legal slots (retrieval/documents.py DENSE_SLOTS)
    statutes_via_precedents: bool = (
        False  # statutes: the case ranking's judgments vote for the statutes they quote (aqgr/pipeline/statutes.py)
    )
    question_alone: bool = False  # lexical retrievers read a question alone (SearchOptions.question_alone)
    fulltext_questions: bool | None = (
        None  # full text reads each question + facts; False: the facts' run stands in (None: SearchOptions' default, by archive size)
    )
    dense_questions: bool | None = (
        None  # dense reads each question + facts; False: the facts' run stands in (None: SearchOptions' default, by archive size)
    )
    rescore_questions: bool | None = (
        None  # a question's BM25 runs re-rank the facts' runs (None: SearchOptions' default, by archive size)
    )
    fulltext_max_df: float | None = (
        None  # full text leaves out terms in more than this share of the judgments (None: SearchOptions' default, by archive size)
    )
    summary_max_df: float | None = None  # summary BM25 likewise, a share of the summaries
    citation_weight: float | None = None  # precedents referred (SearchOptions.citation_weight; None: its default)
    citation_norm: str | None = (
        None  # precedents referred: mean, cosine or sum (SearchOptions.citation_norm; None: its default)
    )


# The default `aqgr` configuration, measured on the citation benchmark (438 queries): full-text
# BM25 beside the summary BM25 and dense retrievers, score fusion weighted by the
# retrievers' standalone quality order (full text 0.112 > summary BM25 0.108 > dense
# 0.057 MAP: weights 3, 2, 1), queries without the anonymisation placeholders, a
# question's dense query weighing it half as much as the facts (0.5 measured above 1.0);
# statutes also through the precedents that quote them, as the product ranks them
# (aqgr/pipeline/statutes.py; through the product's statute search: statute benchmark 0.213 -> 0.523 MAP, AILA dev statutes 0.083 -> 0.210);
# precedents referred at SearchOptions' default weight 0.3 (citation benchmark 0.1454 -> 0.1637).
AQGR = PipelineConfig(
    retrievers=("fulltext", "bm25", "dense"),
    weights={"fulltext": 3.0, "bm25": 2.0, "dense": 1.0},
    fuser="score.v1",
    drop_masks=True,
    questions=True,
    explain=True,
    question_weight=0.5,
    statutes_via_precedents=True,
)

# name -> configuration. Ablations of `aqgr`, each changing one thing of the default (a change that
# the default has since adopted goes: tests/eval/test_eval_pipeline.py checks no two are the same).
PIPELINE_CONFIGS: dict[str, PipelineConfig] = {
    "bm25-summary": PipelineConfig(retrievers=("bm25",)),
    "dense-summary": PipelineConfig(retrievers=("dense",)),
    "ensemble-summary": PipelineConfig(),
    "aqgr": AQGR,
    "aqgr+precedents": replace(AQGR, precedents_slot=True),
    "aqgr-facts-only": replace(AQGR, questions=False),
    "aqgr-question-weight-1": replace(AQGR, question_weight=1.0),
    "aqgr-keep-masks": replace(AQGR, drop_masks=False),
    "aqgr-no-fulltext": replace(AQGR, retrievers=("bm25", "dense"), weights={"bm25": 2.0, "dense": 1.0}),
    "aqgr-lexical-only": replace(AQGR, retrievers=("fulltext", "bm25"), weights={"fulltext": 2.0, "bm25": 1.0}),
    "aqgr-equal-weights": replace(AQGR, weights=None),
    "aqgr-rrf": replace(AQGR, fuser="rrf.v1"),
    "aqgr-explain-top-10": replace(AQGR, explain_top=10),
    "aqgr-evidence-v1": replace(AQGR, explainer="evidence.v1"),  # scores add the questions' lexical coverage
    "aqgr-fused-order": replace(AQGR, explain_top=1),  # the deep ranking in fused order (no explainer re-ordering)
    "aqgr-facts-only-fused-order": replace(AQGR, questions=False, explain_top=1),
    "aqgr-question-weight-1-fused-order": replace(AQGR, question_weight=1.0, explain_top=1),
    "aqgr-bm25-only": replace(AQGR, retrievers=("bm25",), weights=None),
    "aqgr-fulltext-terms": replace(AQGR, fulltext_ngrams=1),  # full-text BM25 without word pairs
    "aqgr+summary-pairs": replace(AQGR, bm25_ngrams=2),  # summary BM25 with word pairs too
    "aqgr-fulltext-only": replace(AQGR, retrievers=("fulltext",), weights=None),
    "aqgr-statutes-text-only": replace(AQGR, statutes_via_precedents=False),  # statutes by their text alone
    "aqgr-no-citations": replace(AQGR, citation_weight=0.0),  # no precedents referred (the citation graph unused)
    "aqgr-citations-0.1": replace(AQGR, citation_weight=0.1),
    "aqgr-citations-1": replace(AQGR, citation_weight=1.0),
    "aqgr-citations-cosine": replace(AQGR, citation_norm="cosine"),  # votes / sqrt(citing judgments), not their mean
    "aqgr-citations-sum": replace(AQGR, citation_norm="sum"),  # votes summed: much-cited judgments rise
    "aqgr-question-alone": replace(AQGR, question_alone=True),
    "aqgr-fulltext-once": replace(
        AQGR, fulltext_questions=False
    ),  # one full-text query a search: the facts' run stands in for the questions'
    "aqgr-rescored": replace(AQGR, rescore_questions=True),  # each question's BM25 runs re-rank the facts' candidates
    # the defaults above 100,000 judgments (aqgr/pipeline/config.py FULLTEXT_MAX_DF, SUMMARY_MAX_DF)
    "aqgr-large": replace(
        AQGR,
        rescore_questions=True,
        fulltext_questions=False,
        dense_questions=False,
        fulltext_max_df=FULLTEXT_MAX_DF,
        summary_max_df=SUMMARY_MAX_DF,
    ),
    "aqgr-dense-once": replace(
        AQGR, dense_questions=False
    ),  # one dense search a search: the facts' run stands in for the questions'
    "aqgr-common-terms": replace(
        AQGR, fulltext_max_df=FULLTEXT_MAX_DF
    ),  # only that one of them: full text without the common terms
    "aqgr-fulltext-raw-qtf": replace(AQGR, fulltext_query_tf="raw"),  # full text: repeated query words count linearly
    "aqgr-fulltext-k1-2": replace(
        AQGR, fulltext_k1=2.0
    ),  # full text: k1 2.0 (the default before tantivy.v1; matrix.v1)
    "aqgr-fulltext-k1-3": replace(AQGR, fulltext_k1=3.0),
    "aqgr-matrix": replace(
        AQGR, lexical_engine="matrix.v1"
    ),  # the default on the in-memory engine (exact BM25, no quantised lengths)
    "aqgr+dense-legal-slots": replace(
        AQGR, dense_legal_slots=True
    ),  # dense over issues, reasoning, new principles only
    "aqgr-dense-only": replace(AQGR, retrievers=("dense",), weights=None),
    # The first question-guided configuration (summary BM25 + dense, RRF, raw facts).
    "aqgr-v1": PipelineConfig(questions=True, explain=True, explainer="evidence.v1"),
    "aqgr-v1-facts-only": PipelineConfig(questions=False, explain=True, explainer="evidence.v1"),
}

_LOADED: dict[tuple, Any] = {}  # (kind, path, ...) -> loaded index / searcher, shared in one process
_LOCK = threading.Lock()


# ------------------------------------------------------------------ cached archive and indexes


def corpus_fingerprint(docs_dir: Path, doc_ids) -> str:
    """Identity of a document folder: its path and every file's id, size and mtime."""
    digest = hashlib.sha256(f"{ARCHIVE_FORMAT}\0{Path(docs_dir).resolve()}\n".encode())
    for doc_id in doc_ids:
        stat = (Path(docs_dir) / f"{doc_id}.txt").stat()
        digest.update(f"{doc_id}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:24]


def spec_hash(spec) -> str:
    return hashlib.sha256(json.dumps(spec.describe(), sort_keys=True).encode()).hexdigest()[:16]


def case_archive(docs_dir: Path, doc_ids, cache_dir: Path, summarizer: str, progress: Progress | None = None):
    """The Archive holding the summaries of `docs_dir` (summarised now if not yet: resumable)."""
    from aqgr.archive.home import Archive

    home = Path(cache_dir) / "archives" / corpus_fingerprint(docs_dir, doc_ids)
    archive = Archive(home, summarizer=summarizer)
    done = home / f"summarized.{summarizer}.json"
    if not _marker_ok(done, archive):
        report = archive.summarize(
            [Path(docs_dir) / f"{d}.txt" for d in doc_ids],
            progress=(lambda n, total, current: progress(f"summarising ({summarizer})", n, total))
            if progress
            else None,
        )
        if not report.processed:
            raise DatasetError(
                f"no judgment of {docs_dir} could be summarised with {summarizer}: "
                f"{report.failures_by_reason or 'nothing to read'}"
            )
        from aqgr.summarizer.base import summarizers

        done.write_text(
            json.dumps(
                {
                    "engine": summarizer,
                    "version": summarizers.create(summarizer).version,
                    "processed": report.processed,
                    "failed": {f.judgment_id or f.path: f.reason for f in report.failed},
                },
                indent=1,
            )
        )
    return archive


def _marker_ok(marker: Path, archive) -> bool:
    """The corpus was summarised completely before (the home is keyed by the files' sizes and mtimes)."""
    if not marker.is_file():
        return False
    from aqgr.schemas.summary import SCHEMA_VERSION
    from aqgr.summarizer.base import summarizers

    engine = summarizers.create(archive.settings.summarizer)
    recorded = json.loads(marker.read_text())
    if recorded.get("version") != engine.version:  # a new engine version: summarise again (unchanged rows are kept)
        return False
    counts = {(row["engine"], row["schema_version"]): row["count"] for row in archive.status()["summaries"]}
    return counts.get((engine.name, SCHEMA_VERSION), 0) == recorded["processed"]


def case_index(archive, spec, progress: Progress | None = None):
    """The saved index of `archive`'s summaries under `spec` (built on first use)."""
    from aqgr.retrieval.dense.cache import EmbeddingCache
    from aqgr.retrieval.embedded.index import SummaryIndex

    directory = archive.home / "indexes" / spec_hash(spec)
    key = ("index", str(directory))
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
    summaries = archive.summaries()
    try:
        index = SummaryIndex.load(directory, expect=spec)
        if set(index.doc_ids) != {s.judgment_id for s in summaries}:
            index = None
    except (NoIndexError, IndexMismatchError):
        index = None
    if index is not None and ("fulltext" not in index.retrievers or not index.manifest.get("n_sentences")):
        index = None
    if index is None:
        full_texts = {s.judgment_id: archive.text(s.judgment_id) or "" for s in summaries}
        with EmbeddingCache(archive.settings.cache_dir / "embeddings.sqlite") as cache:
            index = SummaryIndex.build(
                summaries, spec, cache=cache, progress=_stages(progress, "index"), full_texts=full_texts
            )
        index.save(directory)
    with _LOCK:
        _LOADED[key] = index
    return index


def text_index(dataset: Dataset, spec, cache_path: Path, progress: Progress | None = None):
    """An in-memory index of the dataset's documents as plain text (statutes); embeddings cached."""
    from aqgr.retrieval.dense.cache import EmbeddingCache
    from aqgr.retrieval.embedded.index import SummaryIndex

    key = (
        "texts",
        str(dataset.docs_dir.resolve()),
        corpus_fingerprint(dataset.docs_dir, dataset.doc_ids),
        spec_hash(spec),
    )
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
    texts = {doc_id: {"text": text} for doc_id, text in dataset.documents()}
    with EmbeddingCache(cache_path) as cache:
        index = SummaryIndex.from_texts(
            dataset.doc_ids, texts, spec, cache=cache, progress=_stages(progress, "statute index")
        )
    with _LOCK:
        _LOADED[key] = index
    return index


def statute_collection(dataset: Dataset, archive, spec, root: Path, progress: Progress | None = None):
    """The dataset's statutes as the product keeps them beside the case `archive`: a
    StatuteCollection (index under `spec`, links to the judgments quoting them), added once
    under `<root>/statutes/collections/` and reused."""
    from aqgr.pipeline.config import Settings
    from aqgr.pipeline.statutes import LINKS_FILE, StatuteCollection

    name = f"{corpus_fingerprint(dataset.docs_dir, dataset.doc_ids)}-{spec_hash(spec)}-{archive.home.name}"
    key = ("statutes", name, str(root))
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
    collection = StatuteCollection(Settings(home=Path(root) / "statutes" / "collections" / name, index=spec))
    if not collection.exists():
        if progress:
            progress("statute collection", 0, len(dataset.doc_ids))
        collection.add([Path(dataset.docs_dir) / f"{d}.txt" for d in dataset.doc_ids], judgments=archive.texts())
    elif collection.renew() or not (collection.root / LINKS_FILE).exists():  # renew: an older aqgr's index
        collection.link(archive.texts())
    with _LOCK:
        _LOADED[key] = collection
    return collection


def citation_graph(archive, progress: Progress | None = None):
    """The citations among the archive's judgments, as `aqgr index` saves them in the home
    (Archive.link_citations): found once per archive home."""
    key = ("citations", str(archive.home))
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
    graph = archive.citations()
    if graph is None:  # not `or`: a graph without links is a valid, falsy one
        graph = archive.link_citations(_stages(progress, "archive") if progress else None)
    with _LOCK:
        _LOADED[key] = graph
    return graph


def _stages(progress: Progress | None, what: str):
    if progress is None:
        return None
    return lambda stage, done, total: progress(f"{what}: {stage}", done, total)


# ------------------------------------------------------------------ the system


class ArchiveSystem:
    """A system backed by aqgr's summaries, index and Searcher."""

    def __init__(
        self,
        name: str,
        pipeline: PipelineConfig,
        *,
        summarizer: str = DEFAULT_SUMMARIZER,
        embedder: str | None = None,
        question_generator: str = "harvest.v1",
        explainer: str | None = None,
        backend: str | None = None,
        milvus_uri: str | None = None,
        bm25_idf: str | None = None,
    ):
        # The index backend (eval/systems/on_backend.py): `name@milvus` is this configuration served by Milvus.
        self.backend = on_backend.resolve(backend)
        self.name = on_backend.system_name(name, self.backend)
        on_backend.check(
            self.name,
            pipeline.retrievers,
            self.backend,
            lambda: [
                n for n, c in PIPELINE_CONFIGS.items() if set(c.retrievers) <= set(on_backend.served(self.backend))
            ],
        )
        self.milvus_uri = milvus_uri if self.backend == "milvus.v1" else None
        self.pipeline = replace(pipeline, bm25_idf=bm25_idf) if bm25_idf else pipeline  # `--bm25-idf` overrides
        self.summarizer = summarizer
        self.embedder = embedder
        if bm25_idf:
            try:
                self.index_spec()
            except ValueError as exc:  # pydantic's ValidationError
                raise ConfigError(f"system {self.name!r}: {exc}") from None
        self.question_generator = question_generator
        self.explainer = explainer or pipeline.explainer
        self._index = None  # what is ranked (case summaries, or statute texts)
        self._searcher = None  # question-guided search over the case summaries
        self._statutes = (
            None  # the product's statute collection beside the case archive (aqgr systems), made in prepare
        )
        self._returned: dict[str, list[str]] = {}
        self._questions: dict[str, list[str]] = {}
        self.home: Path | None = None
        self.kind: str | None = None
        self._uris: dict[str, str] = {}  # where the Milvus indexes live (cases, statutes), known after prepare

    # -- configuration ---------------------------------------------------------------------
    def index_spec(self):
        from aqgr.retrieval.documents import DEFAULT_SLOTS
        from aqgr.retrieval.spec import IndexSpec

        fields: dict[str, Any] = {}
        if self.pipeline.precedents_slot:
            fields["slots"] = tuple(DEFAULT_SLOTS) + ("precedents",)
        if self.pipeline.dense_legal_slots:
            from aqgr.retrieval.documents import DENSE_SLOTS

            fields["dense_slots"] = DENSE_SLOTS
        if self.embedder:
            fields["embedder"] = self.embedder
        for name in (
            "bm25_ngrams",
            "fulltext_ngrams",
            "bm25_idf",
            "fulltext_k1",
            "fulltext_query_tf",
            "lexical_engine",
        ):
            if getattr(self.pipeline, name) is not None:
                fields[name] = getattr(self.pipeline, name)
        if fields.get("bm25_idf", "lucene") != "lucene" or fields.get("fulltext_k1", 1.2) != 1.2:
            fields["lexical_engine"] = "matrix.v1"  # BM25 parameters the default engine (tantivy's, fixed) lacks
        return IndexSpec(**fields)

    def search_options(self):
        from aqgr.pipeline.config import SearchOptions

        return SearchOptions(
            retrievers=self.pipeline.retrievers,
            fuser=self.pipeline.fuser,
            weights=self.pipeline.weights,
            drop_masks=self.pipeline.drop_masks,
            question_weight=self.pipeline.question_weight,
            question_alone=self.pipeline.question_alone,
            fulltext_questions=self.pipeline.fulltext_questions,
            dense_questions=self.pipeline.dense_questions,
            rescore_questions=self.pipeline.rescore_questions,
            fulltext_max_df=self.pipeline.fulltext_max_df,
            summary_max_df=self.pipeline.summary_max_df,
            **({"explain_top": self.pipeline.explain_top} if self.pipeline.explain_top else {}),
            **({"citation_weight": self.pipeline.citation_weight} if self.pipeline.citation_weight is not None else {}),
            **({"citation_norm": self.pipeline.citation_norm} if self.pipeline.citation_norm is not None else {}),
            n_questions=SearchOptions().n_questions if self.pipeline.questions else 0,
            min_content_words=EVAL_MIN_CONTENT_WORDS,
        )

    def config(self) -> dict:
        return {
            "system": self.name,
            **asdict(self.pipeline),
            "backend": self.backend,
            **({"milvus_uris": self._uris or None} if self.backend == "milvus.v1" else {}),
            **({"backend_notes": notes} if (notes := on_backend.notes(self.index_spec(), self.backend)) else {}),
            "summarizer": self.summarizer,
            "index_spec": self.index_spec().describe(),
            "search_options": self.search_options().model_dump(mode="json"),
            "question_generator": self.question_generator if self.pipeline.questions else None,
            "explainer": self.explainer
            if self.pipeline.explain
            else None,  # statutes: it orders the case ranking's head
            **(
                {
                    "statute_search": "aqgr.pipeline.statutes.statutes_for"
                    if self.pipeline.statutes_via_precedents
                    else "aqgr.pipeline.statutes.StatuteCollection.search",
                    "statute_collection": str(self._statutes.root),
                }
                if self._statutes is not None
                else {}
            ),
            "archive_home": str(self.home) if self.home else None,
            "documents": "structured summaries" if self.kind != "statutes" else "statute title + description",
            "questions_used": self._questions or None,
        }

    # -- prepare -----------------------------------------------------------------------------
    def prepare(self, dataset: Dataset, *, cache_dir: Path | None = None, progress: Progress | None = None) -> None:
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.kind = dataset.kind
        self._returned, self._questions, self._uris, self._statutes = {}, {}, {}, None
        spec = self.index_spec()
        if dataset.kind == "cases":
            archive = case_archive(dataset.docs_dir, dataset.doc_ids, root, self.summarizer, progress)
            self.home = archive.home
            self._index = self._case_index(archive, spec, progress)
            if self.pipeline.explain:
                self._searcher = self.searcher_for(archive, self._index)
            return
        if not self.pipeline.explain:  # the summary systems: the statute texts are the documents
            self._index = self._text_index(dataset, spec, root, progress)
            return
        # the aqgr systems: the product's statute search, with the case archive's Searcher
        try:
            try:
                cases_dir = find_documents(dataset.root, "cases")
            except DatasetError:  # a benchmark folder: the judgments beside the statutes
                cases_dir = find_documents(dataset.root, "cases", docs=dataset.docs_dir.parent)
        except DatasetError as exc:
            raise ConfigError(f"system {self.name!r} ranks statutes with the case archive: {exc}") from None
        case_ids = list_documents(cases_dir, "cases")
        archive = case_archive(cases_dir, case_ids, root, self.summarizer, progress)
        self.home = archive.home
        self._index = self._case_index(archive, spec, progress)
        self._searcher = self.searcher_for(archive, self._index)
        self._statutes = statute_collection(dataset, archive, spec, root, progress)

    def _case_index(self, archive, spec, progress):
        """The case summaries' index on this system's backend (eval/systems/on_backend.py for Milvus)."""
        if self.backend == on_backend.DEFAULT_BACKEND:
            return case_index(archive, spec, progress)
        uri = self._uris["cases"] = self.milvus_uri or on_backend.default_uri(archive.home)
        directory = on_backend.index_dir(archive.home / "indexes" / spec_hash(spec), uri)
        return on_backend.milvus_case_index(archive, spec, directory, uri, _stages(progress, "milvus index"))

    def _text_index(self, dataset: Dataset, spec, root: Path, progress):
        """The statutes' index on this system's backend."""
        cache_path = root / "statutes" / "embeddings.sqlite"
        if self.backend == on_backend.DEFAULT_BACKEND:
            return text_index(dataset, spec, cache_path, progress)
        uri = self._uris["statutes"] = self.milvus_uri or on_backend.default_uri(root / "statutes")
        base = (
            root / "statutes" / "indexes" / f"{corpus_fingerprint(dataset.docs_dir, dataset.doc_ids)}-{spec_hash(spec)}"
        )
        texts = {doc_id: {"text": text} for doc_id, text in dataset.documents()}
        return on_backend.milvus_text_index(
            dataset.doc_ids,
            texts,
            spec,
            on_backend.index_dir(base, uri),
            uri,
            cache_path,
            _stages(progress, "statute milvus index"),
        )

    def searcher_for(self, archive, index):
        """The product's Searcher over `index` (`Archive.open_searcher`): this system's engines
        and search options, the archive's citation graph (found now if not yet)."""
        from aqgr.archive.home import Archive

        key = (
            "searcher",
            str(archive.home),
            spec_hash(index.spec),
            self.backend,
            self.summarizer,
            self.question_generator,
            self.explainer,
        )
        with _LOCK:
            if key in _LOADED:
                return _LOADED[key]
        citation_graph(archive)  # saved in the home, where the searcher reads it
        settings = archive.settings.model_copy(
            update={
                "question_generator": self.question_generator,
                "explainer": self.explainer,
                "search": self.search_options(),
                "index": index.spec,
            }
        )
        searcher = Archive(settings=settings).open_searcher(index)
        with _LOCK:
            _LOADED[key] = searcher
        return searcher

    # -- rank --------------------------------------------------------------------------------
    def rank(self, query_id, text, *, depth, restrict=None, exclude=None) -> list[tuple[str, float]]:
        if self._index is None:
            raise ConfigError(f"system {self.name!r}: call prepare(dataset) before rank()")
        options = self.search_options()
        if self.kind == "cases" and self.pipeline.explain:
            result, ranking = self._searcher.rank(
                text, depth=depth, restrict=restrict, exclude=exclude, options=options
            )
            self._questions[query_id] = list(result.questions)
            self._returned[query_id] = [h.judgment_id for h in result.hits[: options.k]]
            return [(d.doc_id, d.score) for d in ranking]
        if self._statutes is not None:
            return self._rank_statutes(query_id, text, depth, exclude, options)
        query = (strip_masks(text) or text) if self.pipeline.drop_masks else text
        return [(d.doc_id, d.score) for d in self._fused(query, depth, restrict, exclude, options)]

    def _rank_statutes(self, query_id, text, depth, exclude, options) -> list[tuple[str, float]]:
        """The product's statute search (`aqgr.pipeline.statutes.statutes_for`), its top `depth`; without
        `statutes_via_precedents`, the collection's search on the Searcher's questions alone.
        `exclude` keeps a query's own (citing) judgment out of the case ranking."""
        from aqgr.pipeline.statutes import statutes_for

        if self.pipeline.statutes_via_precedents:
            result = statutes_for(self._searcher, self._statutes, text, k=depth, exclude=exclude, options=options)
        else:
            questions = self._searcher.plan(text, exclude=exclude, options=options).questions
            result = self._statutes.search(text, questions, k=depth, question_weight=options.question_weight)
        self._questions[query_id] = list(result.questions)
        return [(h.statute_id, h.score) for h in result.hits]

    def _fused(self, query, depth, restrict, exclude, options):
        """The summary systems' ranking of the statute texts for the facts."""
        from aqgr.retrieval.fusion import fusers

        names = [name for name in options.retrievers if name in self._index.retrievers]
        found = self._index.retrieve(query, depth, retrievers=names, restrict=restrict, exclude=exclude)
        runs = [found[name] for name in names]
        if len(runs) == 1:
            return runs[0][:depth]
        return fusers.create(options.fuser)(runs, options.fusion_weights(names))[:depth]

    def returned(self, query_id: str) -> list[str] | None:
        """The system's own returned set (aqgr's explained hits); None: the harness default (top 10)."""
        return self._returned.get(query_id)


def _factory(name: str, config: PipelineConfig):
    def build(**options) -> ArchiveSystem:
        return ArchiveSystem(name, config, **options)

    build.index_backends = True  # `name@<backend>` (eval/systems/registry.py get_system)
    return build


for _name, _config in PIPELINE_CONFIGS.items():
    systems.register(_name)(_factory(_name, _config))

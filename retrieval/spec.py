"""How an index is built: `IndexSpec`, the recipe every backend records in its manifest.

Every default is declared once, here (the BM25 parameters, the embedder, the window size, the
tokenizer, the lexical engine) or in the module it comes from (named in the class docstring). A saved index records `describe()`; `from_manifest` reads it back, and a load
that expects another spec is refused with every difference listed.

Importing this module loads nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from .documents import DEFAULT_SLOTS, check_slots

# BM25 parameters: k1 = 1.2, b = 0.75 are the usual Robertson/Lucene settings (rank-bm25's
# own k1 default is 1.5); epsilon = 0.25 is rank-bm25's floor for negative idf values.
BM25_K1 = 1.2
BM25_B = 0.75
BM25_EPSILON = 0.25
# idf: "okapi" is rank-bm25's BM25Okapi idf, log((N - df + 0.5) / (df + 0.5)) with negative
# values (terms in more than half the documents) replaced by epsilon * the mean idf, so a
# term in 60% of the documents can weigh more than one in 40%; "lucene" is Lucene's
# log(1 + (N - df + 0.5) / (df + 0.5)): positive and falling with df everywhere.
# The index default (IndexSpec.bm25_idf): Lucene's (monotone in df; what Milvus computes, so
# both index backends rank alike; citation benchmark, full-text BM25 alone: okapi 0.1119,
# lucene 0.1173 MAP). BM25Matrix.build itself defaults to okapi (= rank-bm25).
IDF_KINDS = ("okapi", "lucene")
BM25_IDF = "lucene"
# Query-side term frequency: "raw" counts each query token once per occurrence (as rank-bm25
# does); "log" weighs a term occurring n times in the query 1 + ln(n) (SMART's sublinear tf):
# long queries (a judgment's facts) repeat their main words many times, and "raw" lets those
# few words swamp the rest. "unique" (each term once) was measured worse than both (citation
# benchmark, docs/experiments/2026-11-30-fulltext-bm25-settings.md).
QUERY_TF_KINDS = ("raw", "log")

# The embedder of a new index (a name in retrieval/dense/embedders.py `embedders`).
DEFAULT_EMBEDDER = "minilm-l6-int8.v1"
# ~1,000 characters per window stays under MiniLM's 256-token input (NOTES-ENV.md).
WINDOW_CHARS = 1000

# Search profiles: how a search reads an index, one name for a set of settings (what each sets:
# aqgr/pipeline/config.py `SEARCH_PROFILES`). The profile is chosen when an index is built, by
# the number of judgments it is built with, and recorded in its manifest ("search_profile"), so
# that an archive growing past the line keeps the ranking it was built with until it is rebuilt;
# a search may name another (SearchOptions.profile), and every result says which ran.
# "standard": every question read over the whole archive, every query term kept. "large" (above
# LARGE_ARCHIVE judgments): a question re-ranks the facts' candidates, the facts' full-text and
# dense runs stand in for the questions', common terms are left out of the BM25 queries: at
# 1,000,000 judgments a full-text query over long facts takes ~275 ms and a search made four.
SEARCH_PROFILES = ("standard", "large")
LARGE_ARCHIVE = 100_000


def profile_for(n_docs: int) -> str:
    """The search profile of an index built with `n_docs` judgments."""
    return "large" if n_docs > LARGE_ARCHIVE else "standard"


def check_profile(name: str) -> str:
    """`name` when it is a search profile; else UnknownNameError listing them."""
    if name not in SEARCH_PROFILES:
        from aqgr.foundation.errors import UnknownNameError

        raise UnknownNameError("search profile", name, list(SEARCH_PROFILES))
    return name


# The engine under the BM25 retrievers (retrieval/lexical/ `lexical_engines`).
DEFAULT_LEXICAL_ENGINE = "tantivy.v1"
DEFAULT_TOKENIZER = "words.v2"
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
# The default lexical engine (retrieval/lexical/ `tantivy.v1`, on disk) has
# Lucene's fixed k1 = 1.2, b = 0.75: the full-text default follows it (log / 1.2 above, 0.0007
# below 2.0 in that measurement). Other values need the `matrix.v1` engine (in memory; the
# evaluation's parameter ablations).
FULLTEXT_K1 = 1.2
FULLTEXT_QUERY_TF = "log"

Progress = Callable[[str, int, int], None]


class IndexSpec(BaseModel):
    """How an index is built. Every default is declared once, where it comes from:

    slots: retrieval/documents.py DEFAULT_SLOTS (the study's retrieval slots, no precedents);
    embedder: DEFAULT_EMBEDDER above, a name in retrieval/dense/embedders.py (minilm-l6-int8.v1:
    the packaged MiniLM in int8);
    tokenizer: retrieval/text.py (words.v2; words.v1 before 2026-12-06);
    bm25_k1 / bm25_b / bm25_epsilon / bm25_idf: above (both BM25 retrievers; the engines of
    retrieval/lexical/ and BM25Matrix, retrieval/lexical/bm25.py, default to them);
    window_chars: WINDOW_CHARS above (fits MiniLM's 256-token input; retrieval/dense/windows.py);
    bm25_ngrams / fulltext_ngrams: retrieval/text.py `with_pairs` (1: terms; 2: terms and
    adjacent pairs), for the summary and the full-text BM25 retrievers;
    fulltext_k1 / fulltext_query_tf: the full-text BM25's own k1 and query-side term
    frequency (QUERY_TF_KINDS above); b, epsilon and idf are shared;
    lexical_engine: retrieval/lexical/, the engine under both BM25 retrievers (tantivy.v1:
    on disk, incremental, k1/b fixed at 1.2/0.75; matrix.v1: in memory, any parameters);
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
    lexical_engine: str = DEFAULT_LEXICAL_ENGINE

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
        """The spec a saved index's manifest records (`describe()`'s inverse). A manifest of a format
        before 4 lacks some of its keys: KeyError (the backends' `load` then names the format)."""
        return cls(
            slots=tuple(manifest["slots"]),
            embedder=manifest["embedder"]["name"],
            tokenizer=manifest["tokenizer"],
            bm25_k1=manifest["bm25"]["k1"],
            bm25_b=manifest["bm25"]["b"],
            bm25_epsilon=manifest["bm25"]["epsilon"],
            bm25_idf=manifest["bm25"]["idf"],
            window_chars=manifest["window_chars"],
            bm25_ngrams=manifest["ngrams"]["bm25"],
            fulltext_ngrams=manifest["ngrams"]["fulltext"],
            fulltext_k1=manifest["fulltext_bm25"]["k1"],
            fulltext_query_tf=manifest["fulltext_bm25"]["query_tf"],
            dense_slots=manifest["dense_slots"],
            lexical_engine=manifest["lexical_engine"],
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
            "lexical_engine": self.lexical_engine,
        }

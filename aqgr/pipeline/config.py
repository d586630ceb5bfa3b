"""Settings of an archive and of a search. Defaults are declared here, once.

Where a default comes from the AQgR study (SPEC.md) it says so; the rest are principled
choices documented beside them. Settings are immutable; derive a variant with
`settings.model_copy(update={...})`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Unpack

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from aqgr.llm.config import ProviderConfig, ProviderOptions
from aqgr.retrieval.spec import IndexSpec

ENV_HOME = "AQGR_HOME"
ENV_DATABASE_URL = "AQGR_DATABASE_URL"
# Engine choice by environment; with a model provider configured and no choice made, every
# stage uses its model-backed engine `llm.v1`; without one, the offline engines.
ENV_ENGINES = {
    "summarizer": "AQGR_SUMMARIZER",
    "question_generator": "AQGR_QUESTION_GENERATOR",
    "explainer": "AQGR_EXPLAINER",
    "treatment": "AQGR_TREATMENT",
}
MODEL_ENGINE = "llm.v1"


# The full-text BM25 query of the "large" profile leaves out terms held by more than FULLTEXT_MAX_DF
# of the judgments (SearchOptions.fulltext_max_df): at 1,000,000 they carry ~97% of a long facts
# query's postings, which tantivy walks to the end (its binding never prunes).
FULLTEXT_MAX_DF = 0.2
# ... and the summary BM25 query those in more than SUMMARY_MAX_DF of the summaries (SearchOptions.summary_max_df):
# near-stopwords (Lucene idf below ln 2); a stricter cut cost ranking there (docs/experiments/2026-12-06-summary-common-terms.md).
SUMMARY_MAX_DF = 0.5

# What each search profile (retrieval/spec.py `SEARCH_PROFILES`: chosen when the index is built,
# by its size, and recorded in its manifest) sets among SearchOptions' fields; a field the options
# set themselves wins. "standard": every question read over the whole archive with every term.
# "large" (over retrieval/spec.py LARGE_ARCHIVE judgments at build): at 1,000,000 judgments a
# full-text query over long facts takes ~275 ms, a summary one 100-150 ms and a dense one ~41 ms,
# and a search made four of each; re-ranking the facts' candidates costs milliseconds. On the
# citation benchmark the large settings scored MAP 0.1631 -> 0.1668 (each step's report:
# docs/experiments/2026-12-06-fulltext-once.md, -dense-once.md, -common-terms.md,
# -summary-common-terms.md, -rescored-questions.md); adopting them at every size is a ranking
# change, to be measured on every benchmark first.
SEARCH_PROFILES: dict[str, dict[str, bool | float]] = {
    "standard": {
        "rescore_questions": False,
        "fulltext_questions": True,
        "dense_questions": True,
        "fulltext_max_df": 1.0,
        "summary_max_df": 1.0,
    },
    "large": {
        "rescore_questions": True,
        "fulltext_questions": False,
        "dense_questions": False,
        "fulltext_max_df": FULLTEXT_MAX_DF,
        "summary_max_df": SUMMARY_MAX_DF,
    },
}


class SearchOptions(BaseModel):
    """How a question-guided search runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_questions: int = Field(default=3, ge=0, le=20, description="Generated questions kept: the study keeps the top 3.")
    question_min_ratio: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="A generated question is used only if its score is at least this share of the best one's (drops off-topic questions).",
    )
    n_candidate_questions: int = Field(
        default=10, ge=1, le=100, description="Candidate questions offered for the user to pick from."
    )
    per_retriever_k: int = Field(
        default=12, ge=1, le=1000, description="Judgments each retriever returns per question: the study's 12."
    )
    k: int = Field(default=10, ge=1, le=1000, description="Most hits returned.")
    retrievers: tuple[str, ...] = Field(
        default=("fulltext", "bm25", "dense"),
        description="Full-text BM25 (used when the index was built with the judgments' texts), summary BM25, dense.",
    )
    fuser: str = Field(
        default="score.v1",
        description="Fusion of the retrievers' runs: min-max score fusion (measured above RRF on the citation benchmark).",
    )
    weights: dict[str, float] | None = Field(
        default_factory=lambda: {"fulltext": 3.0, "bm25": 2.0, "dense": 1.0},
        description="Fusion weight by retriever name (one not named weighs 1; None: all equal): the retrievers' standalone quality order on the citation benchmark, full text > summary BM25 > dense.",
    )
    question_weight: float = Field(
        default=0.5,
        ge=0,
        description="Dense query of a question: normalise(v(facts) + question_weight * v(question)): the question counts half as much as the facts (0.5 measured above 1.0 on the citation benchmark).",
    )
    drop_masks: bool = Field(
        default=True,
        description="Query without anonymisation placeholders (P1, Act A1, Section S): measured to help on the citation benchmark.",
    )
    include_facts_query: bool = Field(
        default=True, description="Also query with the facts alone, beside each question + facts."
    )
    question_alone: bool = Field(
        default=False,
        description="Lexical retrievers read a question alone, not question + facts (an ablation: issue-to-issue matching).",
    )
    profile: str | None = Field(
        default=None,
        description="The search profile (standard, large: SEARCH_PROFILES) that sets rescore_questions, fulltext_questions, dense_questions, fulltext_max_df and summary_max_df where they are None. None: the index's, recorded when it was built (by its size: large over 100,000 judgments; `aqgr status` shows it). Every SearchResult names the profile that ran.",
    )
    rescore_questions: bool | None = Field(
        default=None,
        description="How a question's BM25 runs (summary, and full text when it reads each question) are made: True, the facts' runs re-ranked by the question with the facts (the same scores, from the facts' scores plus the question's terms, over the facts' candidates only); False, the question with the facts searched over the whole archive. None: as the search profile says (standard: False; large: True). Only with the facts' runs at hand (generated questions, or include_facts_query), on the embedded index (docs/experiments/2026-12-06-rescored-questions.md).",
    )
    fulltext_questions: bool | None = Field(
        default=None,
        description="Full-text BM25 reads each question with the facts (True), or the facts' own full-text run stands in for each question's (False: one full-text query a search instead of 1 + n_questions). None: as the search profile says (standard: True; large: False, where a full-text query over long facts takes from tens to hundreds of ms and a search would make four). On the citation benchmark False costs 0.001 MAP (0.1631 -> 0.1621; docs/experiments/2026-12-06-fulltext-once.md).",
    )
    dense_questions: bool | None = Field(
        default=None,
        description="The dense retriever reads each question with the facts (True: their vectors combined, question_weight), or the facts' own dense run stands in for each question's (False: one dense search a search, and the questions are not embedded). None: as the search profile says (standard: True; large: False). On the citation benchmark, with the other defaults above 100,000, False moves MAP by +0.0001 (0.1661 -> 0.1662; docs/experiments/2026-12-06-dense-once.md).",
    )
    fulltext_max_df: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Full-text BM25 leaves out the query's terms (words and word pairs) held by more than this share of the judgments, unless fewer than 8 distinct terms would remain; 1: every term. None: as the search profile says (standard: 1; large: FULLTEXT_MAX_DF, 0.2), where those terms carry most of a long query's cost (~290 -> ~55 ms a facts query at 1,000,000) and little of its ranking (citation benchmark, defaults above 100,000: MAP 0.1621 -> 0.1661; docs/experiments/2026-12-06-common-terms.md).",
    )
    summary_max_df: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Summary BM25 leaves out the query's terms held by more than this share of the judgments' summaries, unless fewer than 8 distinct terms would remain; 1: every term. None: as the search profile says (standard: 1; large: SUMMARY_MAX_DF, 0.5) (a facts query at 1,000,000: ~99 -> ~71 ms; citation benchmark, the defaults above 100,000: MAP 0.1662 -> 0.1668; docs/experiments/2026-12-06-summary-common-terms.md).",
    )
    fusion_depth: int = Field(
        default=1000,
        ge=1,
        le=10000,
        description="Each run is fused over its top fusion_depth judgments (score fusion min-max normalises per run: a shallow run would inflate its tail; 1000, the evaluation depth, so search and evaluation rank alike).",
    )
    citation_weight: float = Field(
        default=0.3,
        ge=0,
        description="Precedents referred: a judgment cited by the ranked judgments gains citation_weight x the best fused score x its votes (the mean of 1/rank over the archive judgments citing it; retrieval/citations/graph.py). 0: off. 0.3: the largest weight that still helps at least as many citation-benchmark queries as it hurts. Needs the archive's citation graph, made by `aqgr index`.",
    )
    citation_norm: Literal["mean", "cosine", "sum"] = Field(
        default="mean",
        description="How a precedent's votes are divided by the number of archive judgments citing it: mean (/ n: precedents specific to similar cases), cosine (/ sqrt n) or sum (no division: much-cited landmark judgments rise). mean: on the citation benchmark the others hurt more queries than they help; on benchmarks that keep much-cited judgments cosine and sum score higher (docs/experiments/2026-11-30-much-cited-precedents.md).",
    )
    citation_depth: int = Field(
        default=1000,
        ge=1,
        le=10000,
        description="How many of the best fused judgments vote for the precedents they cite (1000: the whole fused list).",
    )
    explain_top: int = Field(
        default=36,
        ge=1,
        le=1000,
        description="The best fused candidates handed to the explainer: the study's 12 per question for 3 questions. An explainer that scores before quoting (evidence.v2, the offline default) quotes only the hits shown among them.",
    )
    min_score: int = Field(
        default=6,
        ge=1,
        le=10,
        description="Relevance threshold on the 1-10 score: hits below are not returned. 6: the upper half of the scale (with evidence.v2, at least about half the best candidate's strength). On the citation benchmark the returned set's F1 peaks at 9, but 9 drops relevant judgments on small archives.",
    )
    min_content_words: int = Field(
        default=12, ge=1, description="Facts with fewer content words are refused as too short to search on."
    )
    overruled_below: bool = Field(
        default=False,
        description="A hit that a later judgment of the archive overruled ranks just below that judgment when it is among the hits (it keeps its place when that judgment is not; it is never dropped and keeps its warning). Off: hits stay in score order.",
    )

    @model_validator(mode="after")
    def _weights_per_retriever(self) -> "SearchOptions":
        from aqgr.retrieval.embedded.retrievers import RETRIEVERS

        unknown = sorted(set(self.weights or ()) - set(RETRIEVERS))
        if unknown:
            raise ValueError(
                f"weights for unknown retrievers {unknown}: known {list(RETRIEVERS)} (a weight of one not in `retrievers` is unused)"
            )
        return self

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, name: str | None) -> str | None:
        if name is not None and name not in SEARCH_PROFILES:
            raise ValueError(f"unknown search profile {name!r}: known {list(SEARCH_PROFILES)}")
        return name

    def under(self, profile: str) -> "SearchOptions":
        """These options with the fields they leave unset (None) taken from `profile`
        (SEARCH_PROFILES); `profile` is recorded in `.profile`."""
        if profile not in SEARCH_PROFILES:  # a model_copy(update=...) is not validated
            from aqgr.foundation.errors import UnknownNameError

            raise UnknownNameError("search profile", profile, list(SEARCH_PROFILES))
        unset = {name: value for name, value in SEARCH_PROFILES[profile].items() if getattr(self, name) is None}
        return self.model_copy(update={**unset, "profile": profile})

    def fusion_weights(self, names: Sequence[str]) -> list[float] | None:
        """The weights of the runs of the retrievers `names`, in that order (None: equal)."""
        return None if self.weights is None else [self.weights.get(name, 1.0) for name in names]


class ArchiveOptions(ProviderOptions, total=False):
    """An archive's settings as keyword arguments, declared once for `Settings.resolve` and
    `Archive(...)`: the database, the engines by name, how to build the index and how to search,
    and the model provider's fields (ProviderOptions). Unset ones come from the environment
    (AQGR_DATABASE_URL, AQGR_SUMMARIZER, ..., AQGR_PROVIDER, ...) or the defaults."""

    database_url: str | None
    summarizer: str | None
    question_generator: str | None
    explainer: str | None
    treatment: str | None
    index: IndexSpec | None
    search: SearchOptions | None


_ENGINE_FIELDS = ("summarizer", "question_generator", "explainer", "treatment")
_OWN_OPTIONS = frozenset(ArchiveOptions.__annotations__) - frozenset(ProviderOptions.__annotations__)


class Settings(BaseModel):
    """Everything an Archive needs. Build with `Settings.resolve(home=...)`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    home: Path
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default: SQLite file aqgr.db in the home."
    )
    summarizer: str = Field(default="extractive.v1", description="The offline extractive engine: no model, no network.")
    question_generator: str = "harvest.v1"
    explainer: str = "evidence.v2"
    treatment: str = Field(
        default="phrases.v1",
        description="The citation treatment engine (retrieval/citations/treatment.py): offline phrases.",
    )
    index: IndexSpec | None = Field(
        default=None,
        description="How to build the index; None: the defaults to build, and whatever a saved index was built with to search.",
    )
    search: SearchOptions = Field(default_factory=SearchOptions)
    llm: ProviderConfig = Field(
        default_factory=ProviderConfig,
        description="The model provider of the llm.v1 engines; none by default (offline).",
    )

    @field_validator("home")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @classmethod
    def resolve(
        cls,
        home: str | Path | None = None,
        *,
        llm: ProviderConfig | None = None,
        **options: Unpack[ArchiveOptions],
    ) -> "Settings":
        """Home: the argument, else $AQGR_HOME, else the user's data directory. Unset values come
        from the environment (AQGR_DATABASE_URL, AQGR_SUMMARIZER, ...); `llm` (a ProviderConfig) or
        the provider's fields as keywords (ArchiveOptions, ProviderOptions: provider=, model=, ...)."""
        provider = {k: v for k, v in options.items() if k not in _OWN_OPTIONS}
        unknown = set(provider) - set(ProviderConfig.model_fields)
        if unknown:
            raise TypeError(f"unknown setting(s) {sorted(unknown)}: see help(aqgr.Settings.resolve)")
        if home is None:
            home = os.environ.get(ENV_HOME) or default_home()
        url = options.get("database_url") or os.environ.get(ENV_DATABASE_URL)
        llm = llm or ProviderConfig.resolve(**provider)
        fields: dict = {name: options[name] for name in ("index", "search") if options.get(name) is not None}
        for field in _ENGINE_FIELDS:
            chosen = (
                options.get(field) or os.environ.get(ENV_ENGINES[field]) or (MODEL_ENGINE if llm.configured else None)
            )
            if chosen:
                fields[field] = chosen
        return cls(home=Path(home), database_url=url, llm=llm, **fields)

    @property
    def db_url(self) -> str:
        return self.database_url or f"sqlite:///{self.home / 'aqgr.db'}"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def llm_cache_path(self) -> Path:
        """The model reply cache (SQLite), keyed by provider, model, prompt version and input."""
        return self.cache_dir / "llm-replies.sqlite"


def default_home() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("aqgr", appauthor=False))

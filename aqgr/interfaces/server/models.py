"""Request and response bodies of the HTTP API that are not already models of the Python API.

Search results, candidate questions and summaries are the Python API's own models
(`schemas.results`, `schemas.summary`, `schemas.statutes`): the server adds nothing to them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from aqgr.foundation.inputs import first_invalid
from aqgr.schemas.filters import Filters
from aqgr.schemas.results import CandidateQuestion, Engines


class _Request(BaseModel):
    """A request body: no unknown fields, and no text that is not valid Unicode (a lone surrogate
    such as \\ud800 cannot be stored or sent back: 422 before any work is done)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _valid_unicode(cls, data):
        found = first_invalid(data)
        if found is not None:
            position, char = found
            raise PydanticCustomError(
                "invalid_text",
                "a string contains an invalid character (lone surrogate U+{code}) at position {position}: send UTF-8 text",
                {"code": f"{ord(char):04X}", "position": position},
            )
        return data


class SearchOptionsPatch(_Request):
    """Per-request changes to the archive's search options (omitted fields keep the archive's)."""

    retrievers: list[Literal["bm25", "dense"]] | None = Field(
        default=None, min_length=1, description="Which retrievers to query."
    )
    fuser: str | None = Field(default=None, description="Fusion of the runs: rrf.v1 or score.v1.")
    n_questions: int | None = Field(
        default=None, ge=0, le=10, description="Generated questions used when none are chosen."
    )
    per_retriever_k: int | None = Field(
        default=None, ge=1, le=100, description="Judgments each retriever returns per question."
    )
    include_facts_query: bool | None = Field(default=None, description="Also query with the facts alone.")
    min_score: int | None = Field(
        default=None, ge=1, le=10, description="Hits scored below this (1-10) are not returned."
    )
    overruled_below: bool | None = Field(
        default=None,
        description="Rank a hit that a later judgment of the archive overruled just below that judgment, when it is among the hits (default off; the hit is never dropped and keeps its warning).",
    )
    profile: Literal["standard", "large"] | None = Field(
        default=None,
        description="The search profile: standard (every question reads every retriever with every term) or large (the facts' candidates re-ranked, common terms left out). Omitted: the index's, recorded when it was built (GET /api/status).",
    )
    fulltext_questions: bool | None = Field(
        default=None,
        description="true: each question also reads the judgments' full texts; false: the facts' full-text run stands in for the questions' (one full-text query a search). Omitted: the archive's setting (by default as the search profile says: each question in standard, once in large).",
    )
    dense_questions: bool | None = Field(
        default=None,
        description="true: each question also reads the dense retriever; false: the facts' dense run stands in for the questions' (one dense search a search). Omitted: the archive's setting (by default as the search profile says: each question in standard, once in large).",
    )
    rescore_questions: bool | None = Field(
        default=None,
        description="true: a question's BM25 runs re-rank the facts' candidates (the same scores, in milliseconds); false: they search the whole archive. Omitted: the archive's setting (by default as the search profile says: search in standard, re-rank in large).",
    )
    fulltext_max_df: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Full-text BM25 leaves out the query's terms held by more than this share of the judgments (1: every term). Omitted: the archive's setting (by default as the search profile says: every term in standard, those in at most 20% of them in large).",
    )
    summary_max_df: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Summary BM25 leaves out the query's terms held by more than this share of the summaries (1: every term). Omitted: the archive's setting (by default as the search profile says: every term in standard, those in at most half of them in large).",
    )


class SearchRequest(_Request):
    facts: str = Field(description="The facts, in plain words.")
    questions: list[str] | None = Field(
        default=None,
        description="Chosen or edited legal questions; they replace the generated ones. Omit to use the top generated questions.",
    )
    k: int = Field(default=10, ge=1, description="Most judgments returned (the server caps it).")
    options: SearchOptionsPatch | None = None
    filters: Filters | None = Field(
        default=None,
        description="Only judgments matching every given field: court, court_level, decided_from, decided_to, judge, kind, statute, disposal.",
    )


class QuestionsRequest(_Request):
    facts: str = Field(description="The facts, in plain words.")
    n: int | None = Field(
        default=None, ge=1, le=50, description="How many candidate questions (default: the archive's setting, 10)."
    )
    filters: Filters | None = Field(
        default=None, description="Harvest the questions from the judgments matching these filters only."
    )


class QuestionsResponse(BaseModel):
    facts: str
    candidates: list[CandidateQuestion] = Field(description="Candidate legal questions, best first.")
    preselected: list[int] = Field(
        description="Indexes of the candidates a search uses when the user chooses none (the study's top 3)."
    )
    engine: str = Field(description="The question generator that proposed them.")


class StatuteSearchRequest(_Request):
    facts: str
    questions: list[str] | None = Field(
        default=None, description="Chosen legal questions; omit to use the top ones generated from the case archive."
    )
    k: int = Field(default=10, ge=1)
    filters: Filters | None = Field(
        default=None, description="Only judgments matching these filters rank and vote for statutes."
    )


class ParagraphMark(BaseModel):
    number: int = Field(description="The judgment's own paragraph number.")
    start: int = Field(description="Character offset in `text` of the line where that paragraph starts.")


class JudgmentText(BaseModel):
    judgment_id: str
    text: str = Field(
        description="The judgment's source text, as read when it was summarised (search hits' evidence offsets point into it)."
    )
    paragraphs: list[ParagraphMark] = Field(
        default_factory=list, description="Where its numbered paragraphs start (empty: it does not number them)."
    )


class Health(BaseModel):
    status: Literal["ok", "no_index", "database_error"] = Field(
        description="ok; no_index (run `aqgr index`); database_error (damaged or unavailable: see detail)"
    )
    version: str
    judgments_indexed: int | None = None
    statutes: bool = False
    detail: str | None = Field(default=None, description="What to do when the archive cannot search yet.")


class Version(BaseModel):
    aqgr: str
    schema_version: str
    api: str = "1"
    engines: Engines | None = Field(
        default=None, description="The engines answering searches (offline or a model); null before an index is loaded."
    )


class ErrorBody(BaseModel):
    error: str = Field(description="A short machine-readable kind, e.g. facts_too_short, no_index, facts_too_long.")
    detail: str = Field(description="What went wrong and what to do.")

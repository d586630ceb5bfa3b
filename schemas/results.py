"""What a question-guided search returns (the Python API, the CLI's --json, the server)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from aqgr.schemas.summary import StructuredSummary

from .filters import Facets, Filters


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CandidateQuestion(_Model):
    """A legal question the facts may raise, with where it was harvested from."""

    text: str
    score: float = Field(description="Relevance to the facts (higher is better; engine-specific scale).")
    source_judgment_id: str | None = Field(default=None, description="The judgment whose summary suggested it, if any.")
    generated_by: str | None = Field(
        default=None, description="The engine that proposed it, when recorded (a model engine's fallback says so here)."
    )
    note: str | None = Field(default=None, description="Why a fallback engine answered instead, if one did.")


_LOCATED = (
    "Whether the text was found in the judgment's stored text; false: it is not there as quoted (no offsets given)."
)
_START = "Character offset, into the judgment's stored text (GET /api/judgments/{id}/text), where the passage starts."
_END = "Character offset where it ends (exclusive): text[start:end] is the passage."
_PARAGRAPH = "The judgment's own paragraph number there, when it numbers its paragraphs ('12.', '(12)', '12)')."
_MATCH = (
    "How it was found: exact; whitespace (the same words, whitespace differing); case (also case, quote marks, "
    "dashes differing); part (only the longest part of the quote was found, e.g. a sentence or a statute's principle "
    "after 'Section 302 ...: ': the span covers that part)."
)


class Pinpoint(_Model):
    """Where a quoted passage stands in the judgment's own text (aqgr.pipeline.pinpoint)."""

    located: bool = Field(default=False, description=_LOCATED)
    start: int | None = Field(default=None, ge=0, description=_START)
    end: int | None = Field(default=None, ge=0, description=_END)
    paragraph: int | None = Field(default=None, description=_PARAGRAPH)
    match: Literal["exact", "whitespace", "case", "part"] | None = Field(default=None, description=_MATCH)


class Evidence(_Model):
    """A summary slot a hit's explanation was drawn from, quoted, and where it stands in the judgment."""

    slot: str
    text: str
    located: bool = Field(default=False, description=_LOCATED)
    start: int | None = Field(default=None, ge=0, description=_START)
    end: int | None = Field(default=None, ge=0, description=_END)
    paragraph: int | None = Field(default=None, description=_PARAGRAPH)
    match: Literal["exact", "whitespace", "case", "part"] | None = Field(default=None, description=_MATCH)


_DISSENT = (
    "Where two treatment engines read this citation differently (--treatment llm.v1: the model and phrases.v1), "
    "the other engine's reading, 'engine: label' ('llm.v1: referred'): the more severe label stands; null when "
    "they agreed or one engine answered."
)


class TreatmentWarning(_Model):
    """A later judgment of the archive that overruled or doubted a hit, in its own words."""

    judgment_id: str = Field(description="The judgment that overruled or doubted the hit.")
    parties: str = Field(description="Its parties, 'Appellants v. Respondents'.")
    date: str | None = Field(default=None, description="Its date, when known.")
    treatment: str = Field(
        description="'overruled' (incl. 'not good law', 'per incuriam') or 'doubted' (incl. 'not followed', 'requires reconsideration')."
    )
    quote: str = Field(description="Its sentence that says so, quoted.")
    start: int = Field(ge=0, description="Where that sentence starts in its text (character offset).")
    end: int = Field(ge=0, description="Where it ends.")
    dissent: str | None = Field(default=None, description=_DISSENT)


class Hit(_Model):
    """One judgment of the archive that addresses the questions."""

    rank: int = Field(ge=1)
    judgment_id: str
    parties: str = Field(description="'Appellants v. Respondents', as in the summary.")
    case_number: str | None = None
    court: str | None = None
    date: str | None = None
    score: int = Field(
        ge=1, le=10, description="Relevance score from 1 (weak) to 10 (addresses the question directly)."
    )
    legal_issue: str = Field(description="The legal issue of the judgment that matches the questions.")
    reason: str = Field(description="Why it applies: the judgment's own reasoning or principle that matches.")
    questions: list[int] = Field(
        default_factory=list, description="Indexes (0-based) of the questions it was retrieved for."
    )
    retrieval_score: float = Field(
        description="The fused retrieval score the ranking started from (with the precedents-referred lift, when any)."
    )
    cited_by: list[str] = Field(
        default_factory=list,
        description="Judgments of the archive among the best-ranked for these facts that cite this one (precedents referred), best first.",
    )
    evidence: list[Evidence] = Field(default_factory=list)
    legal_issue_at: Pinpoint | None = Field(
        default=None, description="Where the legal issue stands in the judgment (None: not looked up)."
    )
    reason_at: Pinpoint | None = Field(
        default=None, description="Where the reason stands in the judgment (None: not looked up)."
    )
    sections: list[str] = Field(
        default_factory=list,
        description="The sections this judgment cites, with their counterparts in the "
        "code that replaced it or that it replaced ('Section 302 IPC, now Section 103(1) BNS'), when the "
        "archive has a correspondence table; those the facts name first.",
    )
    treatment_warnings: list[TreatmentWarning] = Field(
        default_factory=list,
        description="Later judgments of the archive that overruled or doubted this one, the most severe first: check them before relying on it (the hit is kept).",
    )


class Engines(_Model):
    """Which engines answered (offline or a model)."""

    questions: str
    explainer: str
    summarizer: str
    embedder: str
    fuser: str


class SearchResult(_Model):
    """Facts in; the questions used, the candidates, and explained hits out."""

    facts: str
    questions: list[str] = Field(description="The legal questions the search used (chosen or the top generated ones).")
    questions_chosen_by_user: bool = False
    candidate_questions: list[CandidateQuestion] = Field(default_factory=list)
    hits: list[Hit] = Field(default_factory=list)
    engines: Engines
    dropped_not_in_archive: int = Field(
        default=0,
        description="Judgments named by an engine but absent from the candidate list or the archive, or explained by "
        "a model call that was not shown them (the candidates split over several calls); dropped.",
    )
    below_threshold: int = Field(default=0, description="Candidates explained but under the relevance threshold.")
    dropped_citations: int = Field(
        default=0,
        description="Sentences removed from explanations (those dropped included) because they cited a judgment that "
        "the candidates of their model call do not show, "
        "and generated questions dropped because they cited one that neither the similar judgments nor the facts show.",
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What did not go as configured (e.g. a model failed and an offline engine answered instead).",
    )
    filters: Filters | None = Field(default=None, description="The filters the search was narrowed by (null: none).")
    profile: str | None = Field(
        default=None,
        description="The search profile that ran (standard, large: how the questions were read and which query terms were kept); the index's, recorded when it was built, unless the search named another.",
    )
    facets: Facets | None = Field(
        default=None,
        description="Counts per court, year, statute, ... over the ranked candidates (null when the index has no filter fields).",
    )
    model_usage: dict[str, dict] = Field(
        default_factory=dict,
        description="Model calls, cache hits, retries and tokens of this search, per stage (empty without a model).",
    )
    timings_ms: dict[str, float] = Field(default_factory=dict)


class CitationTreatment(_Model):
    """How a citing judgment treats the judgment it cites, with its words."""

    label: str = Field(description="followed, approved, distinguished, doubted, overruled, or referred (no signal).")
    quote: str = Field(description="The citing judgment's sentence that shows it.")
    start: int = Field(ge=0, description="Where that sentence starts in the citing judgment's text (character offset).")
    end: int = Field(ge=0, description="Where it ends.")
    dissent: str | None = Field(default=None, description=_DISSENT)


class CitedJudgment(_Model):
    """A judgment of the archive on the other end of a citation, and where the citing judgment names it."""

    judgment_id: str
    parties: str = Field(description="'Appellants v. Respondents', as in the summary.")
    case_number: str | None = None
    court: str | None = None
    date: str | None = None
    how: str | None = Field(
        default=None,
        description="How the citing judgment names it: 'title' (the case's name) or 'citation' (a reporter citation); None when not recorded.",
    )
    mention: str | None = Field(
        default=None, description="The citing judgment's words that name it (the first mention), to check the link."
    )
    treatment: CitationTreatment | None = Field(
        default=None,
        description="How the citing judgment treats the cited one (the most severe of its mentions); None when not recorded.",
    )


class JudgmentCitations(_Model):
    """Which judgments of the archive a judgment cites, and which cite it (found by `aqgr index`)."""

    judgment: CitedJudgment = Field(description="The judgment asked about (no mention).")
    cites: list[CitedJudgment] = Field(
        default_factory=list, description="Judgments of the archive it cites (precedents referred), by parties."
    )
    cited_by: list[CitedJudgment] = Field(
        default_factory=list, description="Judgments of the archive that cite it, by parties."
    )


class SummaryPinpoints(_Model):
    """A judgment's structured summary with where each extracted passage stands in its text (`aqgr show`)."""

    summary: StructuredSummary
    paragraphs_numbered: bool = Field(
        description="Whether the judgment numbers its paragraphs (else no paragraph is given, only offsets)."
    )
    passages: list[Evidence] = Field(
        default_factory=list,
        description="Each passage of the text slots (a multi-passage slot gives one per passage), slot named as facts, issues[0], statutes[1].principle, ..., with its pinpoint.",
    )

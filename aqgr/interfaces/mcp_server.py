"""`aqgr mcp`: the archive as MCP tools over stdio (the official `mcp` Python SDK).

Tools (their descriptions are what an agent reads; they say exactly what comes back):
`search_precedents`, `candidate_questions`, `get_judgment_summary`, `get_judgment_text`,
`get_judgment_pinpoints`, `get_judgment_citations`, and `search_statutes` when the archive has statutes. Every judgment a tool returns is a
judgment of the archive: search hits pass the grounding guard (SPEC.md) and summaries
and texts are read from the archive by id. Errors come back as tool errors carrying
aqgr's message (what went wrong and what to do), never a stack trace.

Needs the `serve` extra (`pip install 'aqgr[serve]'`). stdout is the protocol channel:
nothing here prints.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations at registration.
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import AfterValidator, BaseModel, Field

from aqgr.foundation.errors import AqgrError
from aqgr.schemas.filters import Filters

T = TypeVar("T")

from aqgr.foundation.caps import MAX_K  # noqa: E402 - the caps of every door (aqgr/foundation/caps.py)

MAX_TEXT_CHARS = 200_000

Facts = Annotated[str, Field(description="The facts, in plain words: who did what, what happened, what is disputed.")]
Questions = Annotated[
    list[str] | None, Field(description="Legal questions to search with (replace the generated ones).")
]
OverruledBelow = Annotated[
    bool,
    Field(
        description="Rank a hit that a later judgment of the archive overruled just below that judgment, "
        "when it is among the hits (default false: score order). The hit is never dropped and keeps its warning."
    ),
]
FiltersArg = Annotated[
    Filters | None,
    Field(
        description="Only judgments matching every given field: court ('SC', 'Bombay High Court'), "
        "court_level (supreme/high/district/tribunal), decided_from / decided_to (YYYY-MM-DD, YYYY-MM or "
        "YYYY), judge ('A.K. Sikri'), kind ('criminal appeal'), statute ('Section 302 IPC'), disposal "
        "(allowed/dismissed/partly). An unknown court or judge gives no hits and a note naming the closest known values."
    ),
]


class JudgmentTextOut(BaseModel):
    judgment_id: str
    text: str = Field(description="The judgment's source text, cut to max_chars.")
    truncated: bool = Field(description="True when the text was cut.")


def _valid_id(value: str) -> str:
    from aqgr.foundation.inputs import check_text, id_problem

    check_text(value, "judgment id")
    problem = id_problem(value)  # the id rule of every door (aqgr/foundation/inputs.py)
    if problem is not None:
        raise ValueError(problem)
    return value


JudgmentId = Annotated[
    str,
    Field(description="A judgment_id as returned in search hits.", min_length=1, max_length=300),
    AfterValidator(_valid_id),
]

INSTRUCTIONS = (
    "aqgr finds precedents (court judgments) for a set of facts by the legal questions the facts raise. "
    "Typical use: call candidate_questions with the facts, choose the questions that matter, then call "
    "search_precedents with the facts and those questions; open a hit with get_judgment_summary or "
    "get_judgment_text (get_judgment_pinpoints gives each summary passage's paragraph), and follow its citations inside the archive with get_judgment_citations. Every judgment returned exists in the archive: cite only those, by their judgment_id, "
    "parties and case number."
)

SEARCH_DESCRIPTION = """Question-guided search of the archive for precedents that address the legal questions the facts raise.

Input: `facts` (plain words, at least about a dozen content words); optional `questions` (legal questions to search with,
replacing the generated ones: pass the ones chosen from candidate_questions); `k` (most judgments, 1-50);
`overruled_below` (true: a hit a later archive judgment overruled ranks just below that judgment when it is among the hits).
Returns a SearchResult: `questions` (the questions used), `candidate_questions` (text, score, source_judgment_id),
`hits` ranked best first, each with judgment_id, parties ('Appellants v. Respondents'), case_number, court, date,
score (relevance 1-10), legal_issue (the judgment's issue that matches), reason (why it applies, quoted from the
judgment's summary), questions (0-based indexes of the questions it was retrieved for), cited_by (judgment_ids of
archive judgments found for these facts that cite it: a precedent similar cases relied on), evidence (summary slot +
quoted text + where it stands in the judgment: located, start/end offsets into get_judgment_text's text, paragraph
number; legal_issue_at and reason_at the same for those), sections (with a correspondence table loaded: the sections it cites with their counterparts in the
code that replaced it, 'Section 302 IPC, now Section 103(1) BNS'), treatment_warnings (later archive judgments that
overruled or doubted it: judgment_id, parties, date, treatment, quote, dissent (where two treatment engines read it
differently, the other's reading: the more severe label stands); check before relying on it); `engines` (which engines answered: offline or a model); `dropped_not_in_archive` (judgments an engine
named outside the candidates it was shown, dropped by the grounding guard); `filters` (the filters applied) and `facets`
(counts per court, year, decade, statute, section, judge, kind, disposal over the ranked candidates, to narrow
with `filters`). Every hit exists in the archive, once."""

QUESTIONS_DESCRIPTION = """Candidate legal questions the facts raise, best first, for choosing before search_precedents.

Input: `facts`; optional `n` (how many, 1-50, default 10). Returns a list of {text, score (relevance to the facts,
higher is better), source_judgment_id (the archive judgment whose issues suggested it)}. search_precedents uses the
top 3 when no questions are given; the study behind aqgr recommends choosing them."""

SUMMARY_DESCRIPTION = """The structured summary of one judgment of the archive, by its judgment_id (as in search hits).

Returns: judgment_id, court, case_number, judgment_kind, parties {appellants, respondents}, date, bench, facts,
arguments {appellants, respondents}, issues, reasoning, disposed_in_favour_of, final_judgment, statutes [{name,
principle, application}], precedents [{name, principle, application}], new_principles [{principle, application}],
subjects, provenance {engine, model, ...}. Slots quote the judgment's own language. An unknown id is an error."""

TEXT_DESCRIPTION = """The source text of one judgment of the archive, by its judgment_id (as in search hits).

Returns {judgment_id, text, truncated}: the text as read when it was summarised, cut to `max_chars` (default 20,000;
at most 200,000) with truncated=true when cut. An unknown id is an error."""

PINPOINTS_DESCRIPTION = """The structured summary of one judgment with where each of its passages stands in the judgment's text.

Returns {summary, paragraphs_numbered, passages}: passages are [{slot (facts, issues[0], statutes[1].principle, ...), text,
located, start, end, paragraph, match}]; start/end are character offsets into get_judgment_text's text, paragraph
the judgment's own paragraph number (cite it as "para 12"); located=false: the passage is not in the text as quoted.
An unknown id is an error."""

CITATIONS_DESCRIPTION = """The judgments of the archive that one judgment cites, and those that cite it, by its judgment_id (as in search hits).

Returns {judgment, cites, cited_by}: each entry has judgment_id, parties, case_number, court, date, and `how`
("title" or "citation") with `mention`, the citing judgment's words that name the other, to check the link.
Only judgments of the archive appear. An unknown id, or an index without a citation graph, is an error."""

STATUTES_DESCRIPTION = """Statutes of the archive's statute collection for the facts.

Input: `facts`; optional `questions` (legal questions; default: the top ones generated from the case archive);
`k` (1-50). Returns a StatuteResult: questions used, and hits ranked best first, each with statute_id, title, text
(up to 1,000 characters), score, the indexes of the questions it was retrieved for, and quoted_by: judgments of
the archive, among the precedents found for the facts, that quote it word for word (ranked by those votes first),
and sections (its sections in both codes, when the archive has a correspondence table).
Every statute returned exists in the archive's statute collection."""


def _check(facts: str, k: int | None = None, questions: list[str] | None = None) -> None:
    from aqgr.foundation.caps import request_problem
    from aqgr.foundation.inputs import check_text, check_texts

    check_text(facts, "facts")
    check_texts(questions, "questions")
    problem = request_problem(facts, questions, k)  # the HTTP API's caps (aqgr/foundation/caps.py)
    if problem is not None:
        raise AqgrError(problem[1])


def build_server(home: str | Path | None = None, *, archive=None):
    """The MCPServer over the archive at `home` (or an `Archive`); tools load the index on first use."""
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    import aqgr
    from aqgr.archive.home import Archive
    from aqgr.interfaces.server.service import ArchiveService
    from aqgr.pipeline.pinpoint import judgment_pinpoints
    from aqgr.schemas.results import CandidateQuestion, JudgmentCitations, SearchResult, SummaryPinpoints
    from aqgr.schemas.statutes import StatuteResult
    from aqgr.schemas.summary import StructuredSummary

    service = ArchiveService(archive or Archive(home))
    server = MCPServer("aqgr", instructions=INSTRUCTIONS, version=aqgr.__version__, log_level="WARNING")

    def check(facts: str, k: int | None = None, questions: list[str] | None = None) -> None:
        try:
            _check(facts, k, questions)
        except AqgrError as exc:  # a tool error with aqgr's message (what to do), not the SDK's generic one
            raise ToolError(str(exc)) from exc

    async def call(fn: Callable[[], T]) -> T:
        try:
            return await anyio.to_thread.run_sync(fn)
        except AqgrError as exc:
            raise ToolError(str(exc)) from exc

    @server.tool(description=SEARCH_DESCRIPTION)
    async def search_precedents(
        facts: Facts,
        questions: Questions = None,
        k: Annotated[int, Field(ge=1, le=MAX_K)] = 10,
        filters: FiltersArg = None,
        overruled_below: OverruledBelow = False,
    ) -> SearchResult:
        check(facts, k, questions)

        def run() -> SearchResult:
            searcher = service.searcher()
            options = searcher.options.model_copy(update={"overruled_below": True}) if overruled_below else None
            return searcher.search(facts, questions or None, k=k, filters=filters, options=options)

        return await call(run)

    @server.tool(description=QUESTIONS_DESCRIPTION)
    async def candidate_questions(
        facts: Facts, n: Annotated[int, Field(ge=1, le=50)] = 10, filters: FiltersArg = None
    ) -> list[CandidateQuestion]:
        check(facts)
        return await call(lambda: service.searcher().candidate_questions(facts, n=n, filters=filters))

    @server.tool(description=SUMMARY_DESCRIPTION)
    async def get_judgment_summary(judgment_id: JudgmentId) -> StructuredSummary:
        found = await call(lambda: service.summary(judgment_id))
        if found is None:
            raise ToolError(f"no judgment {judgment_id!r} in the archive: use a judgment_id from search_precedents")
        return found

    @server.tool(description=TEXT_DESCRIPTION)
    async def get_judgment_text(
        judgment_id: JudgmentId, max_chars: Annotated[int, Field(ge=100, le=MAX_TEXT_CHARS)] = 20_000
    ) -> JudgmentTextOut:
        text = await call(lambda: service.text(judgment_id))
        if text is None:
            raise ToolError(f"no judgment {judgment_id!r} in the archive: use a judgment_id from search_precedents")
        return JudgmentTextOut(judgment_id=judgment_id, text=text[:max_chars], truncated=len(text) > max_chars)

    @server.tool(description=PINPOINTS_DESCRIPTION)
    async def get_judgment_pinpoints(judgment_id: JudgmentId) -> SummaryPinpoints:
        return await call(lambda: judgment_pinpoints(judgment_id, service.summary, service.text))

    @server.tool(description=CITATIONS_DESCRIPTION)
    async def get_judgment_citations(judgment_id: JudgmentId) -> JudgmentCitations:
        return await call(lambda: service.citations_of(judgment_id))

    if service.statutes.exists():

        @server.tool(description=STATUTES_DESCRIPTION)
        async def search_statutes(
            facts: Facts,
            questions: Questions = None,
            k: Annotated[int, Field(ge=1, le=MAX_K)] = 10,
            filters: FiltersArg = None,
        ) -> StatuteResult:
            check(facts, k, questions)

            def run() -> StatuteResult:
                return service.search_statutes(facts, questions or None, k=k, filters=filters)

            return await call(run)

    return server


def run(home: str | Path | None = None, *, archive=None) -> None:
    """Serve the archive's tools over stdio until the client closes the connection (every request
    answered, one the SDK cannot parse with an error: aqgr/interfaces/mcp_stdio.py)."""
    import anyio

    from aqgr.interfaces.mcp_stdio import serve

    anyio.run(serve, build_server(home, archive=archive))

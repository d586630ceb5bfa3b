"""The FastAPI app: the HTTP API (under /api/) and the issue-first web page (at /).

Every answer is a model of the Python API (`SearchResult`, `CandidateQuestion`,
`StructuredSummary`, `StatuteResult`); errors are `{"error": kind, "detail": message}`
with a 4xx status that says whose move it is, and never a stack trace. The OpenAPI
schema is at /openapi.json (the interactive docs pages are off: they load scripts from
a CDN, and the product works offline).
"""

from __future__ import annotations

import hmac
import logging
from importlib import resources
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

import aqgr
from aqgr.archive.home import Archive
from aqgr.foundation.caps import STATUS as CAP_STATUS
from aqgr.foundation.caps import Caps, request_problem
from aqgr.foundation.errors import (
    AqgrError,
    DatabaseDamagedError,
    EmptyArchiveError,
    FactsTooShortError,
    IndexBuildingError,
    IndexMismatchError,
    IndexUnavailableError,
    InvalidFilterError,
    InvalidTextError,
    NoCitationGraphError,
    NoFiltersError,
    NoIndexError,
    NoStatutesError,
    ProviderError,
    StoreError,
    UnknownJudgmentError,
    UnknownNameError,
)
from aqgr.foundation.inputs import id_problem
from aqgr.interfaces.server.config import ServeConfig
from aqgr.interfaces.server.limits import Busy, HostCheck, SearchGate, allowed_hosts
from aqgr.interfaces.server.models import (
    ErrorBody,
    Health,
    JudgmentText,
    ParagraphMark,
    QuestionsRequest,
    QuestionsResponse,
    SearchRequest,
    StatuteSearchRequest,
    Version,
)
from aqgr.interfaces.server.service import ArchiveService
from aqgr.pipeline.config import SearchOptions
from aqgr.pipeline.pinpoint import ParagraphIndex
from aqgr.pipeline.pinpoint import judgment_pinpoints as pinpoints_of
from aqgr.schemas.results import JudgmentCitations, SearchResult, SummaryPinpoints
from aqgr.schemas.statutes import StatuteResult
from aqgr.schemas.summary import SCHEMA_VERSION, StructuredSummary

INDEX_BUILDING_RETRY_S = 30  # Retry-After of a search asked while the first index is built: a guess, not a promise
log = logging.getLogger("aqgr.server")  # the log channel people configure, not the module path: kept as it was

# Starlette's own refusals, in the API's error shape
_HTTP_KINDS = {
    400: (
        "invalid_json",
        'the request body is not valid JSON (or nests too deeply, or holds a number too long to read): send a JSON object such as {"facts": "..."}',
    ),
    404: ("not_found", "no such page: the API lives under /api/ (see /openapi.json)"),
    405: ("method_not_allowed", "this route does not take that method (see /openapi.json)"),
}
ERRORS = {status: {"model": ErrorBody} for status in (401, 404, 413, 422, 503)}


class RequestRefused(Exception):
    """A request the server refuses before doing any work (status, kind, message)."""

    def __init__(self, status: int, error: str, detail: str):
        self.status, self.error, self.detail = status, error, detail
        super().__init__(detail)


def _error(status: int, error: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    # a message may quote the request (an id, a field name): never let its text break the answer
    detail = detail.encode("utf-8", "backslashreplace").decode("utf-8")
    return JSONResponse(status_code=status, content={"error": error, "detail": detail}, headers=headers)


def _status_of(exc: AqgrError) -> tuple[int, str]:
    for kind, status, name in (
        (FactsTooShortError, 422, "facts_too_short"),
        (InvalidTextError, 422, "invalid_text"),
        (UnknownNameError, 422, "unknown_name"),
        (NoStatutesError, 404, "no_statutes"),
        (InvalidFilterError, 422, "invalid_filter"),
        (NoFiltersError, 503, "no_filters"),
        (UnknownJudgmentError, 404, "not_found"),
        (NoCitationGraphError, 503, "no_citations"),
        (IndexBuildingError, 503, "index_building"),
        (IndexUnavailableError, 503, "index_unavailable"),
        (NoIndexError, 503, "no_index"),
        (IndexMismatchError, 503, "index_mismatch"),
        (EmptyArchiveError, 503, "empty_archive"),
        (ProviderError, 502, "provider_error"),
        (DatabaseDamagedError, 503, "database_damaged"),
        (StoreError, 503, "database_unavailable"),
    ):
        if isinstance(exc, kind):
            return status, name
    return 500, "aqgr_error"


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes gets 413 (declared or streamed)."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await self._refuse(scope, receive, send)
        seen, refused, started = 0, False, False

        async def counting_receive():
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:  # streamed past the limit: answer 413 now; the app sees a client gone
                    refused = True
                    if not started:
                        await _error(413, "body_too_large", self._message(), headers={"Connection": "close"})(
                            scope, receive, send
                        )
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            nonlocal started
            if refused:
                return  # the 413 was the answer
            started = True
            await send(message)

        return await self.app(scope, counting_receive, guarded_send)

    def _message(self) -> str:
        return f"the request body is over {self.limit:,} bytes, the most this server accepts: send shorter facts"

    async def _refuse(self, scope, receive, send):
        await _error(413, "body_too_large", self._message())(scope, receive, send)


def _static_dir() -> Path:
    return Path(str(resources.files("aqgr.interfaces.server") / "static"))


def create_app(
    home: str | Path | None = None, config: ServeConfig | None = None, *, archive: Archive | None = None
) -> FastAPI:
    """The app over the archive at `home` (or an `Archive` already built)."""
    config = config or ServeConfig()
    service = ArchiveService(archive or Archive(home), reload_check_seconds=config.reload_check_seconds)

    def lifespan(app):
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def run(app):
            try:  # load once, up front, and freeze the heap; a missing index is answered per request (503 with the fix)
                service.start()
            except AqgrError as exc:
                log.warning("%s", exc)
            except Exception as exc:  # noqa: BLE001 - a model that fails to load: each search answers with its own error
                log.warning("the first load failed: %s", exc)
            yield

        return run(app)

    app = FastAPI(
        title="aqgr",
        version=aqgr.__version__,
        description="Question-guided search of precedents over structured summaries. Every judgment returned exists in the archive.",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.config = config

    # ---------------------------------------------------------------- errors
    @app.exception_handler(AqgrError)
    async def _aqgr_error(request: Request, exc: AqgrError):
        status, kind = _status_of(exc)
        if status >= 500:
            log.error("%s on %s: %s", kind, request.url.path, exc)
        # an index being built: ask again later (a first build commits as it goes)
        retry = {"Retry-After": str(INDEX_BUILDING_RETRY_S)} if isinstance(exc, IndexBuildingError) else None
        return _error(status, kind, str(exc), headers=retry)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        kind, detail = _HTTP_KINDS.get(exc.status_code, ("http_error", str(exc.detail)))
        if exc.status_code == 404 and request.url.path.startswith("/api/"):
            detail = f"no such route {request.url.path!r}: the routes are listed at /openapi.json"
        return _error(exc.status_code, kind, detail, headers=getattr(exc, "headers", None))

    @app.exception_handler(Busy)
    async def _busy(request: Request, exc: Busy):
        return _error(503, "busy", exc.detail, headers={"Retry-After": str(exc.retry_after)})

    @app.exception_handler(RequestRefused)
    async def _refused(request: Request, exc: RequestRefused):
        return _error(exc.status, exc.error, exc.detail)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        errors = exc.errors()
        problems = []
        for e in errors:
            where = "/".join(str(p) for p in e.get("loc", ()) if p != "body")
            problems.append(f"{where}: {e.get('msg', '')}" if where else e.get("msg", ""))
        kind = "invalid_text" if errors and all(e.get("type") == "invalid_text" for e in errors) else "invalid_request"
        return _error(422, kind, "; ".join(problems) or "the request is not valid")

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception):
        log.exception("internal error on %s", request.url.path)
        return _error(500, "internal_error", "the server failed on this request; the error is in the server's log")

    app.add_middleware(BodyLimit, limit=config.max_body_bytes)
    app.add_middleware(HostCheck, hosts=allowed_hosts(config))  # outermost: a foreign Host gets nothing else
    if config.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Content-Type", "X-API-Key", "Authorization"],
        )

    # ---------------------------------------------------------------- checks
    def authorised(request: Request) -> None:
        if not config.api_key:
            return
        given = request.headers.get("x-api-key") or ""
        bearer = request.headers.get("authorization") or ""
        if bearer.lower().startswith("bearer "):
            given = given or bearer[7:].strip()
        if not hmac.compare_digest(given.encode(), config.api_key.encode()):
            raise RequestRefused(
                401,
                "unauthorised",
                "this server needs an API key: send it as the X-API-Key header (or 'Authorization: Bearer KEY')",
            )

    caps = Caps(config.max_facts_chars, config.max_questions, config.max_question_chars, config.max_k)

    def check_caps(facts: str | None = None, questions: list[str] | None = None, k: int | None = None) -> None:
        problem = request_problem(
            facts, questions, k, caps
        )  # the same check as the MCP tools (aqgr/foundation/caps.py)
        if problem is not None:
            raise RequestRefused(CAP_STATUS[problem[0]], *problem)

    def check_facts(facts: str) -> None:
        check_caps(facts=facts)

    def check_questions(questions: list[str] | None) -> None:
        check_caps(questions=questions)

    def check_k(k: int) -> None:
        check_caps(k=k)

    def check_id(judgment_id: str) -> None:
        problem = id_problem(judgment_id)  # the id rule of every door (aqgr/foundation/inputs.py)
        if problem is not None:
            raise RequestRefused(422, "invalid_id", problem)

    api = [Depends(authorised)]
    gate = SearchGate(config.max_searches, config.max_waiting_searches, config.search_wait_seconds)
    app.state.search_gate = gate

    # ---------------------------------------------------------------- routes
    @app.get("/api/health", response_model=Health, tags=["meta"])
    def health() -> Health:
        """Whether the server is up and the archive can search (no key needed)."""
        try:
            searcher = service.searcher()
        except StoreError as exc:
            return Health(
                status="database_error", version=aqgr.__version__, statutes=service.statutes.exists(), detail=str(exc)
            )
        except AqgrError as exc:
            return Health(
                status="no_index", version=aqgr.__version__, statutes=service.statutes.exists(), detail=str(exc)
            )
        return Health(
            status="ok",
            version=aqgr.__version__,
            judgments_indexed=len(searcher.index),
            statutes=service.statutes.exists(),
        )

    @app.get("/api/version", response_model=Version, tags=["meta"])
    def version() -> Version:
        """The aqgr version, the summary schema version and the engines answering searches."""
        try:
            engines = service.searcher().engines()
        except AqgrError:
            engines = None
        return Version(aqgr=aqgr.__version__, schema_version=SCHEMA_VERSION, engines=engines)

    @app.post("/api/questions", response_model=QuestionsResponse, responses=ERRORS, dependencies=api, tags=["search"])
    async def questions(body: QuestionsRequest) -> QuestionsResponse:
        """Candidate legal questions for the facts, best first, with the ones a search would use pre-selected
        (503 busy with Retry-After when every search slot is taken)."""
        check_facts(body.facts)

        def run() -> QuestionsResponse:
            searcher = service.searcher()
            found = searcher.candidate_questions(body.facts, n=body.n, filters=body.filters)
            keep = min(searcher.options.n_questions, len(found))
            return QuestionsResponse(
                facts=" ".join(body.facts.split()),
                candidates=found,
                preselected=list(range(keep)),
                engine=searcher.questions.name,
            )

        return await gate.run(run)

    @app.post("/api/search", response_model=SearchResult, responses=ERRORS, dependencies=api, tags=["search"])
    async def search(body: SearchRequest) -> SearchResult:
        """Question-guided search: the questions used and the judgments of the archive that answer them, scored 1-10 and explained.

        Every hit exists in the archive; `dropped_not_in_archive` counts what the grounding guard removed.
        503 busy with Retry-After when every search slot is taken."""
        check_facts(body.facts)
        check_questions(body.questions)
        check_k(body.k)
        return await gate.run(lambda: run_search(body))

    def run_search(body: SearchRequest) -> SearchResult:
        searcher = service.searcher()
        options = None
        if body.options is not None:
            patch = body.options.model_dump(exclude_none=True)
            if "retrievers" in patch:
                patch["retrievers"] = tuple(patch["retrievers"])
                patch.setdefault(
                    "weights", None
                )  # the archive's weights belong to its retrievers: equal weights unless given
            try:
                options = SearchOptions(**{**searcher.options.model_dump(), **patch})
            except ValueError as exc:  # pydantic's ValidationError: an inconsistent combination of options
                raise RequestRefused(422, "invalid_options", str(exc)) from None
        return searcher.search(body.facts, body.questions or None, k=body.k, options=options, filters=body.filters)

    @app.post(
        "/api/statutes/search", response_model=StatuteResult, responses=ERRORS, dependencies=api, tags=["statutes"]
    )
    async def statutes(body: StatuteSearchRequest) -> StatuteResult:
        """Statutes for the facts and questions (404 with how to add statutes when the archive has none)."""
        check_facts(body.facts)
        check_questions(body.questions)
        check_k(body.k)
        if not service.statutes.exists():
            raise NoStatutesError(service.statutes.root)
        return await gate.run(
            lambda: service.search_statutes(body.facts, body.questions or None, k=body.k, filters=body.filters)
        )

    @app.get(
        "/api/judgments/{judgment_id:path}/text",
        response_model=JudgmentText,
        responses=ERRORS,
        dependencies=api,
        tags=["judgments"],
    )
    def judgment_text(judgment_id: str) -> JudgmentText:
        """The judgment's source text (as read when it was summarised)."""
        check_id(judgment_id)
        text = service.text(judgment_id)
        if text is None:
            raise RequestRefused(404, "not_found", f"no judgment {judgment_id!r} in the archive")
        marks = ParagraphIndex(text).marks
        return JudgmentText(
            judgment_id=judgment_id, text=text, paragraphs=[ParagraphMark(number=n, start=at) for n, at in marks]
        )

    @app.get(
        "/api/judgments/{judgment_id:path}/pinpoints",
        response_model=SummaryPinpoints,
        responses=ERRORS,
        dependencies=api,
        tags=["judgments"],
    )
    def judgment_pinpoints(judgment_id: str) -> SummaryPinpoints:
        """The judgment's structured summary with each passage's pinpoint in its text (offsets, paragraph; `aqgr show`)."""
        check_id(judgment_id)
        return pinpoints_of(judgment_id, service.summary, service.text)

    @app.get(
        "/api/judgments/{judgment_id:path}/citations",
        response_model=JudgmentCitations,
        responses=ERRORS,
        dependencies=api,
        tags=["judgments"],
    )
    def judgment_citations(judgment_id: str) -> JudgmentCitations:
        """The judgments of the archive this one cites and those citing it, each with the words that name it
        (404 for an unknown id; 503 when the index has no citation graph: run `aqgr index`)."""
        check_id(judgment_id)
        return service.citations_of(judgment_id)

    @app.get(
        "/api/judgments/{judgment_id:path}",
        response_model=StructuredSummary,
        responses=ERRORS,
        dependencies=api,
        tags=["judgments"],
    )
    def judgment(judgment_id: str) -> StructuredSummary:
        """The judgment's structured summary."""
        check_id(judgment_id)
        found = service.summary(judgment_id)
        if found is None:
            raise RequestRefused(
                404, "not_found", f"no summary of {judgment_id!r} in the archive (ids are as in search hits)"
            )
        return found

    # ---------------------------------------------------------------- the page
    static = _static_dir()

    @app.get("/", include_in_schema=False)
    def page():
        return FileResponse(
            static / "index.html",
            headers={
                "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
                "Cache-Control": "no-cache",
            },
        )

    app.mount("/static", StaticFiles(directory=static), name="static")
    return app

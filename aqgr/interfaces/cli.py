"""The `aqgr` command: a thin typer layer over the API. Data on stdout; messages,
progress and tables meant for people on stderr (so `--json` output pipes cleanly)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from aqgr.foundation.console import styled  # light: rich is imported when something is printed
from aqgr.foundation.errors import AqgrError
from aqgr.foundation.paths import SAMPLE
from aqgr.interfaces.invocation import DatabaseOption, HomeOption, Invocation, _err, _fail, _out, open_archive
from aqgr.interfaces.show_cli import show
from aqgr.schemas.filters import facet_lines, make_filters

app = typer.Typer(
    name="aqgr",
    help="Find the precedents that matter for a set of facts: structured summaries, question-guided retrieval, explanations. Offline by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _global_options(
    ctx: typer.Context,
    provider: str | None = typer.Option(
        None,
        "--provider",
        help="Model provider for the llm.v1 engines: gemini.v1, gemini-legacy.v1, openai.v1, llamacpp.v1 (a GGUF file in-process), fake.v1 (env AQGR_PROVIDER). Default: none, offline engines.",
    ),
    model: str | None = typer.Option(
        None,
        "--model",
        help="Model name, or for llamacpp.v1 the path of a .gguf file (env AQGR_MODEL; gemini.v1 default gemini-2.5-flash).",
    ),
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="Provider endpoint, e.g. http://localhost:11434/v1 for Ollama (env AQGR_BASE_URL). Keys come only from the environment.",
    ),
    summarizer: str | None = typer.Option(
        None,
        "--summarizer",
        help="Summarizer engine (env AQGR_SUMMARIZER): extractive.v1, llm.v1. Default: llm.v1 with a provider, else extractive.v1.",
    ),
    question_generator: str | None = typer.Option(
        None, "--question-generator", help="Question generator (env AQGR_QUESTION_GENERATOR): harvest.v1, llm.v1."
    ),
    explainer: str | None = typer.Option(
        None, "--explainer", help="Explainer (env AQGR_EXPLAINER): evidence.v2 (offline default), evidence.v1, llm.v1."
    ),
    treatment: str | None = typer.Option(
        None,
        "--treatment",
        help="Citation treatment engine of `aqgr index` (env AQGR_TREATMENT): phrases.v1 (offline default), llm.v1.",
    ),
    context_window: int | None = typer.Option(
        None,
        "--context-window",
        min=256,
        help="The model's context window in tokens (env AQGR_CONTEXT_WINDOW). Default: read from the model (llamacpp.v1), Gemini's documented one, else 8192.",
    ),
    max_input_tokens: int | None = typer.Option(
        None,
        "--max-input-tokens",
        min=64,
        help="Most prompt tokens of one model call (env AQGR_MAX_INPUT_TOKENS). Default: the study's 30,720, less on a smaller window.",
    ),
    max_output_tokens: int | None = typer.Option(
        None,
        "--max-output-tokens",
        min=16,
        help="Most reply tokens of one model call (env AQGR_MAX_OUTPUT_TOKENS). Default: 2,048 for summaries and explanations, 1,024 for questions, at most a third of the window.",
    ),
    thinking_budget: int | None = typer.Option(
        None,
        "--thinking-budget",
        min=0,
        help="Gemini 2.5 thinking tokens per call, on top of the reply budget (env AQGR_THINKING_BUDGET; default 512; 0: off where the model allows).",
    ),
    structured_output: str | None = typer.Option(
        None,
        "--structured-output",
        help="auto (default: negotiated per server), json_schema, json_object_schema, json_object or off (env AQGR_STRUCTURED_OUTPUT).",
    ),
) -> None:
    ctx.obj = Invocation(
        dict(
            provider=provider,
            model=model,
            base_url=base_url,
            summarizer=summarizer,
            question_generator=question_generator,
            explainer=explainer,
            treatment=treatment,
            context_window=context_window,
            max_input_tokens=max_input_tokens,
            max_output_tokens=max_output_tokens,
            thinking_budget=thinking_budget,
            structured_output=structured_output,
        )
    )
    ctx.call_on_close(ctx.obj.report_model_usage)


@app.command()
def summarize(
    ctx: typer.Context,
    paths: list[Path] | None = typer.Argument(
        None, help="Judgment files or folders (walked recursively): .txt, .pdf, .docx, .html/.htm."
    ),
    home: Path | None = HomeOption,
    database_url: str | None = DatabaseOption,
    workers: int = typer.Option(
        1,
        "--workers",
        "-w",
        min=1,
        help="Parallel workers: processes for the offline engine, concurrent requests for a provider engine.",
    ),
    id_from: str = typer.Option(
        "stem",
        "--id-from",
        help="Judgment ids: 'stem' (C12.pdf -> C12), 'relpath' (path under the folder, without extension) or 'regex:PATTERN' (first group of PATTERN in that path).",
    ),
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="Only retry the files whose last attempt failed (under PATHS when given)."
    ),
    force: bool = typer.Option(False, "--force", help="Summarise again even when unchanged."),
    as_json: bool = typer.Option(False, "--json", help="Print the batch report as JSON on stdout."),
    ledger: bool | None = typer.Option(
        None,
        "--ledger/--no-ledger",
        help="Share the batch with other workers through the database's work ledger. Default: on with PostgreSQL or --worker-id.",
    ),
    worker_id: str | None = typer.Option(
        None,
        "--worker-id",
        help="This worker's name in the work ledger (default host:pid). Run one `aqgr summarize` per machine against the same --database-url; PATHS may be omitted to join a batch.",
    ),
    lease_seconds: float | None = typer.Option(
        None,
        "--lease-seconds",
        min=0.1,
        help="How long a claim lasts without a heartbeat before another worker may take the item (default 300; renewed every third of it).",
    ),
) -> None:
    """Summarise judgments into validated structured summaries. Per-file errors are recorded, never fatal;
    an interrupted run (Ctrl-C, kill) resumes where it stopped when run again. With PostgreSQL, any
    number of such runs on any number of machines share the work (see `aqgr status`: work_ledger)."""
    import signal

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    from aqgr.foundation.errors import BatchInterrupted

    class RateColumn(ProgressColumn):
        def render(self, task) -> Text:
            return Text(f"{task.speed:.1f} docs/s" if task.speed else "- docs/s")

    class CountsColumn(ProgressColumn):  # the file name is data: styled, never markup
        def render(self, task) -> Text:
            seen = task.fields.get("counts") or counts
            return styled(
                (f"{seen['summarised']} new", "green"),
                " ",
                (f"{seen['unchanged']} unchanged", "dim"),
                " ",
                (f"{seen['failed']} failed", "yellow"),
                " ",
                task.fields.get("current", ""),
            )

    if not paths and not retry_failed and not worker_id:
        _fail(
            typer.BadParameter("give judgment files or folders, --retry-failed, or --worker-id to join a shared batch")
        )
    archive = open_archive(ctx, home, database_url)
    console = _err()
    counts = {"summarised": 0, "unchanged": 0, "failed": 0}
    columns = (
        TextColumn("summarising"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        CountsColumn(),
    )
    previous = signal.signal(
        signal.SIGTERM, signal.default_int_handler
    )  # `kill` stops like Ctrl-C: running items finish
    interrupted = False
    try:
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task("", total=None)

            def progress(done: int, total: int, current: str) -> None:
                bar.update(
                    task,
                    completed=done,
                    total=total,
                    counts=dict(counts),
                    current=Path(current).name if current else "",
                )

            def on_result(outcome) -> None:
                counts[outcome.status] = counts.get(outcome.status, 0) + 1

            shared = dict(ledger=ledger, worker_id=worker_id, lease_seconds=lease_seconds)
            report = archive.summarize(
                paths or [],
                force=force,
                progress=progress,
                workers=workers,
                id_from=id_from,
                retry_failed=retry_failed,
                on_result=on_result,
                **shared,
            )
    except BatchInterrupted as exc:
        report, interrupted = exc.report, True
    except AqgrError as exc:
        _fail(exc)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    _print_batch(report, console, archive)
    if interrupted:
        console.print(
            styled(
                ("interrupted", "yellow"), ": finished judgments are stored; run the same command again to do the rest"
            )
        )
        raise typer.Exit(130)
    if report.aborted:
        _fail(Exception(report.aborted))
    if report.files + len(report.skipped_unsupported) + len(report.failed) > 0 and report.processed == 0:
        raise typer.Exit(1)


def _print_batch(report, console, archive) -> None:
    done = report.processed + len(report.failed)
    rate = f", {report.rate:.1f} docs/s with {report.workers} worker(s)" if done else ""
    console.print(
        f"{len(report.summarised)} summarised, {len(report.unchanged)} unchanged (skipped), {len(report.failed)} failed, {len(report.skipped_unsupported)} skipped (unsupported) in {report.seconds:.1f}s{rate} -> {archive.home}"
    )
    for same in report.renamed[:50]:
        console.print(
            styled(
                ("renamed", "cyan"),
                f": {same.stored_path} -> {same.path}: judgment {same.judgment_id} kept (one judgment, its id unchanged)",
            )
        )
    for same in report.duplicates[:50]:
        console.print(
            styled(
                ("duplicate", "cyan"),
                f": {same.path} has the bytes of judgment {same.judgment_id} ({same.stored_path}): not stored again",
            )
        )
    if report.failures_by_reason:
        console.print(
            "failed by reason: "
            + ", ".join(
                f"{reason} {n}"
                for reason, n in sorted(report.failures_by_reason.items(), key=lambda kv: (-kv[1], kv[0]))
            )
        )
    if report.lost_leases:
        console.print(
            styled(
                (f"{len(report.lost_leases)} item(s) outlived their lease and went to another worker", "yellow"),
                " (results discarded); consider a longer --lease-seconds",
            )
        )
    if report.usage:
        console.print("provider usage: " + ", ".join(f"{k} {v:g}" for k, v in sorted(report.usage.items())))
    for failure in report.failed[:50]:
        console.print(
            styled("  ", ("failed", "yellow"), f" {failure.path}: {failure.reason}: {failure.message}"), soft_wrap=True
        )
    if len(report.failed) > 50:
        console.print(
            f"  ... and {len(report.failed) - 50} more: `aqgr status` counts them; `aqgr summarize --retry-failed` retries them"
        )
    for path in report.skipped_unsupported[:20]:
        console.print(styled("  ", ("skipped", "dim"), f" {path}"))
    if len(report.skipped_unsupported) > 20:
        console.print(styled("  ", (f"... and {len(report.skipped_unsupported) - 20} more skipped", "dim")))


@app.command()
def index(
    ctx: typer.Context,
    home: Path | None = HomeOption,
    precedents: bool = typer.Option(
        False,
        "--precedents/--no-precedents",
        help="Index the precedents slot too (the study: better for lawyers, lower on the FIRE gold standard).",
    ),
    slots: str | None = typer.Option(
        None,
        help="Comma-separated slots to index (default: parties,case_number,facts,issues,reasoning,new_principles).",
    ),
    embedder: str | None = typer.Option(
        None,
        help="Embedding model (default minilm-l6-int8.v1: the packaged MiniLM in int8; minilm-l6.v1: the same on torch).",
    ),
    backend: str = typer.Option(
        "embedded",
        "--backend",
        help="Index backend: embedded (BM25 + FAISS files in the home) or milvus (needs pip install 'aqgr[milvus]').",
    ),
    uri: str | None = typer.Option(
        None,
        "--uri",
        help="Milvus URI for --backend milvus: http://127.0.0.1:19530, or a milvus-lite path (default: milvus.db in the home).",
    ),
    rebuild: bool = typer.Option(
        False,
        "--rebuild",
        help="Build the whole index anew instead of adding only what changed since the last `aqgr index`.",
    ),
) -> None:
    """Bring the BM25 + dense index up to date with the archive's summaries: the first time a full build, then only
    new, re-made and removed judgments (a different --slots/--embedder/--backend, or --rebuild, builds it anew)."""
    from aqgr.retrieval.spec import IndexSpec

    archive = open_archive(ctx, home)
    fields = {}
    if slots:
        fields["slots"] = tuple(s.strip() for s in slots.split(",") if s.strip())
    if precedents:
        base = fields.get("slots", IndexSpec().slots)
        fields["slots"] = tuple(base) + (("precedents",) if "precedents" not in base else ())
    if embedder:
        fields["embedder"] = embedder
    console = _err()
    try:
        spec = IndexSpec(**fields)
        with console.status("building the index") as status:
            if backend not in ("embedded", "embedded.v1") and uri is None:
                uri = str(archive.home / "milvus.db")
            manifest = archive.build_index(
                spec=spec,
                progress=lambda stage, done, total: status.update(f"{stage}: {done}/{total}"),
                backend=backend,
                uri=uri,
                rebuild=rebuild,
            )
    except (AqgrError, ValueError) as exc:
        _fail(exc)
    change = manifest.get("update", {})
    what = (
        f"added {change.get('added', 0)}, replaced {change.get('replaced', 0)}, removed {change.get('removed', 0)}"
        if change.get("mode") == "update"
        else "built anew"
    )
    console.print(
        f"indexed {manifest.get('n_docs', len(manifest.get('doc_ids', [])))} judgments ({what}) -> {archive.settings.index_dir}"
    )
    found = archive.citations()
    console.print(
        f"{len(found) if found is not None else 0} citations between judgments of the archive (precedents referred)"
    )
    typer.echo(json.dumps({k: v for k, v in manifest.items() if k != "doc_ids"}, indent=2, default=str))


def _at(pin) -> tuple[str, str] | str:
    """' (para 12)' after a quoted explanation, dim; nothing when it was not looked up."""
    from aqgr.pipeline.pinpoint import where

    return (f"  ({where(pin)})", "dim") if pin is not None else ""


def _disagreed(dissent: str) -> str:
    """A treatment's note where the two treatment engines read it differently (its `dissent`)."""
    return f"the treatment engines disagreed ({dissent}): the more severe label stands"


def _print_result(result, console) -> None:
    from aqgr.pipeline.pinpoint import where

    console.print(styled(("Questions", "bold"), f" ({'chosen' if result.questions_chosen_by_user else 'generated'}):"))
    for i, question in enumerate(result.questions, 1):
        console.print(f"  Q{i}. {question}")
    if not result.hits:
        console.print("No judgment in the archive addresses these questions above the relevance threshold.")
    for hit in result.hits:
        console.print(
            styled("\n", (f"{hit.rank}. {hit.parties}", "bold"), f"  [{hit.judgment_id}]  score {hit.score}/10")
        )
        meta = ", ".join(x for x in (hit.case_number, hit.court, hit.date) if x)
        if meta:
            console.print(f"   {meta}")
        console.print(styled("   ", ("Issue:", "cyan"), f" {hit.legal_issue}", _at(hit.legal_issue_at)))
        console.print(styled("   ", ("Why it applies:", "cyan"), f" {hit.reason}", _at(hit.reason_at)))
        if hit.evidence:
            console.print(
                styled(
                    "   ",
                    ("Evidence:", "cyan"),
                    " " + " · ".join(f"{e.slot}, {where(e)}" if where(e) else e.slot for e in hit.evidence),
                    ("  (aqgr show " + hit.judgment_id + " --text)", "dim"),
                )
            )
        if hit.sections:
            console.print(styled("   ", ("Sections:", "cyan"), f" {'; '.join(hit.sections)}"))
        if hit.cited_by:
            more = f" and {len(hit.cited_by) - 3} more" if len(hit.cited_by) > 3 else ""
            console.print(
                styled(
                    "   ",
                    ("Cited by similar judgments:", "cyan"),
                    f" {', '.join(hit.cited_by[:3])}{more}  ",
                    (f"(aqgr citations {hit.judgment_id})", "dim"),
                )
            )
        for warning in hit.treatment_warnings:
            when = f", {warning.date}" if warning.date else ""
            console.print(
                styled(
                    "   ",
                    (f"WARNING: {warning.treatment} by {warning.parties} [{warning.judgment_id}]{when}:", "bold red"),
                    f' "{warning.quote}"',
                )
            )
            if warning.dissent:
                console.print(styled("     ", (_disagreed(warning.dissent), "dim")))
    engines = result.engines
    console.print(
        styled(
            "\n",
            (
                f"engines: questions {engines.questions}, explanations {engines.explainer}, summaries {engines.summarizer}, embeddings {engines.embedder}; {result.timings_ms.get('total', 0):.0f} ms",
                "dim",
            ),
        )
    )
    for line in facet_lines(result):
        console.print(styled((line, "dim")))
    for note in result.notes:
        console.print(styled((note, "yellow")))
    if result.dropped_not_in_archive:
        console.print(
            styled(
                (
                    f"{result.dropped_not_in_archive} judgment(s) named by an engine were not in the archive and were dropped",
                    "yellow",
                )
            )
        )


def _profile(value: str | None) -> str | None:
    """A search profile's name (`--profile`)."""
    from aqgr.pipeline.config import SEARCH_PROFILES

    if value is not None and value not in SEARCH_PROFILES:
        raise typer.BadParameter(f"{value!r}: one of {', '.join(SEARCH_PROFILES)}")
    return value


def _share(value: float | None) -> float | None:
    """A share of the judgments, 0 < value <= 1 (`--fulltext-max-df`)."""
    if value is not None and not 0 < value <= 1:
        raise typer.BadParameter(f"a share of the judgments, above 0 and at most 1, not {value}")
    return value


@app.command()
def search(
    ctx: typer.Context,
    facts: str = typer.Argument(..., help="The facts, in plain words ('-' reads them from stdin)."),
    home: Path | None = HomeOption,
    question: list[str] | None = typer.Option(
        None, "--question", "-q", help="A legal question to search with (repeat); replaces the generated ones."
    ),
    k: int = typer.Option(10, "-k", min=1, help="Most judgments to return."),
    candidates: bool = typer.Option(
        False, "--candidates", help="Only list the candidate legal questions for the facts."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
    court: str | None = typer.Option(
        None, "--court", help="Only judgments of this court ('SC', 'Supreme Court of India', 'Bombay High Court')."
    ),
    court_level: str | None = typer.Option(
        None, "--court-level", help="Only this level of court: supreme, high, district, tribunal."
    ),
    decided_from: str | None = typer.Option(
        None, "--from", help="Only judgments decided on or after this date (YYYY-MM-DD, YYYY-MM or YYYY)."
    ),
    decided_to: str | None = typer.Option(
        None, "--to", help="Only judgments decided on or before this date (YYYY-MM-DD, YYYY-MM or YYYY)."
    ),
    judge: str | None = typer.Option(
        None, "--judge", help="Only judgments with this judge on the bench ('A.K. Sikri', 'Sikri')."
    ),
    kind: str | None = typer.Option(
        None, "--kind", help="Only this kind of judgment ('criminal appeal', 'writ petition', 'appeal')."
    ),
    statute: str | None = typer.Option(
        None, "--statute", help="Only judgments referring to this statute or section ('IPC', 'Section 302 IPC')."
    ),
    disposal: str | None = typer.Option(
        None, "--disposal", help="Only judgments disposed so: allowed, dismissed, partly."
    ),
    overruled_below: bool = typer.Option(
        False,
        "--overruled-below",
        help="Rank a hit that a later judgment of the archive overruled just below that judgment, when it is among the hits (off by default; the hit is never dropped and keeps its warning).",
    ),
    profile: str | None = typer.Option(
        None,
        "--profile",
        callback=_profile,
        help="The search profile: standard (every question reads every retriever with every term) or large (the facts' candidates re-ranked, common terms left out: for archives over 100,000 judgments). Default: the index's, recorded when it was built (`aqgr status`); the four options below override it one by one.",
    ),
    fulltext_questions: bool | None = typer.Option(
        None,
        "--fulltext-questions/--fulltext-once",
        help="Each question also reads the judgments' full texts, or the facts' full-text run stands in for the questions' (one full-text query a search). Default: as the search profile says (standard: each question; large: once).",
    ),
    dense_questions: bool | None = typer.Option(
        None,
        "--dense-questions/--dense-once",
        help="Each question also reads the dense retriever (its vector combined with the facts'), or the facts' dense run stands in for the questions' (one dense search a search). Default: as the search profile says (standard: each question; large: once).",
    ),
    rescore_questions: bool | None = typer.Option(
        None,
        "--rescore-questions/--search-questions",
        help="A question's BM25 runs re-rank the facts' candidates (the same scores, milliseconds), or search the whole archive. Default: as the search profile says (standard: search; large: re-rank).",
    ),
    fulltext_max_df: float | None = typer.Option(
        None,
        "--fulltext-max-df",
        callback=_share,
        help="Full-text BM25 leaves out the query's terms held by more than this share of the judgments (1: every term). Default: as the search profile says (standard: every term; large: those in at most 0.2 of them).",
    ),
    summary_max_df: float | None = typer.Option(
        None,
        "--summary-max-df",
        callback=_share,
        help="Summary BM25 leaves out the query's terms held by more than this share of the summaries (1: every term). Default: as the search profile says (standard: every term; large: those in at most 0.5 of them).",
    ),
) -> None:
    """Question-guided search: the legal questions the facts raise, and the judgments that answer them."""
    if facts == "-":
        facts = sys.stdin.read()
    try:
        filters = make_filters(
            court=court,
            court_level=court_level,
            decided_from=decided_from,
            decided_to=decided_to,
            judge=judge,
            kind=kind,
            statute=statute,
            disposal=disposal,
        )
    except AqgrError as exc:
        _fail(exc)
    archive = open_archive(ctx, home)
    try:
        if candidates:
            found = archive.candidate_questions(facts, filters=filters)
            if as_json:
                typer.echo(json.dumps([c.model_dump() for c in found], indent=2))
            else:
                shown = _out()
                for i, c in enumerate(found, 1):
                    shown.print(f"{i}. {c.text}  [{c.source_judgment_id}, {c.score:.3f}]", soft_wrap=True)
            return
        changes = {
            **({"overruled_below": True} if overruled_below else {}),
            **({"profile": profile} if profile is not None else {}),
            **({"fulltext_questions": fulltext_questions} if fulltext_questions is not None else {}),
            **({"dense_questions": dense_questions} if dense_questions is not None else {}),
            **({"rescore_questions": rescore_questions} if rescore_questions is not None else {}),
            **({"fulltext_max_df": fulltext_max_df} if fulltext_max_df is not None else {}),
            **({"summary_max_df": summary_max_df} if summary_max_df is not None else {}),
        }
        options = archive.settings.search.model_copy(update=changes) if changes else None
        result = archive.search(facts, question or None, k=k, filters=filters, options=options)
    except AqgrError as exc:
        _fail(exc)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print_result(result, _out())


@app.command()
def citations(
    ctx: typer.Context,
    judgment_id: str = typer.Argument(..., help="A judgment id, as in search hits (e.g. C12)."),
    home: Path | None = HomeOption,
    database_url: str | None = DatabaseOption,
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
) -> None:
    """The judgments of the archive that a judgment cites, and those that cite it (found by `aqgr index`),
    each with the citing judgment's words that name it and its treatment (followed, distinguished, overruled, ...)."""
    try:
        found = open_archive(ctx, home, database_url).citations_of(judgment_id)
    except AqgrError as exc:
        _fail(exc)
    if as_json:
        typer.echo(found.model_dump_json(indent=2))
        return
    console = _out()
    console.print(styled((found.judgment.parties, "bold"), f"  [{found.judgment.judgment_id}]"))
    for title, refs in (("Cites", found.cites), ("Cited by", found.cited_by)):
        console.print(
            styled("\n", (title, "bold"), f" ({len(refs)} judgment(s) of the archive)" + (":" if refs else ""))
        )
        for ref in refs:
            meta = ", ".join(x for x in (ref.case_number, ref.date) if x)
            treated = f"  ({ref.treatment.label})" if ref.treatment else ""
            console.print(f"  {ref.parties}  [{ref.judgment_id}]" + (f"  {meta}" if meta else "") + treated)
            if ref.treatment and ref.treatment.label != "referred":
                console.print(styled("    ", (f'{ref.treatment.label}: "{ref.treatment.quote}"', "yellow")))
            if ref.treatment and ref.treatment.dissent:
                console.print(styled("    ", (_disagreed(ref.treatment.dissent), "yellow")))
            if ref.mention:
                console.print(styled("    ", (f'{ref.how}: "{ref.mention}"', "dim")))


@app.command()
def remove(
    ctx: typer.Context,
    ids: list[str] = typer.Argument(..., help="Judgment ids to take out of the archive."),
    home: Path | None = HomeOption,
    database_url: str | None = DatabaseOption,
) -> None:
    """Take judgments out of the archive: their text and summaries, and their index entries and citation links
    (the index is updated for the removal alone). Unknown ids are reported, not an error."""
    archive = open_archive(ctx, home, database_url)
    try:
        removed = archive.remove(ids)
    except (AqgrError, ValueError) as exc:
        _fail(exc)
    console = _err()
    console.print(f"removed {len(removed)} judgment(s)")
    unknown = [i for i in ids if i not in set(removed)]
    if unknown:
        console.print(f"not in the archive: {', '.join(unknown)}")
    typer.echo(json.dumps({"removed": removed, "unknown": unknown}))


@app.command()
def schema(
    slots_only: bool = typer.Option(False, "--slots-only", help="Only the slots (what a model is asked to fill)."),
) -> None:
    """Print the JSON Schema of the structured summary."""
    from aqgr.schemas.validation import summary_json_schema

    typer.echo(json.dumps(summary_json_schema(slots_only), indent=2))


@app.command()
def status(ctx: typer.Context, home: Path | None = HomeOption, database_url: str | None = DatabaseOption) -> None:
    """The archive: judgments, summaries by engine and schema version, failures by reason, the index, and the
    work ledger of shared batches (items pending/claimed/done/failed per engine, expired leases, active workers)."""
    try:
        info = open_archive(ctx, home, database_url).status()
    except AqgrError as exc:
        _fail(exc)
    if info["index"]:
        info["index"] = {k: v for k, v in info["index"].items() if k != "doc_ids"}
    typer.echo(json.dumps(info, indent=2, default=str))


@app.command()
def check(ctx: typer.Context, home: Path | None = HomeOption, database_url: str | None = DatabaseOption) -> None:
    """Check what a search needs: the database (integrity, tables, every stored summary), the index against its
    manifest and the archive, the caches, leftovers. JSON on stdout; exit code 1 when something is damaged, each
    damaged part with how to recover on stderr."""
    info = open_archive(ctx, home, database_url).check()
    typer.echo(json.dumps(info, indent=2))
    for found, (word, colour) in ((info["damaged"], ("damaged:", "red")), (info["warnings"], ("note:", "yellow"))):
        for part in found:
            _err().print(
                styled((word, colour), f" {part['part']} {part['where']}: {part['problem']}: {part['recovery']}"),
                soft_wrap=True,
            )
    if not info["ok"]:
        raise typer.Exit(1)


@app.command("export")
def export_(
    ctx: typer.Context,
    home: Path | None = HomeOption,
    database_url: str | None = DatabaseOption,
    format: str = typer.Option(
        "jsonl",
        "--format",
        "-f",
        help="jsonl (one summary per line) or json-dir (one JSON file per judgment, like C1.json).",
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="The .jsonl file or the folder; jsonl goes to stdout when omitted."
    ),
    engine: str | None = typer.Option(
        None, "--engine", help="Whose summaries (default: the archive's summarizer, extractive.v1)."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Write through --out even when it is a symbolic link, a FIFO or a device (refused by default: only a regular file is replaced, atomically).",
    ),
) -> None:
    """Export the stored summaries as JSON."""
    try:
        archive = open_archive(ctx, home, database_url)
        count = archive.export_summaries(out, format=format, engine=engine, force=force)
    except AqgrError as exc:
        _fail(exc)
    _err().print(f"exported {count} summaries" + (f" -> {out}" if out else ""))
    if archive.damaged_summaries():
        from aqgr.pipeline.search import damaged_note

        _err().print(styled(("note:", "yellow"), " ", damaged_note(archive.damaged_summaries())), soft_wrap=True)


@app.command("import")
def import_(
    ctx: typer.Context,
    paths: list[Path] = typer.Argument(
        ...,
        help=".jsonl/.ndjson files (one summary per line), .json files (one summary, or a list) or folders of them.",
    ),
    home: Path | None = HomeOption,
    database_url: str | None = DatabaseOption,
    as_json: bool = typer.Option(False, "--json", help="Print the import report as JSON on stdout."),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="Overwrite a stored summary of the same judgment and engine (kept by default, and the import reported as refused).",
    ),
) -> None:
    """Import summaries, validating each against the JSON Schema; invalid ones are reported, not stored.
    A judgment that already has a different summary from the same engine keeps it unless --replace;
    imported summaries are counted as such by `aqgr status`."""
    try:
        report = open_archive(ctx, home, database_url).import_summaries(paths, replace=replace)
    except AqgrError as exc:
        _fail(exc)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    console = _err()
    console.print(
        f"imported {len(report.imported)} summaries ({len(report.replaced)} replaced stored ones), {len(report.invalid)} invalid, "
        f"{len(report.refused)} refused (a different summary is stored: --replace overwrites it)"
    )
    for kind, items in (("invalid", report.invalid), ("refused", report.refused)):
        for bad in items[:50]:
            console.print(styled("  ", (kind, "yellow"), f" {bad.where}: {bad.problem}"), soft_wrap=True)
        if len(items) > 50:
            console.print(f"  ... and {len(items) - 50} more {kind}: --json lists them all")
    if (report.invalid or report.refused) and not report.imported:
        raise typer.Exit(1)


def sample_dir() -> Path:
    return SAMPLE


@app.command()
def demo(
    ctx: typer.Context,
    home: Path | None = typer.Option(
        None, "--home", help="Where to build the demo archive (default: a 'demo' folder in the user's data directory)."
    ),
    sample: Path = typer.Option(
        None, "--sample", help="The sample archive folder (default: the one aqgr ships, datasets/sample in a checkout)."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Summarise the sample archive, build the index and answer a sample scenario (offline unless a provider is set)."""
    from aqgr.pipeline.config import default_home

    sample = sample or sample_dir()
    scenarios_file = sample / "scenarios.json"
    if not scenarios_file.exists():
        _fail(
            FileNotFoundError(
                f"no sample archive at {sample}: pass --sample PATH (a folder with judgments/ and scenarios.json)"
            )
        )
    archive = open_archive(
        ctx, home or default_home() / "demo"
    )  # the global provider options apply (--provider ... demo)
    console = _err()
    try:
        with console.status("summarising the sample archive"):
            report = archive.summarize([sample / "judgments"])
        console.print(
            f"summaries: {len(report.summarised)} new, {len(report.unchanged)} unchanged, {len(report.failed)} failed"
        )
        with console.status("building the index (BM25 + FAISS over all-MiniLM-L6-v2)"):
            archive.build_index()
        scenario = json.loads(scenarios_file.read_text())[0]
        console.print(styled("\n", (f"Scenario {scenario['id']}", "bold"), f": {scenario['facts']}\n"))
        result = archive.search(scenario["facts"])
    except AqgrError as exc:
        _fail(exc)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print_result(result, _out())


def _register_eval() -> None:
    """`aqgr eval`: the very command of `python -m aqgr.eval` (eval/__main__.py), options and all."""
    try:
        from aqgr.eval.__main__ import app as eval_app
    except ImportError:  # the eval package is not installed beside aqgr
        return
    app.add_typer(
        eval_app,
        name="eval",
        help="FIRE-style evaluation on AILA-format data: run systems and ablations, print the table, write a report "
        "directory (report.md, results.json, config.json, TREC run files); `aqgr eval build-citation-benchmark` "
        "makes a tuning benchmark from an archive's own citations.",
    )


_register_eval()

app.command()(show)  # aqgr show (aqgr/interfaces/show_cli.py)


def _register_serve() -> None:
    """`aqgr serve`, `aqgr mcp` and `aqgr statutes` (aqgr/interfaces/serve_cli.py; their dependencies load only when run)."""
    from aqgr.interfaces.serve_cli import register

    register(app, HomeOption)


_register_serve()


def main() -> None:
    app()


if __name__ == "__main__":
    main()

"""The `aqgr` command: a thin typer layer over the API. Data on stdout; messages,
progress and tables meant for people on stderr (so `--json` output pipes cleanly)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from aqgr.errors import AqgrError

app = typer.Typer(
    name="aqgr",
    help="Find the precedents that matter for a set of facts: structured summaries, question-guided retrieval, explanations. Offline by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

HomeOption = typer.Option(None, "--home", envvar="AQGR_HOME", help="Archive home directory (database, index, caches). Default: the user's data directory.")


def _err():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _archive(home: Optional[Path]):
    from aqgr.archive import Archive

    return Archive(home)


def _fail(exc: Exception, code: int = 2) -> None:
    _err().print(f"[red]error:[/red] {exc}", markup=True, soft_wrap=True)
    raise typer.Exit(code)


@app.command()
def summarize(
    paths: list[Path] = typer.Argument(..., help="Judgment files or folders (walked recursively)."),
    home: Optional[Path] = HomeOption,
    force: bool = typer.Option(False, "--force", help="Summarise again even when unchanged."),
    as_json: bool = typer.Option(False, "--json", help="Print the batch report as JSON on stdout."),
) -> None:
    """Summarise judgments into validated structured summaries (per-file errors are recorded, never fatal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    archive = _archive(home)
    console = _err()
    columns = (TextColumn("summarising"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.description}"))
    try:
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task("", total=None)

            def progress(done: int, total: int, current: str) -> None:
                bar.update(task, completed=done, total=total, description=Path(current).name if current else "")

            report = archive.summarize(paths, force=force, progress=progress)
    except AqgrError as exc:
        _fail(exc)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    console.print(f"{len(report.summarised)} summarised, {len(report.unchanged)} unchanged, {len(report.failed)} failed, {len(report.skipped_unsupported)} skipped (unsupported) -> {archive.home}")
    for failure in report.failed:
        console.print(f"  [yellow]failed[/yellow] {failure.path}: {failure.reason}: {failure.message}", soft_wrap=True)
    for path in report.skipped_unsupported[:20]:
        console.print(f"  [dim]skipped[/dim] {path}")
    if report.files + len(report.skipped_unsupported) > 0 and report.processed == 0:
        raise typer.Exit(1)


@app.command()
def index(
    home: Optional[Path] = HomeOption,
    precedents: bool = typer.Option(False, "--precedents/--no-precedents", help="Index the precedents slot too (the study: better for lawyers, lower on the FIRE gold standard)."),
    slots: Optional[str] = typer.Option(None, help="Comma-separated slots to index (default: parties,case_number,facts,issues,reasoning,new_principles)."),
    embedder: Optional[str] = typer.Option(None, help="Embedding model (default minilm-l6.v1, shipped in a package)."),
) -> None:
    """Build (or rebuild) the BM25 + FAISS index over the archive's summaries."""
    from retrieval.index import IndexSpec

    archive = _archive(home)
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
            manifest = archive.build_index(spec=spec, progress=lambda stage, done, total: status.update(f"{stage}: {done}/{total}"))
    except (AqgrError, ValueError) as exc:
        _fail(exc)
    console.print(f"indexed {manifest.get('n_docs', len(manifest.get('doc_ids', [])))} judgments -> {archive.settings.index_dir}")
    typer.echo(json.dumps({k: v for k, v in manifest.items() if k != "doc_ids"}, indent=2, default=str))


def _print_result(result, console) -> None:
    console.print(f"[bold]Questions[/bold] ({'chosen' if result.questions_chosen_by_user else 'generated'}):")
    for i, question in enumerate(result.questions, 1):
        console.print(f"  Q{i}. {question}")
    if not result.hits:
        console.print("No judgment in the archive addresses these questions above the relevance threshold.")
    for hit in result.hits:
        console.print(f"\n[bold]{hit.rank}. {hit.parties}[/bold]  [{hit.judgment_id}]  score {hit.score}/10")
        meta = ", ".join(x for x in (hit.case_number, hit.court, hit.date) if x)
        if meta:
            console.print(f"   {meta}")
        console.print(f"   [cyan]Issue:[/cyan] {hit.legal_issue}")
        console.print(f"   [cyan]Why it applies:[/cyan] {hit.reason}")
    engines = result.engines
    console.print(f"\n[dim]engines: questions {engines.questions}, explanations {engines.explainer}, summaries {engines.summarizer}, embeddings {engines.embedder}; {result.timings_ms.get('total', 0):.0f} ms[/dim]")
    if result.dropped_not_in_archive:
        console.print(f"[yellow]{result.dropped_not_in_archive} judgment(s) named by an engine were not in the archive and were dropped[/yellow]")


@app.command()
def search(
    facts: str = typer.Argument(..., help="The facts, in plain words ('-' reads them from stdin)."),
    home: Optional[Path] = HomeOption,
    question: Optional[list[str]] = typer.Option(None, "--question", "-q", help="A legal question to search with (repeat); replaces the generated ones."),
    k: int = typer.Option(10, "-k", min=1, help="Most judgments to return."),
    candidates: bool = typer.Option(False, "--candidates", help="Only list the candidate legal questions for the facts."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output on stdout."),
) -> None:
    """Question-guided search: the legal questions the facts raise, and the judgments that answer them."""
    if facts == "-":
        facts = sys.stdin.read()
    archive = _archive(home)
    try:
        if candidates:
            found = archive.candidate_questions(facts)
            if as_json:
                typer.echo(json.dumps([c.model_dump() for c in found], indent=2))
            else:
                for i, c in enumerate(found, 1):
                    typer.echo(f"{i}. {c.text}  [{c.source_judgment_id}, {c.score:.3f}]")
            return
        result = archive.search(facts, question or None, k=k)
    except AqgrError as exc:
        _fail(exc)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        from rich.console import Console

        _print_result(result, Console(highlight=False))


@app.command()
def schema(slots_only: bool = typer.Option(False, "--slots-only", help="Only the slots (what a model is asked to fill).")) -> None:
    """Print the JSON Schema of the structured summary."""
    from schemas.validation import summary_json_schema

    typer.echo(json.dumps(summary_json_schema(slots_only), indent=2))


@app.command()
def status(home: Optional[Path] = HomeOption) -> None:
    """The archive: judgments, summaries by engine and schema version, failures by reason, the index."""
    info = _archive(home).status()
    if info["index"]:
        info["index"] = {k: v for k, v in info["index"].items() if k != "doc_ids"}
    typer.echo(json.dumps(info, indent=2, default=str))


def sample_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "datasets" / "sample"


@app.command()
def demo(
    home: Optional[Path] = typer.Option(None, "--home", help="Where to build the demo archive (default: a 'demo' folder in the user's data directory)."),
    sample: Path = typer.Option(None, "--sample", help="The sample archive folder (default: datasets/sample of this checkout)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Summarise the sample archive, build the index and answer a sample scenario, offline."""
    from rich.console import Console

    from aqgr.archive import Archive
    from aqgr.config import default_home

    sample = sample or sample_dir()
    scenarios_file = sample / "scenarios.json"
    if not scenarios_file.exists():
        _fail(FileNotFoundError(f"no sample archive at {sample}: pass --sample PATH (a folder with judgments/ and scenarios.json)"))
    archive = Archive(home or default_home() / "demo")
    console = _err()
    try:
        with console.status("summarising the sample archive"):
            report = archive.summarize([sample / "judgments"])
        console.print(f"summaries: {len(report.summarised)} new, {len(report.unchanged)} unchanged, {len(report.failed)} failed")
        with console.status("building the index (BM25 + FAISS over all-MiniLM-L6-v2)"):
            archive.build_index()
        scenario = json.loads(scenarios_file.read_text())[0]
        console.print(f"\n[bold]Scenario {scenario['id']}[/bold]: {scenario['facts']}\n")
        result = archive.search(scenario["facts"])
    except AqgrError as exc:
        _fail(exc)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        _print_result(result, Console(highlight=False))


def main() -> None:
    app()


if __name__ == "__main__":
    main()

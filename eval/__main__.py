"""`python -m aqgr.eval`: the evaluation command (the same function `aqgr eval` wraps).

Data on stdout (the results as JSON with --json), the table and messages on stderr.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import typer

from aqgr.foundation.paths import shared_datasets

app = typer.Typer(add_completion=False, help="FIRE-style evaluation of aqgr systems on AILA-format data.")

DEFAULT_DATA = shared_datasets() / "aila2019"


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    system: list[str] | None = typer.Option(
        None,
        "--system",
        "-s",
        help="System name (repeat for several); default bm25-fulltext. "
        "A summary-based system on another index backend: NAME@milvus.",
    ),
    systems_csv: str | None = typer.Option(
        None,
        "--systems",
        help="Comma-separated system names ('all': every registered system), e.g. aqgr-no-fulltext,aqgr-no-fulltext@milvus.",
    ),
    protocol: str = typer.Option("aila-cases", help="aila-cases | aila-statutes | study-subset"),
    data: Path = typer.Option(DEFAULT_DATA, help="AILA-format dataset folder."),
    qrels: Path | None = typer.Option(None, help="Qrels file (default: the dataset's own)."),
    docs: Path | None = typer.Option(None, help="Documents folder when the dataset has none."),
    queries: str | None = typer.Option(None, help="Subset: 'Q1-Q10', 'Q1..Q10,Q31', 'all'."),
    out: Path | None = typer.Option(None, help="Report directory (default ./reports/<UTC timestamp>)."),
    measure: list[str] | None = typer.Option(None, "--measure", "-m", help="Measure (repeat); default: all."),
    depth: int = typer.Option(1000, help="Documents per query in the run."),
    cache_dir: Path | None = typer.Option(
        None, help="Eval cache: summaries, indexes, embeddings (default $AQGR_HOME/cache/eval)."
    ),
    summarizer: str | None = typer.Option(
        None, help="Summariser of the summary-based systems (default extractive.v1)."
    ),
    embedder: str | None = typer.Option(
        None, help="Embedding model of the summary-based systems (default minilm-l6-int8.v1)."
    ),
    bm25_idf: str | None = typer.Option(
        None,
        help="BM25 idf of the summary-based systems: lucene (the default; what Milvus computes) or okapi (rank-bm25's, floored; embedded backend only).",
    ),
    milvus_uri: str | None = typer.Option(
        None,
        help="Where the NAME@milvus systems keep their index: a Milvus server URL, or a milvus-lite path (default: milvus.db in the cached archive home).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the means as JSON on stdout."),
) -> None:
    """Run systems on AILA-format data (or a subcommand: build-citation-benchmark)."""
    if ctx.invoked_subcommand:
        return
    from rich.console import Console

    from aqgr.eval.harness import evaluate_path
    from aqgr.eval.report import render_table
    from aqgr.foundation.console import styled
    from aqgr.foundation.errors import AqgrError

    err = Console(stderr=True)
    out = out or default_out_dir()
    try:
        chosen = system_list(
            system, systems_csv, summarizer=summarizer, embedder=embedder, bm25_idf=bm25_idf, milvus_uri=milvus_uri
        )
        with progress_bar(err) as progress:
            report = evaluate_path(
                data,
                chosen,
                protocol,
                qrels=qrels,
                docs=docs,
                queries=queries,
                out_dir=out,
                measures=measure or None,
                depth=depth,
                cache_dir=cache_dir,
                progress=progress,
                command=_command_line(),
            )
    except AqgrError as exc:
        err.print(styled(("error:", "red"), f" {exc}"))
        raise typer.Exit(2) from None
    for warning in report.warnings:
        err.print(styled(("warning:", "yellow"), f" {warning}"))
    render_table(report, err)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "protocol": report.protocol.name,
                    "scored": len(report.scored),
                    "mean": report.table(),
                    "chance": report.chance,
                },
                indent=1,
            )
        )
    err.print(f"report written to {out}")


def _command_line() -> str:
    program = Path(sys.argv[0]).name
    return (
        shlex.join(["python", "-m", "eval"] if program == "__main__.py" else [program]) + " " + shlex.join(sys.argv[1:])
    )


def default_out_dir() -> Path:
    import time

    return Path("reports") / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def system_list(names: list[str] | None, csv: str | None, **pipeline_options) -> list:
    """The systems to run: --system (repeatable) then --systems a,b,c ('all' = every one),
    each made now, so that an unknown name or a configuration its backend cannot serve
    fails before anything runs.

    Options given (summarizer, embedder, bm25_idf, milvus_uri) go to the summary-based systems only."""
    from aqgr.eval.systems.on_backend import split_name
    from aqgr.eval.systems.pipeline import PIPELINE_CONFIGS
    from aqgr.eval.systems.registry import get_system, systems

    wanted = list(names or [])
    for part in (csv or "").split(","):
        part = part.strip()
        if part == "all":  # the baseline, the summary systems, aqgr and its ablations, then any other
            wanted += ["bm25-fulltext", *PIPELINE_CONFIGS, *systems.names()]
        elif part:
            wanted.append(part)
    wanted = list(dict.fromkeys(wanted)) or ["bm25-fulltext"]
    options = {k: v for k, v in pipeline_options.items() if v}
    return [get_system(n, **options) if split_name(n)[0] in PIPELINE_CONFIGS else get_system(n) for n in wanted]


class progress_bar:
    """A rich progress line on stderr for `evaluate`'s progress(what, done, total) callback."""

    def __init__(self, console):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._tasks: dict[str, int] = {}

    def __enter__(self):
        self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self._bar.__exit__(*exc)

    def __call__(self, what: str, done: int, total: int) -> None:
        if what not in self._tasks:
            self._tasks[what] = self._bar.add_task(what, total=total)
        self._bar.update(self._tasks[what], completed=done, total=total)


def _register_subcommands() -> None:
    from aqgr.eval.citebench.cli import build_citation_benchmark_cli

    app.command(
        "build-citation-benchmark",
        help="Build a citation benchmark (queries, qrels, exclusions) from an archive's own citations.",
    )(build_citation_benchmark_cli)


_register_subcommands()


if __name__ == "__main__":
    app()

"""`build-citation-benchmark`: the typer command (registered on the eval CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from aqgr.eval.citebench.build import CitebenchSettings

_DEFAULTS = CitebenchSettings()


def build_citation_benchmark_cli(
    archive: Path = typer.Argument(
        ..., help="An AILA dataset folder (with Object_casedocs/) or any folder of .txt judgments."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder to write the benchmark to (an earlier benchmark there is replaced)."
    ),
    popularity_cap: int = typer.Option(
        _DEFAULTS.popularity_cap,
        min=1,
        help="A link counts only when the cited judgment is cited by at most this many archive judgments.",
    ),
    min_words: int = typer.Option(_DEFAULTS.min_words, min=0, help="Drop queries whose facts have fewer words."),
    max_words: int = typer.Option(
        _DEFAULTS.max_words, min=1, help="Cut the facts to whole sentences within this many words."
    ),
    query_prefix: str = typer.Option(
        _DEFAULTS.query_prefix, help="Prefix of the query ids (QID = prefix + citing judgment id)."
    ),
    statutes: Path = typer.Option(
        None,
        "--statutes",
        help="Statute files (a folder, or a dataset folder holding Object_statutes/): also write qrels_statutes.txt, the statutes each citing judgment quotes.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the stats as JSON on stdout."),
) -> None:
    """Build a tuning benchmark from an archive's own citations (queries.txt, qrels.txt, citing.tsv)."""
    import shlex
    import sys

    from aqgr.eval.citebench import build_citation_benchmark
    from aqgr.foundation.errors import AqgrError

    settings = CitebenchSettings(
        popularity_cap=popularity_cap, min_words=min_words, max_words=max_words, query_prefix=query_prefix
    )
    try:
        bench = build_citation_benchmark(
            archive, out, settings, statutes=statutes, command=shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]])
        )
    except AqgrError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    s = bench.stats
    typer.echo(
        f"{s['links_before_cap']} links found, {s['links_after_cap']} after the popularity cap "
        f"({settings.popularity_cap}); {s['queries']} queries, {s['links']} links "
        f"({s['mean_relevant_per_query']} per query); written to {out}",
        err=True,
    )
    if "statute_queries" in s:
        typer.echo(
            f"statutes: {s['statute_queries']} queries quote {s['statute_links']} statutes ({s['statutes']} statutes)",
            err=True,
        )
    if as_json:
        typer.echo(json.dumps(s, indent=1))


def main() -> None:
    app = typer.Typer(add_completion=False)
    app.command()(build_citation_benchmark_cli)
    app()

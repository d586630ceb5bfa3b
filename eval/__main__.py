"""`python -m eval`: the evaluation command (the same function `aqgr eval` wraps).

Data on stdout (the results as JSON with --json), the table and messages on stderr.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import List, Optional

import typer

app = typer.Typer(add_completion=False, help="FIRE-style evaluation of aqgr systems on AILA-format data.")

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "aila2019"


@app.command()
def main(
    system: List[str] = typer.Option(["bm25-fulltext"], "--system", "-s", help="System name (repeat for several)."),
    protocol: str = typer.Option("aila-cases", help="aila-cases | aila-statutes | study-subset"),
    data: Path = typer.Option(DEFAULT_DATA, help="AILA-format dataset folder."),
    qrels: Optional[Path] = typer.Option(None, help="Qrels file (default: the dataset's own)."),
    docs: Optional[Path] = typer.Option(None, help="Documents folder when the dataset has none."),
    queries: Optional[str] = typer.Option(None, help="Subset: 'Q1-Q10', 'Q1..Q10,Q31', 'all'."),
    out: Optional[Path] = typer.Option(None, help="Report directory."),
    measure: Optional[List[str]] = typer.Option(None, "--measure", "-m", help="Measure (repeat); default: all."),
    depth: int = typer.Option(1000, help="Documents per query in the run."),
    cache_dir: Optional[Path] = typer.Option(None, help="Eval cache (default $AQGR_HOME/cache/eval)."),
    as_json: bool = typer.Option(False, "--json", help="Print the means as JSON on stdout."),
) -> None:
    from rich.console import Console

    from aqgr.errors import AqgrError
    from eval.harness import evaluate_path
    from eval.report import render_table

    err = Console(stderr=True)
    try:
        report = evaluate_path(data, system, protocol, qrels=qrels, docs=docs, queries=queries, out_dir=out,
                               measures=measure or None, depth=depth, cache_dir=cache_dir,
                               command="python -m eval " + shlex.join(sys.argv[1:]))
    except AqgrError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    for warning in report.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}")
    render_table(report, err)
    if as_json:
        typer.echo(json.dumps({"protocol": report.protocol.name, "scored": len(report.scored), "mean": report.table()}, indent=1))
    if out is not None:
        err.print(f"report written to {out}")


if __name__ == "__main__":
    app()

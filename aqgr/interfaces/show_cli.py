"""`aqgr show ID`: a judgment's structured summary with each passage's pinpoint in the judgment
(`--text`: the judgment itself, its paragraph numbers in the margin). Registered by aqgr/interfaces/cli.py."""

from __future__ import annotations

from pathlib import Path

import typer

from aqgr.foundation.console import styled
from aqgr.foundation.errors import AqgrError
from aqgr.interfaces.invocation import DatabaseOption, HomeOption, _err, _fail, _out, open_archive


def show(
    ctx: typer.Context,
    judgment_id: str = typer.Argument(..., help="A judgment id, as in search hits (e.g. C12)."),
    home: Path | None = HomeOption,
    database_url: str | None = DatabaseOption,
    text: bool = typer.Option(
        False, "--text", help="Print the judgment's text with its paragraph numbers in the margin instead."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Machine-readable output on stdout (the summary and the passages' pinpoints)."
    ),
) -> None:
    """A judgment's structured summary, each passage with where it stands in the judgment ("para 12")."""
    from aqgr.foundation.errors import UnknownJudgmentError
    from aqgr.pipeline.pinpoint import judgment_pinpoints, numbered_lines

    archive = open_archive(ctx, home, database_url)
    try:
        if text:
            body = archive.text(judgment_id)
            if not body:
                if archive.summary(judgment_id) is None:
                    raise UnknownJudgmentError(judgment_id)
                _err().print(
                    styled(
                        ("error:", "red"),
                        f" the archive holds no text of {judgment_id!r} (its summary was imported): "
                        "summarise the judgment's file with `aqgr summarize` to keep its text",
                    ),
                    soft_wrap=True,
                )
                raise typer.Exit(2)
            _print_text(body, numbered_lines)
            return
        shown = judgment_pinpoints(judgment_id, archive.summary, archive.text)
    except AqgrError as exc:
        _fail(exc)
    if as_json:
        typer.echo(shown.model_dump_json(indent=2))
    else:
        _print_summary(shown)


def _print_text(body: str, numbered_lines) -> None:
    lines = list(numbered_lines(body))
    if not any(number is not None for number, _ in lines):
        _err().print(styled(("The judgment does not number its paragraphs; printed as it is.", "yellow")))
    out = _out()
    for number, line in lines:
        out.print(styled((f"{number if number is not None else '':>4} | ", "dim"), line), soft_wrap=True)


def _print_summary(shown) -> None:
    from aqgr.pipeline.pinpoint import where
    from aqgr.pipeline.search import parties_line

    s = shown.summary
    out = _out()
    out.print(styled((parties_line(s), "bold"), f"  [{s.judgment_id}]"))
    meta = ", ".join(x for x in (s.case_number, s.court, s.date, s.judgment_kind) if x)
    if meta:
        out.print(f"  {meta}")
    if s.bench:
        out.print(f"  Bench: {', '.join(s.bench)}")
    out.print(
        styled(
            (
                "  summary by "
                + s.provenance.engine
                + (
                    "" if shown.paragraphs_numbered else "; the judgment does not number its paragraphs (offsets given)"
                ),
                "dim",
            )
        )
    )
    for passage in shown.passages:
        out.print(styled("\n", (passage.slot, "cyan"), "  ", (where(passage), "dim" if passage.located else "yellow")))
        out.print(f"  {passage.text}")
    if s.disposed_in_favour_of:
        out.print(styled("\n", ("disposed in favour of", "cyan"), f"  {s.disposed_in_favour_of}"))
    if s.subjects:
        out.print(styled("\n", ("subjects", "cyan"), f"  {', '.join(s.subjects)}"))

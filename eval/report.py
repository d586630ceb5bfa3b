"""Render an EvalReport: a rich table, and a report directory.

    <out>/report.md      comparison table, published reference points beside ours
    <out>/results.json   every measure per query and mean, per system
    <out>/runs/*.run     TREC run files (written by the harness)
    <out>/config.json    protocol, dataset, queries, systems, package versions, time

A report holding one configuration on two index backends (`X` and `X@milvus`) also gives
their agreement (eval/stats/agreement.py): the table's footer, a report.md section and
results.json's `backend_agreement`.
"""

from __future__ import annotations

import json
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from aqgr.eval.protocols import data_file
from aqgr.foundation.files import write_atomic

if TYPE_CHECKING:
    from rich.console import Console

    from aqgr.eval.harness import EvalReport

PACKAGES = (
    "aqgr",
    "ir-measures",
    "pytrec-eval-terrier",
    "rank-bm25",
    "numpy",
    "scipy",
    "nltk",
    "pydantic",
    "rich",
    "typer",
    "faiss-cpu",
    "sentence-transformers",
    "torch",
    "llama-index-core",
)


def reference_points(protocol: str) -> list[dict]:
    """Published numbers for a protocol (eval/data/reference_points.json)."""
    refs = data_file("reference_points.json").get(protocol, [])
    return refs if isinstance(refs, list) else [refs]


def package_versions() -> dict[str, str | None]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def render_table(report: "EvalReport", console: "Console | None" = None) -> None:
    """Print the means with rich: one row per measure, one column per system, then the
    published reference points (dimmed)."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console(stderr=True)
    refs = reference_points(report.protocol.name)
    table = Table(title=f"{report.protocol.name}: {len(report.scored)} scored of {len(report.queries)} queries")
    table.add_column("measure")
    for s in report.systems:
        table.add_column(s.name, justify="right")
    if report.chance:
        table.add_column("[dim]chance[/dim]", justify="right")
    for ref in refs:
        table.add_column(f"[dim]{ref.get('short', ref['label'])}[/dim]", justify="right")
    for m in report.measures:
        table.add_row(
            m,
            *(_fmt(s.results.mean.get(m)) for s in report.systems),
            *([f"[dim]{_fmt(report.chance.get(m))}[/dim]"] if report.chance else []),
            *(f"[dim]{_fmt(ref['values'].get(m))}[/dim]" for ref in refs),
        )
    console.print(table)
    for row in _agreement(report):
        verdict = "[green]within[/green]" if row["within_tolerance"] else "[red]outside[/red]"
        console.print(
            f"{row['variant']} vs {row['base']}: max |Δ| {row['max_abs_delta']:.4f}, "
            f"top-{row['tolerance']['k']} overlap {row['overlap']:.2f}: {verdict} the tolerance"
        )


def _agreement(report: "EvalReport") -> list[dict]:
    from aqgr.eval.stats.agreement import report_agreement

    return report_agreement(report)


def markdown(report: "EvalReport") -> str:
    ms = report.measures
    lines = [
        f"# Evaluation: {report.protocol.name}",
        "",
        report.protocol.description,
        "",
        f"- dataset: `{report.dataset.root}` (documents: `{report.dataset.docs_dir}`, {len(report.dataset.doc_ids)} documents)",
        f"- qrels: `{report.dataset.qrels_path}`",
        f"- queries run: {len(report.queries)}; scored (judged): {len(report.scored)}"
        + (f" ({', '.join(report.scored)})" if len(report.scored) <= 20 else ""),
        f"- exclusions: `{report.dataset.exclude_path}`" if report.dataset.exclude_path else "- exclusions: none",
        f"- depth: {report.depth} documents per query; started {report.started}",
        "",
        "## Results (mean over scored queries)",
        "",
        "| system | " + " | ".join(ms) + " |",
        "| --- | " + " | ".join("---:" for _ in ms) + " |",
    ]
    for s in report.systems:
        lines.append(f"| {s.name} | " + " | ".join(_fmt(s.results.mean.get(m)) for m in ms) + " |")
    if report.chance:
        lines.append("| *chance: a random ranking* | " + " | ".join(_fmt(report.chance.get(m)) for m in ms) + " |")
    refs = reference_points(report.protocol.name)
    for ref in refs:
        lines.append(f"| *published: {ref['label']}* | " + " | ".join(_fmt(ref["values"].get(m)) for m in ms) + " |")
    if refs:
        lines += ["", "Published reference points are other systems on other query sets:"]
        lines += [f"- {r['label']} ({r['queries']}); source: {r['source']}" for r in refs]
    lines += [
        "",
        "Measures: ranked ones are trec_eval's via ir-measures (AP = MAP when averaged); SetP/SetR are the "
        'AQgR study\'s rank-free set precision/recall (its "MAP"/"MAR") of the system\'s own returned set, '
        "SetP@k/SetR@k of the top k. Queries without judgments are not scored; a judged query with no "
        "returned documents scores 0. Bpref counts judged non-relevant documents only: with qrels that list "
        "relevant documents alone (the citebench) it equals the recall of the whole run. Chance: the expected "
        "value for a uniformly random ordering of each query's candidates (eval/stats/chance.py; none for Bpref and "
        "SetR): a system near it ranks no better than shuffling.",
        "",
        "## Timing",
        "",
        "| system | prepare (s) | rank (s) | run file |",
        "| --- | ---: | ---: | --- |",
    ]
    for s in report.systems:
        run = s.run_file.relative_to(report.out_dir) if s.run_file and report.out_dir else s.run_file
        lines.append(f"| {s.name} | {s.prepare_s:.1f} | {s.rank_s:.1f} | `{run}` |")
    rows = _agreement(report)
    if rows:
        tol = rows[0]["tolerance"]
        lines += [
            "",
            "## Backend agreement",
            "",
            f"The same configuration on two index backends (eval/stats/agreement.py). Tolerance: every mean of "
            f"{', '.join(m for m in tol['held'] if m in ms)} within {tol['measure']} absolute, mean top-{tol['k']} "
            f"overlap of the rankings at least {tol['overlap']}.",
            "",
            "| variant | base | "
            + " | ".join(f"Δ{m}" for m in ms)
            + f" | overlap@{tol['k']} | min overlap@{tol['k']} | returned Jaccard | within |",
            "| --- | --- | " + " | ".join("---:" for _ in ms) + " | ---: | ---: | ---: | --- |",
        ]
        for row in rows:
            lines.append(
                f"| {row['variant']} | {row['base']} | "
                + " | ".join(f"{row['delta'].get(m, 0.0):+.4f}" for m in ms)
                + f" | {row['overlap']:.4f} | {row['min_overlap']:.4f} | {row['returned_jaccard']:.4f} | "
                + ("yes" if row["within_tolerance"] else "**no**")
                + " |"
            )
    if report.warnings:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in report.warnings]
    return "\n".join(lines) + "\n"


def results_dict(report: "EvalReport") -> dict:
    return {
        "protocol": report.protocol.name,
        "dataset": str(report.dataset.root),
        "queries": report.queries,
        "scored_queries": report.scored,
        "measures": list(report.measures),
        "systems": {
            s.name: {
                "mean": s.results.mean,
                "per_query": s.results.per_query,
                "returned": s.returned,
                "run_file": s.run_file.name if s.run_file else None,
                "dropped_hits": s.dropped,
            }
            for s in report.systems
        },
        "chance": report.chance,
        **({"backend_agreement": rows} if (rows := _agreement(report)) else {}),
    }


def config_dict(report: "EvalReport", command: str | None = None) -> dict:
    return {
        "started": report.started,
        "command": command,
        "protocol": report.protocol.to_dict(),
        "dataset": report.dataset.describe(),
        "queries": report.queries,
        "depth": report.depth,
        "measures": list(report.measures),
        "systems": {s.name: s.config for s in report.systems},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
    }


def write_report(report: "EvalReport", out_dir: str | Path, *, command: str | None = None) -> Path:
    """Write report.md, results.json and config.json into `out_dir` (run files are already there)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _atomic(out / "results.json", json.dumps(results_dict(report), indent=1) + "\n")
    _atomic(out / "config.json", json.dumps(config_dict(report, command), indent=1, default=str) + "\n")
    _atomic(out / "report.md", markdown(report))
    return out


def _atomic(path: Path, text: str) -> None:
    write_atomic(path, text)

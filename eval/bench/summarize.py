"""Benchmark the summarizer over an AILA-format archive: speed, validity, slot fill.

    python -m aqgr.eval.bench.summarize --data ../shared/datasets/aila2019 [--limit N] [--engine extractive.v1]

Runs the engine over every judgment in `Object_casedocs`, validates every summary
against the JSON Schema, and prints one JSON object to stdout: wall time, documents
per second, summary sizes, failures, and the share of summaries with each slot filled.
Messages go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import aqgr.summarizer.extractive.engine  # noqa: F401  (registers extractive.v1 before summarizer.base is used)
from aqgr.schemas.summary import Provenance, StructuredSummary
from aqgr.schemas.validation import validate_summary
from aqgr.summarizer.base import JudgmentText, summarizers
from aqgr.summarizer.readers import read_judgment

SLOTS = (
    "court",
    "case_number",
    "judgment_kind",
    "appellants",
    "respondents",
    "date",
    "bench",
    "facts",
    "arguments",
    "issues",
    "reasoning",
    "issues_or_reasoning",
    "disposed_in_favour_of",
    "final_judgment",
    "statutes",
    "precedents",
    "new_principles",
    "subjects",
)


def _filled(summary: StructuredSummary) -> dict[str, bool]:
    return {
        "court": bool(summary.court),
        "case_number": bool(summary.case_number),
        "judgment_kind": bool(summary.judgment_kind),
        "appellants": bool(summary.parties.appellants),
        "respondents": bool(summary.parties.respondents),
        "date": bool(summary.date),
        "bench": bool(summary.bench),
        "facts": bool(summary.facts),
        "arguments": bool(summary.arguments.appellants or summary.arguments.respondents),
        "issues": bool(summary.issues),
        "reasoning": bool(summary.reasoning),
        "issues_or_reasoning": bool(summary.issues or summary.reasoning),
        "disposed_in_favour_of": bool(summary.disposed_in_favour_of),
        "final_judgment": bool(summary.final_judgment),
        "statutes": bool(summary.statutes),
        "precedents": bool(summary.precedents),
        "new_principles": bool(summary.new_principles),
        "subjects": bool(summary.subjects),
    }


def summarize_one(args: tuple[str, str]) -> dict:
    """Summarise and validate one file; the outcome as a plain dict (never raises)."""
    path, engine_name = args
    engine = summarizers.create(engine_name)
    started = time.perf_counter()
    try:
        text, sha = read_judgment(Path(path))
        slots = engine.summarize(JudgmentText(Path(path).stem, text, path, sha))
        provenance = Provenance(engine=engine.name, engine_version=engine.version, source_sha256=sha)
        summary = validate_summary(StructuredSummary.from_slots(Path(path).stem, slots, provenance))
    except Exception as exc:  # recorded per judgment, as in a batch
        return {
            "id": Path(path).stem,
            "error": f"{type(exc).__name__}: {exc}",
            "seconds": time.perf_counter() - started,
        }
    size = len(summary.slots().model_dump_json())
    return {
        "id": summary.judgment_id,
        "filled": _filled(summary),
        "chars": size,
        "seconds": time.perf_counter() - started,
    }


def run(data: Path, *, limit: int | None = None, engine: str = "extractive.v1", workers: int | None = None) -> dict:
    folder = data / "Object_casedocs"
    paths = sorted(folder.glob("*.txt"), key=lambda p: (len(p.stem), p.stem))[:limit]
    if not paths:
        raise SystemExit(f"no judgments (*.txt) in {folder}")
    workers = workers or min(len(paths), os.cpu_count() or 1)
    started = time.perf_counter()
    jobs = [(str(p), engine) for p in paths]
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(summarize_one, jobs, chunksize=16))
    else:
        results = [summarize_one(job) for job in jobs]
    wall = time.perf_counter() - started
    ok = [r for r in results if "filled" in r]
    sizes = sorted(r["chars"] for r in ok)
    return {
        "engine": engine,
        "documents": len(results),
        "valid": len(ok),
        "failures": [{"id": r["id"], "error": r["error"]} for r in results if "error" in r],
        "workers": workers,
        "wall_seconds": round(wall, 2),
        "docs_per_second": round(len(results) / wall, 1),
        "slowest": sorted(
            ({"id": r["id"], "seconds": round(r["seconds"], 3)} for r in results), key=lambda r: -r["seconds"]
        )[:3],
        "summary_chars": {"median": sizes[len(sizes) // 2], "p95": sizes[int(len(sizes) * 0.95)], "max": sizes[-1]}
        if sizes
        else {},
        "filled_share": {slot: round(sum(r["filled"][slot] for r in ok) / max(1, len(ok)), 3) for slot in SLOTS},
        "missing": {
            slot: [r["id"] for r in ok if not r["filled"][slot]][:15]
            for slot in ("appellants", "facts", "issues_or_reasoning", "final_judgment")
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.summarize", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path("../shared/datasets/aila2019"), help="AILA-format dataset folder"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N judgments (C1, C2, ...)")
    parser.add_argument("--engine", default="extractive.v1")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: one per CPU)")
    args = parser.parse_args(argv)
    print(f"summarising {args.data / 'Object_casedocs'} with {args.engine} ...", file=sys.stderr)
    report = run(args.data, limit=args.limit, engine=args.engine, workers=args.workers)
    print(f"{report['valid']}/{report['documents']} valid in {report['wall_seconds']}s", file=sys.stderr)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0 if not report["failures"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

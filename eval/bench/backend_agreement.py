"""Does the Milvus backend give the embedded backend's numbers? Same documents, same slots.

    python -m aqgr.eval.bench.backend_agreement sample [--systems aqgr-no-fulltext,ensemble-summary] [--embedder minilm-l6.v1]
    python -m aqgr.eval.bench.backend_agreement aila [--protocol aila-cases|study-subset] [--queries Q1-Q10] [--systems ...]

Each named system runs through the eval harness twice, as `NAME` (embedded backend) and
`NAME@milvus` (the same summaries, IndexSpec and search options served by Milvus;
eval/systems/on_backend.py), and eval/stats/agreement.py compares the two: the difference of every mean
measure, the mean top-10 overlap of the rankings, the Jaccard overlap of the returned
sets, and whether they lie within its stated tolerance. The same comparison appears in
any `python -m aqgr.eval` report that lists `NAME` and `NAME@milvus`.

`sample`: datasets/sample (17 judgments, 6 scenarios with their relevant judgments) as an
eval dataset (queries and qrels written from scenarios.json); adds hit@3, the share of
scenarios whose relevant judgments are all in the returned top 3 (as
tests/aqgr/test_sample_end_to_end.py asks of a search).
`aila`: the AILA data (default ../shared/datasets/aila2019) under a protocol; summaries,
indexes and embeddings come from the eval cache (`--cache-dir`), so a rerun costs only
the retrieval (the Milvus index is built once from the cached embeddings).

Only configurations without the `fulltext` retriever can run on Milvus, which has none
(aqgr's default has it: compare `aqgr-no-fulltext`, which equals `aqgr` minus it).
milvus-lite stands in for a Milvus server. Prints a JSON report on stdout.

Both backends use Lucene's idf (IndexSpec's default, the one Milvus computes; Milvus refuses
`--bm25-idf okapi`, rank-bm25's floored idf, which only the embedded backend has).

Measured (milvus-lite 3.2.2, MiniLM, extractive.v1; tolerance of eval/stats/agreement.py:
every reported mean within 0.02 absolute, mean top-10 overlap at least 0.8):

    python -m aqgr.eval.bench.backend_agreement sample                       # hit@3 1.0 / 1.0, all deltas 0,
                                                               # overlap 0.98 (aqgr-no-fulltext), 0.97 (ensemble)
    python -m aqgr.eval.bench.backend_agreement aila --queries Q1-Q10 --cache-dir /tmp/aqgr-eval-cache --bm25-idf lucene
        # overlap 0.96 (bm25-summary) to 1.00 (dense-summary), max delta 0.0001: within
    python -m aqgr.eval.bench.backend_agreement aila --protocol study-subset --cache-dir /tmp/aqgr-eval-cache --bm25-idf lucene
        # overlap 0.96 to 1.00, max delta 0.0067 (AP, aqgr-no-fulltext); SetP/SetR equal: within
    (when the embedded default was rank-bm25's okapi idf: overlap 0.70-0.82 on the dev split,
     0.77-0.87 on the study subset, deltas up to 0.05 / 0.13: outside; dense-summary identical)

Full table and causes: docs/experiments/2026-11-30-milvus-backend-agreement.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from aqgr.foundation.paths import SAMPLE, shared_datasets

SAMPLE = SAMPLE
AILA = shared_datasets() / "aila2019"
SAMPLE_MEASURES = ("AP", "P@3", "R@3", "RR", "P@10", "SetP", "SetR")
AILA_MEASURES = ("AP", "P@10", "RR", "R@100", "nDCG@10", "SetP", "SetR")


def sample_dataset(directory: Path) -> Path:
    """datasets/sample as an AILA-shaped dataset: queries.txt and qrels.txt in `directory`
    (written from scenarios.json); the documents stay in datasets/sample/judgments."""
    scenarios = json.loads((SAMPLE / "scenarios.json").read_text(encoding="utf-8"))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "queries.txt").write_text(
        "".join(f"{s['id']}||{' '.join(s['facts'].split())}\n" for s in scenarios), encoding="utf-8"
    )
    (directory / "qrels.txt").write_text(
        "".join(f"{s['id']} Q0 {doc} 1\n" for s in scenarios for doc in s["relevant"]), encoding="utf-8"
    )
    return directory


def compare(
    dataset,
    names,
    protocol,
    *,
    queries=None,
    measures,
    cache_dir,
    embedder=None,
    bm25_idf=None,
    milvus_uri=None,
    out_dir=None,
) -> dict:
    """Run each name and name@milvus through the harness; the means and their agreement."""
    from aqgr.eval.harness import evaluate
    from aqgr.eval.stats.agreement import report_agreement
    from aqgr.eval.systems.registry import get_system

    options = {k: v for k, v in {"embedder": embedder, "bm25_idf": bm25_idf}.items() if v}
    where = {"milvus_uri": milvus_uri} if milvus_uri else {}
    systems = [
        s for name in names for s in (get_system(name, **options), get_system(f"{name}@milvus", **options, **where))
    ]
    report = evaluate(dataset, systems, protocol, queries, out_dir, measures=measures, cache_dir=cache_dir)
    return {
        "protocol": report.protocol.name,
        "queries": len(report.scored),
        "measures": {s.name: {m: round(v, 4) for m, v in s.results.mean.items()} for s in report.systems},
        "agreement": [{k: v for k, v in row.items() if k != "overlap_per_query"} for row in report_agreement(report)],
        "_report": report,
    }


def sample_report(
    names, embedder: str | None, cache_dir: Path, out_dir: Path | None = None, bm25_idf: str | None = None
) -> dict:
    from aqgr.eval.datasets import load_dataset

    dataset = load_dataset(sample_dataset(cache_dir / "sample-dataset"), docs=SAMPLE / "judgments")
    result = compare(
        dataset,
        names,
        "aila-cases",
        queries="all",
        measures=SAMPLE_MEASURES,
        cache_dir=cache_dir,
        embedder=embedder,
        bm25_idf=bm25_idf,
        out_dir=out_dir,
    )
    report = result.pop("_report")
    result["hit@3"] = {s.name: round(_hit_at(s, dataset.qrels, 3), 4) for s in report.systems}
    return result


def _hit_at(system, qrels, k: int) -> float:
    """Share of queries whose relevant documents all lie in the first k returned (else ranked) documents."""
    hits = []
    for qid, judged in qrels.items():
        top = (system.returned.get(qid) or [d for d, _ in system.run.get(qid, [])])[:k]
        hits.append(float({d for d, r in judged.items() if r > 0} <= set(top)))
    return sum(hits) / len(hits) if hits else 0.0


def aila_report(
    names,
    protocol: str,
    queries: str | None,
    data: Path,
    cache_dir: Path | None,
    embedder: str | None,
    milvus_uri: str | None = None,
    out_dir: Path | None = None,
    bm25_idf: str | None = None,
) -> dict:
    from aqgr.eval.datasets import load_dataset

    dataset = load_dataset(data)
    result = compare(
        dataset,
        names,
        protocol,
        queries=queries,
        measures=AILA_MEASURES,
        cache_dir=cache_dir,
        embedder=embedder,
        bm25_idf=bm25_idf,
        milvus_uri=milvus_uri,
        out_dir=out_dir,
    )
    result.pop("_report")
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m aqgr.eval.bench.backend_agreement", description=__doc__.split("\n")[0]
    )
    parser.add_argument("what", choices=["sample", "aila"])
    parser.add_argument(
        "--systems",
        default=None,
        help="comma-separated systems without fulltext (sample default: aqgr-no-fulltext,ensemble-summary; "
        "aila: bm25-summary,dense-summary,ensemble-summary,aqgr-no-fulltext)",
    )
    parser.add_argument("--embedder", default=None, help="default minilm-l6.v1")
    parser.add_argument(
        "--bm25-idf", default=None, help="lucene (the default, Milvus's own idf) or okapi (embedded only)"
    )
    parser.add_argument("--cache-dir", type=Path, default=None, help="eval cache (sample default: a temporary folder)")
    parser.add_argument("--protocol", default="aila-cases", help="aila: aila-cases | study-subset")
    parser.add_argument("--queries", default=None, help="aila: a subset, e.g. Q1-Q10 (default: the protocol's)")
    parser.add_argument("--data", type=Path, default=AILA, help="aila: the AILA-format dataset")
    parser.add_argument(
        "--milvus-uri", default=None, help="a Milvus server URL or milvus-lite path (default: in the archive home)"
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the harness report (report.md, runs) here")
    args = parser.parse_args(argv)
    from aqgr.foundation.errors import AqgrError

    try:
        if args.what == "sample":
            names = _names(args.systems, "aqgr-no-fulltext,ensemble-summary")
            if args.cache_dir is None:
                import tempfile

                with tempfile.TemporaryDirectory(prefix="aqgr-backends-") as tmp:
                    report = sample_report(names, args.embedder, Path(tmp), args.out, args.bm25_idf)
            else:
                report = sample_report(names, args.embedder, args.cache_dir, args.out, args.bm25_idf)
        else:
            names = _names(args.systems, "bm25-summary,dense-summary,ensemble-summary,aqgr-no-fulltext")
            report = aila_report(
                names,
                args.protocol,
                args.queries,
                args.data,
                args.cache_dir,
                args.embedder,
                args.milvus_uri,
                args.out,
                args.bm25_idf,
            )
    except AqgrError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


def _names(csv: str | None, default: str) -> list[str]:
    return [n.strip() for n in (csv or default).split(",") if n.strip()]


if __name__ == "__main__":
    raise SystemExit(main())

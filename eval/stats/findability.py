"""Can a query's relevance judgments be found from its own text at all?

    python -m aqgr.eval.stats.findability [--data PATH] [--protocol aila-cases] [--system bm25-fulltext]

Ranks the corpus once with every query's text (one system, default `bm25-fulltext`), then
scores each judged query's relevant set against every one of those rankings. Where the
judgments follow from the texts, a query's own text reaches its relevant documents better
than the other queries' texts do (own rank 1) and far above chance. Where they do not, as
on the AILA 2019 dev split, no text of the dataset reaches them, and a ratio between two
systems there measures noise. Prints JSON: per judged query its own AP, the best AP any
text gives and which text, its own text's rank among all texts, and the chance level
(eval/stats/chance.py); then the means. Exit 2 with a message on bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer


def findability(
    data: Path,
    *,
    protocol: str = "aila-cases",
    system: str = "bm25-fulltext",
    qrels: Path | None = None,
    docs: Path | None = None,
    queries: str | None = None,
    cache_dir: Path | None = None,
    depth: int = 1000,
) -> dict:
    """The report described in the module; `queries`: which judged queries to score (a
    selection as `python -m aqgr.eval --queries` takes; default: the protocol's)."""
    from aqgr.eval.datasets import load_dataset
    from aqgr.eval.measures import compute
    from aqgr.eval.protocols import get_protocol
    from aqgr.eval.stats.chance import chance_per_query
    from aqgr.eval.systems.registry import get_system

    proto = get_protocol(protocol)
    dataset = load_dataset(data, qrels, proto.kind, docs=docs)
    judgments = proto.qrels(dataset)
    texts = proto.select(dataset, "all")
    judged = [q for q in proto.select(dataset, queries) if q in judgments]
    restrict = proto.restrict(dataset)
    ranker = get_system(system)
    ranker.prepare(dataset, cache_dir=cache_dir)
    rankings = {
        t: [
            (d, s)
            for d, s in ranker.rank(t, dataset.queries[t], depth=depth, restrict=restrict)
            if restrict is None or d in restrict
        ]
        for t in texts
    }
    ranked_docs = {t: {d for d, _ in ranking} for t, ranking in rankings.items()}
    chance_ap = chance_per_query(
        ["AP"], judgments, judged, dataset.doc_ids, depth=depth, restrict=restrict, exclude=dataset.exclude
    )["AP"]
    per_query = {}
    for q in judged:
        exclude = dataset.exclude.get(q, frozenset())
        runs = {
            t: [(d, s) for d, s in ranking if d not in exclude] if exclude & ranked_docs[t] else ranking
            for t, ranking in rankings.items()
        }
        ap = compute({t: judgments[q] for t in texts}, runs, ["AP"]).per_query["AP"]
        best = max(texts, key=lambda t: (ap[t], t == q))  # the own text wins a tie
        per_query[q] = {
            "own_ap": ap[q],
            "best_ap": ap[best],
            "best_text": best,
            "own_rank": 1 + sum(ap[t] > ap[q] for t in texts),
            "chance_ap": chance_ap[q],
        }
    n = len(per_query) or 1
    return {
        "protocol": proto.name,
        "dataset": str(dataset.root),
        "system": system,
        "texts": len(texts),
        "judged_queries": len(per_query),
        "mean_own_ap": sum(v["own_ap"] for v in per_query.values()) / n,
        "mean_best_ap": sum(v["best_ap"] for v in per_query.values()) / n,
        "mean_chance_ap": sum(v["chance_ap"] for v in per_query.values()) / n,
        "own_text_best": sum(v["own_rank"] == 1 for v in per_query.values()),
        # 0: every query's own text reaches its judgments best; about 0.5: no better than any other text
        "mean_own_rank_fraction": sum((v["own_rank"] - 1) / max(len(texts) - 1, 1) for v in per_query.values()) / n,
        "per_query": per_query,
    }


def main(
    data: Path = typer.Option(Path("../shared/datasets/aila2019"), "--data", help="AILA-format dataset folder."),
    protocol: str = typer.Option("aila-cases", "--protocol", help="aila-cases | aila-statutes | study-subset"),
    system: str = typer.Option("bm25-fulltext", "--system", help="The system whose rankings are used."),
    qrels: Path | None = typer.Option(None, "--qrels", help="Qrels file (default: the dataset's own)."),
    docs: Path | None = typer.Option(None, "--docs", help="Documents folder when the dataset has none."),
    queries: str | None = typer.Option(None, "--queries", help="Judged queries to score: 'Q1-Q10', 'all'."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Eval cache (indexes)."),
) -> None:
    """Whether each judged query's relevant documents can be reached from its own text.

    The JSON on stdout; an AqgrError on stderr as "error: ...", exit 2 (the benchmarks' convention,
    eval/bench/common.py `print_result`, written out here: the statistics sit below the benchmarks)."""
    from aqgr.foundation.errors import AqgrError

    try:
        result = findability(
            data, protocol=protocol, system=system, qrels=qrels, docs=docs, queries=queries, cache_dir=cache_dir
        )
    except AqgrError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    typer.run(main)

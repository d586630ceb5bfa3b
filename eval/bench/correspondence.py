"""Old and new codes as one, measured: passages of real judgments rewritten into the new code.

    python -m aqgr.eval.bench.correspondence [--per-judgment 0] [--passages 0] [--work reports/correspondence]
                                             [--tables $AQGR_DATASETS/statute-correspondence]

Few AILA queries name a section (2 of 50), so the measure is built from the corpus. Each AILA
judgment (Object_casedocs) is read paragraph by paragraph (its non-empty lines); each
paragraph that names a section of an old code of the tables (IPC, CrPC, Evidence Act), of
the first --per-judgment such paragraphs (0, the default: all of them), gives a passage:
from the sentence before the first such sentence, sentences up to PASSAGE_WORDS words (at
most MAX_WORDS). A passage is kept when every old-code reference in it has a counterpart in
the table (`Correspondence.rewrite` leaves none); judgments are taken in the order of a
stable hash of their id (never file order) until there are --passages (0, the default: all).
`--per-judgment 1 --passages 400` is the first setting: the first naming paragraph of each
judgment or none, 400 judgments. A query is "<judgment>/<passage number>"; queries of one
judgment are not independent, so the intervals below draw judgments, not queries. Each
passage is rewritten mechanically into the new code (aqgr/pipeline/correspondence.py: "Sections
302/34 IPC" -> "Sections 103(1) and 3(5) BNS", "Section 32 of the Evidence Act" -> "Section
26 of the Bharatiya Sakshya Adhiniyam, 2023"; the codes' names elsewhere too: "(in short
'IPC')" -> "(in short 'BNS')").

Four queries per passage: the original; the rewritten one as it is (no table); the
rewritten one expanded with the table (`Correspondence.expand`, what a search does with a
table loaded: each counterpart written as the reference was, short or long); the same with
both forms of each counterpart (`both_forms=True`). Two runs:

* known item: the target is the passage's own judgment;
* cited: the passage's judgment excluded, the targets are the judgments of the archive it
  cites (aqgr.retrieval.citations.links.find_links over the whole corpus, distinct pairs);
  only passages whose judgment cites at least one.

Retriever: the product's full-text BM25 (`fulltext`: the judgments' texts with word pairs,
tantivy.v1, the default spec), in an index built once into --work with the hashing embedder
(`hashing.v1`, the judgments' first line as the only summary field: the dense and summary
retrievers are not queried). The machine this was written on was shared by several agents;
the full pipeline (question generation, fusion) was not run. Measures (ir-measures): RR (MRR),
R@10, AP (MAP), means over the queries of each run, with each condition's ratio to the
original and a paired comparison: queries better / worse, the Wilcoxon p over the queries
and over the judgments' mean differences, and the ratio's 95% interval from a paired
bootstrap that draws judgments (aqgr/eval/stats/bootstrap.py, seeded). results.json,
per_query.json and passages.jsonl in --work; the citation links and the index are kept there
and reused.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from aqgr.foundation.paths import shared_datasets

PASSAGE_WORDS = 60  # a passage grows sentence by sentence until it has this many words
MAX_WORDS = 120
DEPTH = 100  # how deep each query's ranking is read
PER_JUDGMENT = 0  # naming paragraphs read per judgment (0: all); 1 is the first setting, one passage a judgment
PASSAGES = 0  # most passages in all (0: every one; the first setting took 400)
CONDITIONS = ("original", "rewritten", "rewritten+table", "rewritten+table, both forms")
RETRIEVER = "fulltext"


def passages_of(paragraphs: list[str], table, most: int = 0) -> list[tuple[str, str]]:
    """(passage, rewritten passage) from each of the first `most` paragraphs (every one with 0)
    that name an old-code section, those whose every reference has a counterpart."""
    from aqgr.summarizer.sentences import split_sentences

    out: list[tuple[str, str]] = []
    naming = 0
    for paragraph in paragraphs:
        if most and naming >= most:
            break
        refs = [r for r in table.find(paragraph) if table.is_old(r.code)]
        if not refs:
            continue
        sentences = split_sentences(paragraph)
        first = next((i for i, s in enumerate(sentences) if any(table.is_old(r.code) for r in table.find(s))), None)
        if first is None:
            continue
        naming += 1
        start = max(0, first - 1)
        chosen: list[str] = []
        for sentence in sentences[start:]:
            if chosen and len(" ".join(chosen + [sentence]).split()) > MAX_WORDS:
                break
            chosen.append(sentence)
            if len(" ".join(chosen).split()) >= PASSAGE_WORDS:
                break
        passage = " ".join(chosen)
        rewritten, done, left = table.rewrite(passage)
        if done and not left:
            out.append((passage, rewritten))
    return out


def passage_of(paragraphs: list[str], table) -> tuple[str, str] | None:
    """(passage, rewritten passage) from the first paragraph naming an old-code section, or None
    (when that paragraph has a reference without a counterpart): the one-per-judgment setting."""
    found = passages_of(paragraphs, table, 1)
    return found[0] if found else None


def build_passages(
    texts: dict[str, str], table, n: int, per_judgment: int = PER_JUDGMENT
) -> dict[str, list[tuple[str, str]]]:
    """judgment id -> its passages [(passage, rewritten)] (`passages_of`, at most `per_judgment`
    naming paragraphs each, 0: all), judgments taken by a stable hash of the id until there are
    `n` passages (the last judgment's cut to fit; 0: every judgment)."""
    from aqgr.retrieval.types import id_hash

    out: dict[str, list[tuple[str, str]]] = {}
    total = 0
    for doc_id in sorted(texts, key=id_hash):
        if n and total >= n:
            break
        found = passages_of([line.strip() for line in texts[doc_id].splitlines() if line.strip()], table, per_judgment)
        if found:
            out[doc_id] = found[: n - total] if n else found
            total += len(out[doc_id])
    return out


def citations(docs_dir: Path, doc_ids, cache: Path | None = None) -> dict[str, set[str]]:
    """citing judgment -> the judgments of the corpus it cites (kept in `cache`, a JSON file, once found)."""
    from aqgr.retrieval.citations.judgments import read_archive
    from aqgr.retrieval.citations.links import find_links

    if cache is not None and cache.exists():
        return {k: set(v) for k, v in json.loads(cache.read_text(encoding="utf-8")).items()}
    cited: dict[str, set[str]] = {}
    for link in find_links(read_archive(docs_dir, doc_ids)):
        cited.setdefault(link.citing, set()).add(link.cited)
    if cache is not None:
        cache.write_text(json.dumps({k: sorted(v) for k, v in cited.items()}), encoding="utf-8")
    return cited


def paired(scores: dict[str, float], base: dict[str, float], clusters: dict[str, str]) -> dict:
    """Per-query differences against the original: queries better / worse, the Wilcoxon
    signed-rank p-value over the queries that differ, the same over the judgments' mean
    differences (queries of one judgment are not independent), and the ratio of the means
    with its paired bootstrap interval drawn by judgment (aqgr.eval.stats.bootstrap)."""
    from scipy.stats import wilcoxon

    from aqgr.eval.stats.bootstrap import ratio_interval

    def p_of(diffs: list[float]):
        return float(f"{wilcoxon(diffs).pvalue:.2g}") if diffs else None

    diffs = [scores[q] - base[q] for q in base if scores[q] != base[q]]
    by_judgment: dict[str, list[float]] = {}
    for q in base:
        by_judgment.setdefault(clusters[q], []).append(scores[q] - base[q])
    judgment_diffs = [sum(d) / len(d) for d in by_judgment.values() if sum(d)]
    ratio = ratio_interval(scores, base, clusters)
    return {
        "better": sum(d > 0 for d in diffs),
        "worse": sum(d < 0 for d in diffs),
        "wilcoxon_p": p_of(diffs),
        "wilcoxon_p_judgments": p_of(judgment_diffs),
        "ratio_ci95": [round(ratio["low"], 4), round(ratio["high"], 4)] if ratio["low"] is not None else None,
    }


def open_index(work: Path, texts: dict[str, str]):
    """The full-text index of the corpus in `work/index`, built once (hashing embedder)."""
    from aqgr.foundation.errors import AqgrError
    from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex

    spec = IndexSpec(embedder="hashing.v1")
    directory = work / "index"
    try:
        return SummaryIndex.load(directory, expect=spec), 0.0
    except AqgrError:
        pass
    import shutil

    shutil.rmtree(directory, ignore_errors=True)
    ids = sorted(texts)
    heads = {i: {"title": (texts[i].strip().splitlines() or [""])[0]} for i in ids}
    started = time.perf_counter()
    index = SummaryIndex.from_texts(ids, heads, spec, full_texts=texts)
    index.save(directory)
    return index, time.perf_counter() - started


def rankings(index, queries: dict[str, str], own: dict[str, str], cited: set[str]) -> tuple[dict, dict]:
    """(known-item run, cited run): each query's top DEPTH, and for the queries in `cited` the
    top DEPTH with the query's own judgment (`own[q]`) dropped. One search per query: the
    index drops an excluded judgment from its ranking after scoring (SummaryIndex._run), so
    reading one deeper and dropping it here gives the same ranking."""
    known, excluded = {}, {}
    for qid, query in queries.items():
        hits = [(d.doc_id, d.score) for d in index.retrieve(query, DEPTH + 1, retrievers=[RETRIEVER])[RETRIEVER]]
        known[qid] = hits[:DEPTH]
        if qid in cited:
            excluded[qid] = [h for h in hits if h[0] != own[qid]][:DEPTH]
    return known, excluded


def run(
    work: Path, tables: Path, n: int = PASSAGES, per_judgment: int = PER_JUDGMENT, datasets: Path | None = None
) -> dict:
    from aqgr.eval.measures import compute
    from aqgr.pipeline.correspondence import load_tables

    root = (datasets or shared_datasets()) / "aila2019" / "Object_casedocs"
    work.mkdir(parents=True, exist_ok=True)
    texts = {p.stem: p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.glob("*.txt"))}
    table = load_tables([tables])
    by_judgment = build_passages(texts, table, n, per_judgment)
    # A query is one passage: "<judgment>/<its number in the judgment>"; the judgment is its cluster.
    passages = {f"{d}/{i}": found for d, found_all in by_judgment.items() for i, found in enumerate(found_all, 1)}
    own = {q: q.rsplit("/", 1)[0] for q in passages}
    started = time.perf_counter()
    cited = citations(root, sorted(texts), work / "citations.json")
    links_s = time.perf_counter() - started
    index, build_s = open_index(work, texts)
    queries = {
        "original": {q: p for q, (p, _) in passages.items()},
        "rewritten": {q: r for q, (_, r) in passages.items()},
        "rewritten+table": {q: table.expand(r) for q, (_, r) in passages.items()},
        "rewritten+table, both forms": {q: table.expand(r, both_forms=True) for q, (_, r) in passages.items()},
    }
    known_qrels = {q: {own[q]: 1} for q in passages}
    cited_qrels = {q: {c: 1 for c in cited[own[q]]} for q in passages if cited.get(own[q])}
    measures = ("RR", "R@10", "AP")
    results: dict = {"known_item": {}, "cited": {}}
    per_query: dict = {"known_item": {}, "cited": {}}
    started = time.perf_counter()
    for condition in CONDITIONS:
        known, excluded = rankings(index, queries[condition], own, set(cited_qrels))
        for name, qrels, run_ in (("known_item", known_qrels, known), ("cited", cited_qrels, excluded)):
            scores = compute(qrels, run_, measures)
            results[name][condition] = {m: round(v, 4) for m, v in scores.mean.items()}
            per_query[name][condition] = scores.per_query
    search_s = time.perf_counter() - started
    for name in ("known_item", "cited"):
        base = results[name]["original"]
        for condition in CONDITIONS[1:]:
            results[name][f"{condition} / original"] = {
                m: round(results[name][condition][m] / base[m], 4) if base[m] else None for m in measures
            }
            results[name][f"{condition} vs original, paired"] = {
                m: paired(per_query[name][condition][m], per_query[name]["original"][m], own) for m in measures
            }
    refs = sum(len(table.find(p)) for p, _ in passages.values())
    example_id, example = next(iter(passages.items()))
    report = {
        "passages": len(passages),
        "judgments": len(by_judgment),
        "per_judgment": per_judgment or "all",
        "references_in_passages": refs,
        "cited_queries": len(cited_qrels),
        "cited_judgments": len({own[q] for q in cited_qrels}),
        "cited_targets": sum(len(v) for v in cited_qrels.values()),
        "retriever": f"{RETRIEVER} (tantivy.v1, word pairs; index of {len(texts)} AILA judgments, hashing.v1 embedder)",
        "depth": DEPTH,
        "results": results,
        "seconds": {
            "index_build": round(build_s, 1),
            "citation_links": round(links_s, 1),
            "search": round(search_s, 1),
        },
        "example": {
            "query": example_id,
            "original": example[0],
            "rewritten": example[1],
            "expanded_tail": queries["rewritten+table"][example_id][len(example[1]) :],
        },
        "table_rows": len(table),
    }
    (work / "results.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    (work / "per_query.json").write_text(json.dumps(per_query), encoding="utf-8")
    (work / "passages.jsonl").write_text(
        "".join(
            json.dumps({"query": q, "judgment": own[q], "original": p, "rewritten": r}) + "\n"
            for q, (p, r) in passages.items()
        ),
        encoding="utf-8",
    )
    return report


def main(argv: list[str] | None = None) -> int:
    from aqgr.eval.bench.common import print_result

    parser = argparse.ArgumentParser(
        prog="python -m aqgr.eval.bench.correspondence", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--passages", type=int, default=PASSAGES, help="most passages in all (0: every one)")
    parser.add_argument(
        "--per-judgment",
        type=int,
        default=PER_JUDGMENT,
        help="naming paragraphs read per judgment, each a passage when it maps (0: all; "
        "1 with --passages 400: the first setting, one passage a judgment)",
    )
    parser.add_argument(
        "--work", type=Path, default=Path("reports/correspondence"), help="index, results.json, passages.jsonl"
    )
    parser.add_argument(
        "--tables",
        type=Path,
        default=None,
        help="correspondence tables (default $AQGR_DATASETS/statute-correspondence)",
    )
    args = parser.parse_args(argv)
    tables = args.tables or shared_datasets() / "statute-correspondence"
    return print_result(lambda: run(args.work, tables, args.passages, args.per_judgment))


if __name__ == "__main__":
    sys.exit(main())

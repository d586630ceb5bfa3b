"""Old and new codes as one, measured: passages of real judgments rewritten into the new code.

    python -m aqgr.eval.bench_correspondence [--passages 400] [--work reports/correspondence]
                                             [--tables $AQGR_DATASETS/statute-correspondence]

Few AILA queries name a section (2 of 50), so the measure is built from the corpus. Each AILA
judgment (Object_casedocs) is read paragraph by paragraph (its non-empty lines); the first
paragraph that names a section of an old code of the tables (IPC, CrPC, Evidence Act) gives
the passage: from the sentence before the first such sentence, sentences up to PASSAGE_WORDS
words (at most MAX_WORDS). A passage is kept when every old-code reference in it has a
counterpart in the table (`Correspondence.rewrite` leaves none); judgments are taken in the
order of a stable hash of their id (never file order) up to --passages. Each passage is
rewritten mechanically into the new code (aqgr/correspondence.py: "Sections 302/34 IPC" ->
"Sections 103(1) and 3(5) BNS", "Section 32 of the Evidence Act" -> "Section 26 of the
Bharatiya Sakshya Adhiniyam, 2023"; the codes' names elsewhere too: "(in short 'IPC')" ->
"(in short 'BNS')").

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
original and a paired comparison (queries better / worse, Wilcoxon p); results.json in --work.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from aqgr.paths import shared_datasets

PASSAGE_WORDS = 60  # a passage grows sentence by sentence until it has this many words
MAX_WORDS = 120
DEPTH = 100  # how deep each query's ranking is read
CONDITIONS = ("original", "rewritten", "rewritten+table", "rewritten+table, both forms")
RETRIEVER = "fulltext"


def passage_of(paragraphs: list[str], table) -> tuple[str, str] | None:
    """(passage, rewritten passage) from the first paragraph naming an old-code section, or None."""
    from aqgr.summarizer.sentences import split_sentences

    for paragraph in paragraphs:
        refs = [r for r in table.find(paragraph) if table.is_old(r.code)]
        if not refs:
            continue
        sentences = split_sentences(paragraph)
        first = next((i for i, s in enumerate(sentences) if any(table.is_old(r.code) for r in table.find(s))), None)
        if first is None:
            continue
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
            return passage, rewritten
        return None  # the first such paragraph only: a judgment gives at most one passage
    return None


def build_passages(texts: dict[str, str], table, n: int) -> dict[str, tuple[str, str]]:
    """judgment id -> (passage, rewritten), for up to `n` judgments taken by a stable hash of the id."""
    from aqgr.retrieval.types import id_hash

    out: dict[str, tuple[str, str]] = {}
    for doc_id in sorted(texts, key=id_hash):
        found = passage_of([line.strip() for line in texts[doc_id].splitlines() if line.strip()], table)
        if found:
            out[doc_id] = found
            if len(out) >= n:
                break
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


def paired(scores: dict[str, float], base: dict[str, float]) -> dict:
    """Per-query differences against the original: queries better / worse, and the Wilcoxon
    signed-rank p-value over the queries that differ (None when none does)."""
    from scipy.stats import wilcoxon

    diffs = [scores[q] - base[q] for q in base if scores[q] != base[q]]
    return {"better": sum(d > 0 for d in diffs), "worse": sum(d < 0 for d in diffs),
            "wilcoxon_p": float(f"{wilcoxon(diffs).pvalue:.2g}") if diffs else None}


def open_index(work: Path, texts: dict[str, str]):
    """The full-text index of the corpus in `work/index`, built once (hashing embedder)."""
    from aqgr.errors import AqgrError
    from aqgr.retrieval.index import IndexSpec, SummaryIndex

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


def run(work: Path, tables: Path, n: int, datasets: Path | None = None) -> dict:
    from aqgr.correspondence import load_tables
    from aqgr.eval.measures import compute

    root = (datasets or shared_datasets()) / "aila2019" / "Object_casedocs"
    work.mkdir(parents=True, exist_ok=True)
    texts = {p.stem: p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.glob("*.txt"))}
    table = load_tables([tables])
    passages = build_passages(texts, table, n)
    started = time.perf_counter()
    cited = citations(root, sorted(texts), work / "citations.json")
    links_s = time.perf_counter() - started
    index, build_s = open_index(work, texts)
    queries = {
        "original": {d: p for d, (p, _) in passages.items()},
        "rewritten": {d: r for d, (_, r) in passages.items()},
        "rewritten+table": {d: table.expand(r) for d, (_, r) in passages.items()},
        "rewritten+table, both forms": {d: table.expand(r, both_forms=True) for d, (_, r) in passages.items()},
    }
    known_qrels = {d: {d: 1} for d in passages}
    cited_qrels = {d: {c: 1 for c in cited[d]} for d in passages if cited.get(d)}
    measures = ("RR", "R@10", "AP")
    results: dict = {"known_item": {}, "cited": {}}
    per_query: dict = {"known_item": {}, "cited": {}}
    started = time.perf_counter()
    for condition in CONDITIONS:
        known, excluded = {}, {}
        for doc_id, query in queries[condition].items():
            known[doc_id] = [(d.doc_id, d.score) for d in index.retrieve(query, DEPTH, retrievers=[RETRIEVER])[RETRIEVER]]
            if doc_id in cited_qrels:
                hits = index.retrieve(query, DEPTH, retrievers=[RETRIEVER], exclude={doc_id})[RETRIEVER]
                excluded[doc_id] = [(d.doc_id, d.score) for d in hits]
        for name, qrels, run_ in (("known_item", known_qrels, known), ("cited", cited_qrels, excluded)):
            scores = compute(qrels, run_, measures)
            results[name][condition] = {m: round(v, 4) for m, v in scores.mean.items()}
            per_query[name][condition] = scores.per_query
    search_s = time.perf_counter() - started
    for name in ("known_item", "cited"):
        base = results[name]["original"]
        for condition in CONDITIONS[1:]:
            results[name][f"{condition} / original"] = {m: round(results[name][condition][m] / base[m], 4) if base[m] else None for m in measures}
            results[name][f"{condition} vs original, paired"] = {m: paired(per_query[name][condition][m], per_query[name]["original"][m])
                                                                 for m in measures}
    refs = sum(len(table.find(p)) for p, _ in passages.values())
    example = next(iter(passages.items()))
    report = {
        "passages": len(passages),
        "references_in_passages": refs,
        "cited_queries": len(cited_qrels),
        "cited_targets": sum(len(v) for v in cited_qrels.values()),
        "retriever": f"{RETRIEVER} (tantivy.v1, word pairs; index of {len(texts)} AILA judgments, hashing.v1 embedder)",
        "depth": DEPTH,
        "results": results,
        "seconds": {"index_build": round(build_s, 1), "citation_links": round(links_s, 1), "search": round(search_s, 1)},
        "example": {"judgment": example[0], "original": example[1][0], "rewritten": example[1][1],
                    "expanded_tail": queries["rewritten+table"][example[0]][len(example[1][1]):]},
        "table_rows": len(table),
    }
    (work / "results.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    (work / "passages.jsonl").write_text("".join(json.dumps({"judgment": d, "original": p, "rewritten": r}) + "\n"
                                                 for d, (p, r) in passages.items()), encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> int:
    from aqgr.eval.bench_common import print_result

    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench_correspondence", description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=400, help="most passages (one per judgment)")
    parser.add_argument("--work", type=Path, default=Path("reports/correspondence"), help="index, results.json, passages.jsonl")
    parser.add_argument("--tables", type=Path, default=None,
                        help="correspondence tables (default $AQGR_DATASETS/statute-correspondence)")
    args = parser.parse_args(argv)
    tables = args.tables or shared_datasets() / "statute-correspondence"
    return print_result(lambda: run(args.work, tables, args.passages))


if __name__ == "__main__":
    sys.exit(main())

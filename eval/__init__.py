"""Evaluation: AILA-format datasets, measures, systems, reports and benchmarks (imported as `aqgr.eval`).

At the top, the harness and what every run uses; in rooms, the systems under evaluation
(systems/), the statistics over runs (stats/), every benchmark of the project (bench/) and the
citation benchmark builder (citebench/). The rooms' layers are import-linter contracts in
pyproject.toml: the command over the benchmarks over the harness over the statistics over the
systems over the data.

Commands:
    python -m aqgr.eval --systems bm25-fulltext,aqgr       the evaluation (`aqgr eval` is the same command)
    python -m aqgr.eval build-citation-benchmark ARCHIVE    a citation benchmark from an archive
    python -m aqgr.eval.stats.findability                  can the judgments be found from the query texts?
    python -m aqgr.eval.bench.NAME --help                  a benchmark (costs, agreement), NAME below

Modules
  harness                 evaluate(): run systems under a protocol, write TREC runs, score them, write the report
  datasets                the AILA-format loader: documents, queries, qrels, exclusions
  measures                trec_eval's ranked measures (ir-measures) and the study's set measures, by one name
  protocols               aila-cases, aila-statutes, study-subset: what is ranked, which queries and judgments count
  runs                    TREC run files with strictly decreasing scores (no tie left to an evaluator)
  report                  the rich table and the report directory (report.md, results.json, config.json)
  systems/                the systems under evaluation
  systems/registry        the System protocol, the `systems` registry, get_system (NAME@backend), the eval cache
  systems/fulltext        bm25-fulltext (the FIRE-style baseline) and bm25s-fulltext* over other BM25 implementations
  systems/pipeline        the summary-based systems through aqgr's pipeline: *-summary, aqgr and its ablations
  systems/on_backend      NAME@milvus: a summary-based system on another index backend, cached beside the embedded
  systems/bm25s           bm25s.v1: the bm25s implementation of BM25 (registered on import; `aqgr[bm25s]`), for bm25s-fulltext*
  stats/                  statistics over runs
  stats/bootstrap         the paired bootstrap interval of a ratio of means, drawn by group
  stats/chance            the exact chance level of a measure: a random ordering of each query's candidates
  stats/agreement         do two index backends agree? mean differences, top-k overlap, returned-set Jaccard
  stats/findability       a command: can each query's judgments be reached from its own text at all?
  bench/                  every benchmark of the project, one a module (python -m aqgr.eval.bench.NAME)
  bench/common            what the benchmark commands share: print_result (JSON out, exit 2 on error), percentile
  bench/synthetic_archive synthetic archives of real text (AILA paragraphs recombined) for the scale benchmarks
  bench/llama_server      llama-cpp-python's OpenAI-compatible server on 127.0.0.1, for bench.llm --http
  bench/backend_agreement the Milvus backend against the embedded one through the harness (NAME vs NAME@milvus)
  bench/batch             `aqgr summarize` throughput: documents/s and peak memory per worker count
  bench/bm25              BM25 implementations on the same tokens: build and query time, size
  bench/citations         the citation graph: one full build's time and peak memory, its size, one judgment added
  bench/correspondence    old and new codes as one: passages of real judgments rewritten into the new code
  bench/dense             dense segment kinds at scale: exact vs IVF-SQ8 vs HNSW (latency, recall, memory)
  bench/embed             embedders on the dense windows of AILA summaries: documents/s, windows/s, CPU
  bench/filters           filtered against unfiltered search latency
  bench/grounding         the grounding locator: a judgment's own names found, other judgments' names refused
  bench/lexical           the lexical engines side by side at scale: build, memory, disk, latency at k=1000, agreement
  bench/llm               the model-backed pipeline on a real model: summaries, a very long judgment, one search
  bench/pipeline          the whole pipeline at scale on synthetic archives: load, index, search, add, disk per size
  bench/search            question-guided search over an AILA-format archive: build costs and warm latency
  bench/server            `aqgr serve` under concurrent clients on loopback: throughput, latency, errors
  bench/summarize         the summarizer: speed, schema validity, slot fill
  bench/treatment         a treatment engine's per-class precision and recall on a hand-labelled fixture
  bench/update            incremental index update against a full rebuild: time, and how far their rankings are
  citebench/              the citation benchmark builder: build_citation_benchmark(archive, out_dir)
  citebench/build         in-archive citations -> queries, qrels, exclusions and stats
  citebench/cli           the build-citation-benchmark command (a subcommand of the eval CLI)
  citebench/mask          AILA-style masking of a query's facts, deterministic and model-free
"""

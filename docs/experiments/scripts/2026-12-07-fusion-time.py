# usage: [PYTHONPATH=<checkout>/src] AQGR_DATASETS=<datasets> python docs/experiments/scripts/2026-12-07-fusion-time.py [INDEX_DIR]
"""One-off measurement: a search's fusion and citation lift, timed alone, for the code on the path.

Loads the `aqgr` benchmark system's AILA index (INDEX_DIR, default /work/runs/aila_idx, made as
docs/experiments/scripts/2026-12-06-interleaved-ab.py makes it), captures the runs of AILA queries 2-11
(`Searcher.plan` then `Searcher.retrieve`), then times over them, median of five passes, in ms a
search: `Searcher._fuse` of the runs, turning each run into fusion's arrays alone (`_as_run`), and
`_fuse` followed by `_refer` (the citation lift). Run it once per checkout to compare two versions
of the code. It calls private names: an analysis, not an API."""

import statistics
import sys
import time
from pathlib import Path

from aqgr.eval.datasets import load_dataset
from aqgr.eval.pipeline_systems import DEFAULT_SUMMARIZER, PIPELINE_CONFIGS, ArchiveSystem, case_archive
from aqgr.eval.systems import default_cache_dir
from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval import fusion
from aqgr.retrieval.index import SummaryIndex

where = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/runs/aila_idx")
dataset = load_dataset(shared_datasets() / "aila2019")
archive = case_archive(dataset.docs_dir, dataset.doc_ids, default_cache_dir(), DEFAULT_SUMMARIZER)
system = ArchiveSystem("aqgr", PIPELINE_CONFIGS["aqgr"], summarizer=DEFAULT_SUMMARIZER, embedder=None)
searcher = system.searcher_for(archive, SummaryIndex.load(where, system.index_spec()))
options = system.search_options().model_copy(update={"min_content_words": 1})
captured = [searcher.retrieve(searcher.plan(q, options=options)).runs for q in list(dataset.queries.values())[1:11]]
print("runs a search", len(captured[0]), "documents a run", [len(run) for _, run in captured[0]])


def ms_a_search(step) -> float:
    passes = []
    for _ in range(5):
        t = time.perf_counter()
        for runs in captured:
            step(runs)
        passes.append((time.perf_counter() - t) / len(captured) * 1000)
    return statistics.median(passes)


print(f"fusion {ms_a_search(lambda runs: searcher._fuse(runs, options)):.2f} ms")
print(f"runs to arrays alone {ms_a_search(lambda runs: [fusion._as_run(run, 'run') for _, run in runs]):.2f} ms")
print(
    f"fusion and citation lift {ms_a_search(lambda runs: searcher._refer(searcher._fuse(runs, options), options, None)):.2f} ms"
)

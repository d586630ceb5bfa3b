"""Opt-in (--run-slow): pinpoint offsets on every hit of every AILA dev query (AILA_Q1..Q10).

The text at each piece of evidence's offsets is its quote (or a part of it, for a part match),
or the evidence says `located: false`. The archive is the eval's cached one ($AQGR_EVAL_CACHE,
else the user's aqgr eval cache): the first run summarises and indexes the 2,914 judgments
(about 20 minutes on two cores), later runs cost the ten searches."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from aqgr.foundation.paths import shared_datasets
from tests.aqgr.pinpoint_check import hit_problems

AILA = shared_datasets() / "aila2019"


@pytest.mark.slow
def test_every_pinpoint_of_the_aila_dev_queries_holds():
    if not AILA.is_dir():
        pytest.skip(f"{AILA} not present")
    from aqgr.eval.datasets import load_dataset
    from aqgr.eval.systems.pipeline import DEFAULT_SUMMARIZER, case_archive, case_index
    from aqgr.eval.systems.registry import default_cache_dir, systems

    cache = Path(os.environ["AQGR_EVAL_CACHE"]) if os.environ.get("AQGR_EVAL_CACHE") else default_cache_dir()
    dataset = load_dataset(AILA, kind="cases")
    system = systems.create("aqgr")
    archive = case_archive(dataset.docs_dir, dataset.doc_ids, cache, DEFAULT_SUMMARIZER)
    searcher = system.searcher_for(archive, case_index(archive, system.index_spec()))
    queries = dataset.judged_queries()
    assert queries == [f"AILA_Q{n}" for n in range(1, 11)]
    problems, matches, hits = [], Counter(), 0
    for qid in queries:
        for hit in searcher.search(dataset.queries[qid]).hits:
            hits += 1
            problems += [f"{qid} {p}" for p in hit_problems(archive.text(hit.judgment_id), hit)]
            matches.update(e.match or "unlocated" for e in hit.evidence)
    assert hits and not problems, problems[:10]
    located = 1 - matches["unlocated"] / sum(matches.values())
    print(f"{hits} hits, {sum(matches.values())} evidence, located {located:.3f}: {dict(matches)}")
    assert located == 1.0  # extractive summaries quote the judgments verbatim: every quote is found

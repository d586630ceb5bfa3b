"""A search's scores are the same in every process: the offline explainer's term weights are
summed over sets, whose order follows the process's string-hash seed."""

import os
import subprocess
import sys

CODE = """
import random
from aqgr.pipeline.relevance import RelevanceScorer
random.seed(0)
words = [f"w{i}" for i in range(300)]
scorer = RelevanceScorer(str.split, {w: random.random() * 7 for w in words}, 1000)
q, t = " ".join(words[:200]), " ".join(words[50:260])
print(repr(scorer.coverage(q, t)), repr(scorer.overlap(q, t)))
"""


def test_coverage_and_overlap_do_not_depend_on_the_hash_seed():
    seen = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=120, check=True
        )
        seen.add(done.stdout)
    assert len(seen) == 1, seen

"""How well the grounding locator (aqgr/pipeline/grounding.py) tells a judgment's own names from others.

    python -m aqgr.eval.bench.grounding --data $AQGR_DATASETS/aila2019 [--limit 60] [--seed 7]

For a random sample of judgments, `extractive.v1` summarises each (its values are cut out of
the judgment's text, so each one the locator misses on its own text is a locator miss), and
each value is looked up:

* `own`: in its own judgment's text: the share located (1.0 is no miss);
* `other`: in the next sampled judgment's text, a stand-in for a model's invention (real names
  of other cases): the share located there (0.0 is no invention let through; the court is
  shared by most AILA judgments, the Supreme Court of India, so its share is high by right).

Prints one JSON object (per slot: values, own, other; seconds per judgment) on stdout.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import aqgr.summarizer.extractive.engine  # noqa: F401  (registers extractive.v1)
from aqgr.pipeline.grounding import Locator
from aqgr.summarizer.base import JudgmentText, summarizers
from aqgr.summarizer.readers import read_judgment


def _values(slots) -> list[tuple[str, str]]:
    out = [("court", slots.court), ("date", slots.date)] + [("bench", b) for b in slots.bench]
    out += [("parties", p) for p in slots.parties.appellants + slots.parties.respondents]
    out += [("statutes", s.name) for s in slots.statutes] + [("precedents", p.name) for p in slots.precedents]
    return [(slot, v) for slot, v in out if v]


def _located(where: Locator, slot: str, value: str) -> bool:
    check = {"date": where.date, "statutes": where.statute, "precedents": where.precedent}.get(slot, where.name)
    return check(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="an AILA-format dataset folder (Object_casedocs/ inside)"
    )
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    files = sorted((args.data / "Object_casedocs").glob("*.txt"))
    if not files:
        print(f"no judgments under {args.data / 'Object_casedocs'}: pass --data the dataset folder", file=sys.stderr)
        return 2
    random.Random(args.seed).shuffle(files)
    files = files[: args.limit]
    engine = summarizers.create("extractive.v1")
    texts, values = [], []
    for f in files:
        text, sha = read_judgment(f)
        texts.append(text)
        values.append(
            _values(engine.summarize(JudgmentText(judgment_id=f.stem, text=text, source_path=str(f), sha256=sha)))
        )
    counts: dict[str, dict[str, int]] = {}
    seconds = 0.0
    for n, text in enumerate(texts):
        started = time.perf_counter()
        where = Locator(text)
        for kind, pool in (("own", values[n]), ("other", values[(n + 1) % len(texts)])):
            for slot, value in pool:
                c = counts.setdefault(slot, {"values": 0, "own": 0, "other": 0})
                c["values"] += kind == "own"
                c[kind] += _located(where, slot, value)
        seconds += time.perf_counter() - started
    report = {
        "judgments": len(texts),
        "seconds_per_judgment": round(seconds / len(texts), 3),
        "slots": {
            slot: {"values": c["values"], "own": round(c["own"] / max(1, c["values"]), 3), "other_located": c["other"]}
            for slot, c in sorted(counts.items())
        },
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

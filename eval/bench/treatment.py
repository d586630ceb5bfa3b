"""How well does a treatment engine label citations? Per-class precision and recall on a
hand-labelled fixture.

    python -m aqgr.eval.bench.treatment [--engine phrases.v1] [--fixture PATH] [--errors]

The fixture (default tests/retrieval/fixtures/treatment_aila.jsonl in a checkout) holds
citation mentions of AILA judgments ($AQGR_DATASETS/aila2019/Object_casedocs), one JSON
object a line: `citing` (judgment id), `cited` (the cited judgment's id when it is in
the archive, else null), `sentence` (the citing sentence), `start`/`end` (the mention in
it: a title's "v." or a reporter citation), `mention`, and `label`, decided by reading
the sentence (the treatment the sentence gives or reports of that case: a case that
does the overruling is only "referred"; a party's contention is "referred").

Each mention is classified from its sentence alone. Prints a JSON report: per label the
support, predictions, precision and recall, and the confusion counts; `--errors` also
lists the mentions labelled wrongly. Split "a"/"b" (a stable hash of citing id and
sentence) are reported apart too, so a rule tuned on one half can be checked on the other.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

from aqgr.retrieval.citations.treatment import LABELS, create

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "retrieval" / "fixtures" / "treatment_aila.jsonl"


def load(path: Path = FIXTURE) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def split_of(row: dict) -> str:
    return "ab"[hashlib.sha256((row["citing"] + row["sentence"]).encode()).digest()[0] % 2]


def score(rows: list[dict], predicted: list[str]) -> dict:
    """Per label: support, predicted, precision (None when never predicted), recall."""
    pairs = Counter(zip((r["label"] for r in rows), predicted))
    report = {}
    for label in LABELS:
        support = sum(n for (gold, _), n in pairs.items() if gold == label)
        guessed = sum(n for (_, got), n in pairs.items() if got == label)
        right = pairs[(label, label)]
        report[label] = {
            "support": support,
            "predicted": guessed,
            "precision": round(right / guessed, 3) if guessed else None,
            "recall": round(right / support, 3) if support else None,
        }
    return report


def run(engine_name: str = "phrases.v1", fixture: Path = FIXTURE) -> dict:
    engine = create(engine_name)
    rows = load(fixture)
    predicted = [engine.label(r["sentence"], r["start"], r["end"])[0] for r in rows]
    confusion = Counter(f"{r['label']}->{p}" for r, p in zip(rows, predicted) if r["label"] != p)
    halves = {}
    for half in "ab":
        keep = [i for i, r in enumerate(rows) if split_of(r) == half]
        halves[half] = score([rows[i] for i in keep], [predicted[i] for i in keep])
    return {
        "engine": engine_name,
        "fixture": str(fixture),
        "mentions": len(rows),
        "accuracy": round(sum(r["label"] == p for r, p in zip(rows, predicted)) / len(rows), 3),
        "classes": score(rows, predicted),
        "confusion": dict(confusion.most_common()),
        "splits": halves,
        "_predicted": predicted,
        "_rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.treatment", description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="phrases.v1")
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--errors", action="store_true", help="also list the mentions labelled wrongly")
    args = parser.parse_args(argv)
    report = run(args.engine, args.fixture)
    rows, predicted = report.pop("_rows"), report.pop("_predicted")
    if args.errors:
        report["errors"] = [
            {"gold": r["label"], "got": p, "mention": r["mention"], "start": r["start"], "sentence": r["sentence"]}
            for r, p in zip(rows, predicted)
            if r["label"] != p
        ]
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Incremental index update vs full rebuild: wall time, and how far the updated index's rankings are from the rebuilt one's.

    python -m aqgr.eval.bench.update --backend milvus --base 2000 --added 100 --out reports/update

1. Summaries: the first `base + added` AILA judgments (Object_casedocs, shuffled with seed 0)
   summarised with extractive.v1 (cached as JSON in --out).
2. Per repetition, on fresh indexes (hashing.v1 embedder, no embedding cache, so neither side
   reuses vectors): the *update* builds and saves an index of the first `base` summaries
   (untimed), then times `update(the next added)` + `save`; the *rebuild* times `build(all)` +
   `save`. Also timed once each: replacing `added` judgments (new provenance) and removing them.
3. Agreement of the updated index with the rebuilt one over the AILA query texts: mean and
   minimum top-10 overlap per retriever, and whether `idf()` is equal.

Prints a JSON report on stdout (times are medians over --repeat).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

from aqgr.foundation.paths import shared_datasets

AILA = shared_datasets() / "aila2019"


def summaries(out: Path, n: int, data: Path = AILA):
    """extractive.v1 summaries of `n` AILA judgments (seeded order), cached in `out`."""
    from aqgr.schemas.summary import StructuredSummary

    path = out / f"summaries-{n}.json"
    if path.is_file():
        return [StructuredSummary.model_validate(s) for s in json.loads(path.read_text(encoding="utf-8"))]
    from aqgr.schemas.summary import Provenance
    from aqgr.summarizer.base import JudgmentText, summarizers
    from aqgr.summarizer.readers import read_judgment

    engine = summarizers.create("extractive.v1")
    files = sorted((data / "Object_casedocs").glob("*.txt"))
    random.Random(0).shuffle(files)
    made = []
    for f in files:
        if len(made) == n:
            break
        text, sha = read_judgment(f)
        try:
            slots = engine.summarize(JudgmentText(f.stem, text, str(f), sha))
        except Exception:  # noqa: BLE001 - a judgment the engine refuses is left out
            continue
        made.append(
            StructuredSummary.from_slots(
                f.stem, slots, Provenance(engine=engine.name, engine_version=engine.version, source_sha256=sha)
            )
        )
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([s.model_dump(mode="json") for s in made]), encoding="utf-8")
    return made


def query_texts(data: Path = AILA) -> list[str]:
    lines = (data / "Query_doc.txt").read_text(encoding="utf-8", errors="replace").splitlines()
    return [line.split("||", 1)[1] for line in lines if "||" in line]


def _build(backend: str, items, spec, where: Path):
    from aqgr.retrieval.backends import backend_class, build_index

    uri = str(where / "milvus.db") if backend_class(backend).needs_uri else None
    return build_index(items, spec, backend=backend, uri=uri)


def _timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _overlap(a, b, queries, k: int = 10) -> dict[str, dict[str, float]]:
    out = {}
    for name in a.retrievers:
        values = []
        for q in queries:
            x = {d.doc_id for d in a.retrieve(q, k, retrievers=[name])[name]}
            y = {d.doc_id for d in b.retrieve(q, k, retrievers=[name])[name]}
            values.append(len(x & y) / max(len(x), len(y), 1))
        out[name] = {"mean": round(statistics.mean(values), 4), "min": round(min(values), 4)}
    return out


def run(backend: str, base: int, added: int, out: Path, repeat: int) -> dict:
    from aqgr.retrieval.spec import IndexSpec

    spec = IndexSpec(embedder="hashing.v1")
    made = summaries(out, base + added)
    first, later = made[:base], made[base:]
    work = out / f"work-{backend}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    update_s, rebuild_s, parts = [], [], []
    updated = rebuilt = None
    for r in range(repeat):
        index = _build(backend, first, spec, work)
        index.save(work / f"update-{r}")
        seconds, counts = _timed(lambda index=index, r=r: (index.update(later), index.save(work / f"update-{r}"))[0])
        update_s.append(seconds)
        parts.append(index.manifest.get("last_update", {}).get("seconds"))
        seconds, fresh = _timed(lambda: _build(backend, made, spec, work))
        seconds += _timed(lambda fresh=fresh, r=r: fresh.save(work / f"rebuild-{r}"))[0]
        rebuild_s.append(seconds)
        if r < repeat - 1:
            for i in (index, fresh):
                getattr(i, "drop", lambda: None)()
        else:
            updated, rebuilt = index, fresh
    queries = query_texts()
    report = {
        "backend": backend,
        "base": base,
        "added": added,
        "repeat": repeat,
        "counts": counts,
        "update_s": round(statistics.median(update_s), 3),
        "rebuild_s": round(statistics.median(rebuild_s), 3),
        "update_runs_s": [round(s, 3) for s in update_s],
        "rebuild_runs_s": [round(s, 3) for s in rebuild_s],
        "update_parts_s": parts[-1],
        "idf_equal": updated.idf() == rebuilt.idf(),
        "top10_overlap_updated_vs_rebuilt": _overlap(updated, rebuilt, queries),
    }
    report["speedup"] = round(report["rebuild_s"] / report["update_s"], 1)
    now = datetime.now(UTC)
    renewed = [s.model_copy(update={"provenance": s.provenance.model_copy(update={"created_at": now})}) for s in later]
    report["replace_s"] = round(
        _timed(lambda: (updated.update(renewed), updated.save(work / f"update-{repeat - 1}")))[0], 3
    )
    report["remove_s"] = round(
        _timed(
            lambda: (updated.update([], [s.judgment_id for s in later]), updated.save(work / f"update-{repeat - 1}"))
        )[0],
        3,
    )
    report["fingerprints_ms"] = round(_timed(updated.fingerprints)[0] * 1000, 3)
    for i in (updated, rebuilt):
        getattr(i, "drop", lambda: None)()
    shutil.rmtree(work, ignore_errors=True)
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.update", description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="milvus")
    parser.add_argument("--base", type=int, default=2000, help="judgments indexed before the update")
    parser.add_argument("--added", type=int, default=100, help="judgments the update adds")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("reports/update"))
    args = parser.parse_args(argv)
    print(json.dumps(run(args.backend, args.base, args.added, args.out, args.repeat), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

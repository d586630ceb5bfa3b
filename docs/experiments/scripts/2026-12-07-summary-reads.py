"""Summary reads from an archive database: the older spaced JSON against the canonical form.

    python docs/experiments/scripts/2026-12-07-summary-reads.py PATH/TO/aqgr.db [ROUNDS]

Makes two copies of the database in a temporary folder: one with every summary stored in
SQLAlchemy's default spaced JSON (as aqgr stored them before 2026-12-07), one in
`canonical_json` (as aqgr stores them now). The content and the checksums are the same in both.
Then, alternating the copies, it times with the installed aqgr: `Store.summaries` of every
summary, `Store.iter_summaries` (the documents an export writes), `Store.iter_summary_models` (what
an index build reads) and `Store.summaries` of 36 random ids (what a search's explanation reads). Prints the medians and their ratio. The
database given is only read.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aqgr.archive.store import Store, canonical_json, summary_checksum


def _copy_as(source: Path, target: Path, dumps) -> None:
    shutil.copyfile(source, target)
    with sqlite3.connect(target) as conn:
        rows = conn.execute("SELECT judgment_id, engine, data, checksum FROM summaries").fetchall()
        for judgment_id, engine, data, checksum in rows:
            parsed = json.loads(data)
            assert checksum is None or summary_checksum(parsed) == checksum, judgment_id
            conn.execute(
                "UPDATE summaries SET data = ? WHERE judgment_id = ? AND engine = ?",
                (dumps(parsed), judgment_id, engine),
            )


def main(db: Path, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        copies = {"spaced": Path(tmp) / "spaced.db", "canonical": Path(tmp) / "canonical.db"}
        _copy_as(db, copies["spaced"], json.dumps)
        _copy_as(db, copies["canonical"], canonical_json)
        stores = {form: Store(f"sqlite:///{path}", create=False) for form, path in copies.items()}
        engine = (
            sqlite3.connect(db)
            .execute("SELECT engine FROM summaries GROUP BY engine ORDER BY count(*) DESC")
            .fetchone()[0]
        )
        ids = [s.judgment_id for s in stores["canonical"].summaries(engine)]
        times: dict[tuple[str, str], list[float]] = {}
        rng = random.Random(7)
        for _ in range(rounds):
            batches = [rng.sample(ids, min(36, len(ids))) for _ in range(20)]
            for form, store in stores.items():
                t = time.perf_counter()
                store.summaries(engine)
                times.setdefault(("summaries(all)", form), []).append(time.perf_counter() - t)
                t = time.perf_counter()
                sum(1 for _ in store.iter_summaries(engine))
                times.setdefault(("iter_summaries", form), []).append(time.perf_counter() - t)
                t = time.perf_counter()
                sum(1 for _ in store.iter_summary_models(engine))
                times.setdefault(("iter_summary_models", form), []).append(time.perf_counter() - t)
                for batch in batches:
                    t = time.perf_counter()
                    store.summaries(engine, ids=batch)
                    times.setdefault(("summaries(36 ids)", form), []).append(time.perf_counter() - t)
        assert not any(store.damaged for store in stores.values())
        print(f"{len(ids)} summaries of {engine}, {rounds} rounds (medians, ms)")
        for what in ("summaries(all)", "iter_summaries", "iter_summary_models", "summaries(36 ids)"):
            spaced, canonical = (statistics.median(times[(what, form)]) * 1000 for form in ("spaced", "canonical"))
            print(f"  {what}: spaced {spaced:.2f}, canonical {canonical:.2f}, ratio {canonical / spaced:.3f}")
        for store in stores.values():
            store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 5)

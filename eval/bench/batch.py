"""Batch throughput benchmark (not a test): docs/s and peak memory of `aqgr summarize`.

    python -m aqgr.eval.bench.batch --data ../shared/datasets/aila2019/Object_casedocs --workers 1 2 --runs 3 [--pdf] [--limit N] [--database-url URL]

Each run summarises into a fresh archive in a subprocess (`aqgr summarize`), timed from
the outside; peak memory is the largest RSS of the run's process tree (sampled every
0.2 s). `--pdf` first writes the judgments as PDFs (tests/aqgr/docgen.py, the tests' own generator:
run from the root of a checkout) into a temporary folder. Prints one JSON object per
configuration on stdout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _peak_rss(proc: subprocess.Popen) -> tuple[int, float]:
    import psutil

    root, peak, started = psutil.Process(proc.pid), 0, time.perf_counter()
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree))
        except psutil.Error:
            pass
        time.sleep(0.2)
    return peak, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--pdf", action="store_true")
    parser.add_argument("--database-url", default=None, help="a PostgreSQL server URL; each run gets a fresh database")
    args = parser.parse_args()
    pdf_bytes = _pdf_writer() if args.pdf else None
    with tempfile.TemporaryDirectory() as tmp:
        files = sorted(args.data.glob("*.txt"))[: args.limit or None]
        source = Path(tmp) / "in"
        source.mkdir()
        for f in files:
            if pdf_bytes is not None:
                (source / f"{f.stem}.pdf").write_bytes(pdf_bytes(f.read_text(encoding="utf-8", errors="replace")))
            else:
                (source / f.name).symlink_to(f.resolve())
        for workers in args.workers:
            times, peaks = [], []
            for run in range(args.runs):
                home = Path(tmp) / f"home-{workers}-{run}"
                command = [
                    sys.executable,
                    "-c",
                    "from aqgr.interfaces.cli import main; main()",
                    "summarize",
                    str(source),
                    "--home",
                    str(home),
                    "--workers",
                    str(workers),
                ]
                if args.database_url:
                    command += [
                        "--database-url",
                        _fresh_database(args.database_url, f"bench_{workers}_{run}_{int(time.time())}"),
                    ]
                proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                peak, seconds = _peak_rss(proc)
                err = proc.stderr.read().decode()
                if proc.returncode != 0:
                    sys.exit(f"run failed ({proc.returncode}): {err[-2000:]}")
                times.append(seconds)
                peaks.append(peak)
                print(
                    f"workers={workers} run={run}: {seconds:.1f}s, {err.strip().splitlines()[0] if err.strip() else ''}",
                    file=sys.stderr,
                )
            median = statistics.median(times)
            print(
                json.dumps(
                    {
                        "docs": len(files),
                        "format": "pdf" if args.pdf else "txt",
                        "database": "postgresql" if args.database_url else "sqlite",
                        "workers": workers,
                        "runs": args.runs,
                        "median_s": round(median, 2),
                        "docs_per_s": round(len(files) / median, 2),
                        "peak_rss_mb": round(max(peaks) / 2**20),
                    }
                )
            )


def _pdf_writer():
    """tests/aqgr/docgen.py's `pdf_bytes`: the checkout's test helpers (not installed with the wheel)."""
    try:
        from tests.aqgr.docgen import pdf_bytes
    except ModuleNotFoundError:
        sys.exit("--pdf writes the PDFs with tests/aqgr/docgen.py: run it from the root of a checkout of aqgr")
    return pdf_bytes


def _fresh_database(server: str, name: str) -> str:
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(server)
    with psycopg.connect(
        host=u.host, port=u.port, user=u.username, password=u.password, dbname=u.database or "postgres", autocommit=True
    ) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return u.set(database=name).render_as_string(hide_password=False)


if __name__ == "__main__":
    main()

"""Cost of the whole pipeline at scale, through the public API, on synthetic archives of real text.

    nice -n 10 python -m aqgr.eval.bench.pipeline --sizes 10000,100000,1000000 --out reports/pipeline

Archives come from eval/bench/synthetic_archive.py (real AILA paragraphs recombined, unique titles,
citations among them, summaries recombined from extractive.v1 ones). Per size N, each stage
runs in a subprocess of its own, so its peak RSS (ru_maxrss) is its own:

1. load: extend the archive's database (--home) to N judgments (`Store.save_many`, 500
   per transaction); an archive left by an earlier size or run is extended, never remade;
2. index: `Archive.build_index()`, what `aqgr index` does (bm25, dense, fulltext, the issue
   sentences, the citation graph), embedder --embedder (hashing.v1: MiniLM at 1e6 would
   take days here; its rate is measured apart, see 6), on the index backend --backend
   (embedded, the default; or milvus: a milvus-lite folder milvus.db in the archive home, as
   `aqgr index --backend milvus` makes it, which has no full-text retriever);
3. search: open the archive, the first `Archive.search(facts)` (index, summaries and
   citation graph loaded on the way), then every AILA query (Query_doc.txt) timed: p50, p95;
4. disk (measured here, no process): database, index, citations.sqlite, embedding cache;
5. add: --add more judgments stored, then `Archive.build_index()` again (an incremental
   build where the code has one; a full rebuild today), in one process;
6. once, at the end, in this process: documents/s of --rate-embedder (MiniLM) building an
   index's dense windows and issue sentences over --rate-sample stored summaries, and the
   1e6 embedding time extrapolated from it.

One stage alone: `--stage load|index|search|add|citations --to N --home H --out R` (citations: the
citation graph alone, as `aqgr index` links it first).

Writes --out/results.json and --out/table.md (rows: measures; columns: sizes, the growth
slope of log(cost) on log(N) between successive sizes, the value extrapolated to 1e6 from
the last slope, and the target at 1e6) and prints the table on stdout; progress on stderr;
each stage's own log in --out/logs/.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from aqgr.foundation.paths import shared_datasets
from aqgr.retrieval.spec import DEFAULT_EMBEDDER

AILA_ROOT = shared_datasets() / "aila2019"
STATE = "bench-synthetic.json"  # in the archive home: what generated it (seed, corpus, engine version)
MILVUS_LITE = "milvus.db"  # --backend milvus: the milvus-lite folder in the archive home (as `aqgr index` makes it)
TARGET_N = 1_000_000
# (stage, measure) -> the target at 1e6 judgments.
TARGETS = {
    ("index", "peak RSS MB"): "<= 8192",
    ("search", "peak RSS MB"): "<= 4096",
    ("search", "p50 ms"): "<= 300 (<= 100 at 2,914)",
    ("search", "first search s"): "<= 10",
    ("add", "build_index s"): "minutes",
    ("add", "store s"): "minutes",
}


# -- helpers ---------------------------------------------------------------------


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _rss_now_mb() -> float:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
    except (OSError, ValueError, IndexError):
        return float("nan")


def _rss_kinds_mb() -> dict:
    """The process's resident memory now by kind (Linux /proc/self/status): anonymous (the heap,
    what the process holds) and file-backed (pages of mapped files, the index's among them, which
    the kernel drops under pressure and re-reads); {} where /proc is not there."""
    try:
        fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
        return {
            f"rss_{kind}_mb": round(int(fields[key].split()[0]) / 1024, 1)
            for kind, key in (("anon", "RssAnon"), ("file", "RssFile"))
        }
    except (OSError, ValueError, KeyError, IndexError):
        return {}


class _PhasePeaks:
    """The largest RSS sampled while `phase[0]` names each phase (a daemon thread, every `every` s)."""

    def __init__(self, phase: list[str], every: float = 0.2):
        self.phase, self.every, self.peaks = phase, every, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="aqgr-rss-sampler", daemon=True)

    def _sample(self) -> None:
        while True:
            rss, name = _rss_now_mb(), self.phase[0]
            if rss == rss:  # nan where /proc is not there
                self.peaks[name] = max(self.peaks.get(name, 0.0), rss)
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> "_PhasePeaks":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _mb(path: Path) -> float:
    path = Path(path)
    if path.is_file():
        return round(path.stat().st_size / 1e6, 1)
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6, 1) if path.is_dir() else 0.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def docs_dir(corpus: Path) -> Path:
    """The judgments' folder of a dataset root (AILA layout: Object_casedocs/), else the root itself."""
    return corpus / "Object_casedocs" if (corpus / "Object_casedocs").is_dir() else corpus


def _archive(home: Path, embedder: str):
    from aqgr.archive.home import Archive
    from aqgr.retrieval.spec import IndexSpec

    return Archive(home, index=IndexSpec(embedder=embedder))


# -- stages (each runs in its own process) -----------------------------------------


def stage_base(args) -> dict:
    """Summarise (or read the cached summaries of) the real judgments the archives recombine."""
    from aqgr.eval.bench.synthetic_archive import Corpus

    start = time.perf_counter()
    corpus = Corpus.load(
        docs_dir(args.corpus),
        args.out / "cache",
        limit=args.base_limit,
        progress=lambda n, total: print(f"base summaries {n}/{total}", file=sys.stderr, flush=True),
    )
    return {
        "donors": len(corpus.donors),
        "median_paragraphs": corpus.median_paragraphs,
        "median_chars": corpus.median_chars,
        "fingerprint": corpus.fingerprint,
        "seconds": round(time.perf_counter() - start, 2),
        "peak_rss_mb": _peak_rss_mb(),
    }


def stage_load(args) -> dict:
    """Extend the archive to args.to judgments."""
    from aqgr.archive.store import Store
    from aqgr.eval.bench.synthetic_archive import Corpus, Generator, extend

    corpus = Corpus.load(docs_dir(args.corpus), args.out / "cache", limit=args.base_limit)
    made = {"seed": args.seed, "corpus": corpus.fingerprint, "engine_version": corpus.engine_version}
    state_path = args.home / STATE
    archive = _archive(args.home, args.embedder)
    args.home.mkdir(parents=True, exist_ok=True)
    store = Store(archive.settings.db_url)
    # Judgments are stored in number order, a transaction at a time: the count is where the
    # archive (or an interrupted load) stopped.
    start = store.count_judgments()
    state = json.loads(state_path.read_text()) if state_path.is_file() else (made if start == 0 else {})
    if {k: state.get(k) for k in made} != made:
        raise SystemExit(
            f"{args.home} holds an archive made otherwise ({state or 'not by this benchmark'}); use another --home"
        )
    if args.to < start:
        raise SystemExit(f"{args.home} already holds {start} judgments (> {args.to}): use another --home")
    state_path.write_text(json.dumps(made))

    def report(done: int, total: int) -> None:
        if done % 10_000 < args.batch:
            print(f"stored {done}/{total}", file=sys.stderr, flush=True)

    result = extend(store, Generator(corpus, args.seed), start, args.to, batch=args.batch, progress=report)
    store.close()
    return {**result, "from": start, "to": args.to, "peak_rss_mb": _peak_rss_mb()}


def _phased(call) -> tuple[object, dict]:
    """`call(progress)` with the phases its progress reports timed: each from its first report to
    the next phase's first (the last runs to the end), and the peak RSS within each (sampled every
    0.2 s: which phase sets the process's peak)."""
    first: dict[str, float] = {}
    phase = ["start"]

    def progress(stage: str, done: int, total: int) -> None:
        first.setdefault(stage, time.perf_counter())
        phase[0] = stage

    start = time.perf_counter()
    with _PhasePeaks(phase) as peaks:
        result = call(progress)
    end = time.perf_counter()
    order = sorted(first, key=first.get)
    spans = {
        stage: round((first[nxt] if nxt else end) - first[stage], 2) for stage, nxt in zip(order, [*order[1:], None])
    }
    return result, {
        "seconds": round(end - start, 2),
        "peak_rss_mb": _peak_rss_mb(),
        "read_s": round(first[order[0]] - start, 2) if order else None,
        "phases_s": spans,
        "phase_peak_rss_mb": peaks.peaks,
    }


def _build_index(archive, backend: str, progress) -> dict:
    """`Archive.build_index()` on `backend`, where `aqgr index --backend` puts it (milvus: milvus.db in the home)."""
    if backend == "embedded":
        return archive.build_index(progress=progress)
    return archive.build_index(progress=progress, backend=backend, uri=str(archive.home / MILVUS_LITE))


def stage_index(args) -> dict:
    """`Archive.build_index()`, phases timed (`_phased`; "citations" runs to the start of "index")."""
    archive = _archive(args.home, args.embedder)
    manifest, timed = _phased(lambda progress: _build_index(archive, args.backend, progress))
    graph = archive.citations()
    return {
        **timed,
        "n_docs": manifest.get("n_docs"),
        "n_windows": manifest.get("n_windows"),
        "build_seconds": manifest.get("last_update", {}).get("seconds", {}),
        "citations_s": timed["phases_s"].get("citations"),
        "citation_links": len(graph) if graph is not None else 0,
    }


def stage_citations(args) -> dict:
    """The citation graph alone (`Archive.link_citations()`, what `aqgr index` does first), phases
    timed; run by hand (`--stage citations`), not by the size loop."""
    archive = _archive(args.home, args.embedder)
    graph, timed = _phased(lambda progress: archive.link_citations(progress))
    return {**timed, "citation_links": len(graph), "citations_mb": _mb(archive.home / "citations.sqlite")}


def stage_add(args) -> dict:
    """args.add more judgments stored, then `Archive.build_index()` again, in one process (its peak
    RSS is the larger of the two: the generator is freed before the build)."""
    import gc

    args.to = args.to + args.add
    stored = stage_load(args)
    gc.collect()
    return {"store": stored, "index": stage_index(args), "peak_rss_mb": _peak_rss_mb()}


def stage_search(args) -> dict:
    """The first search after opening the archive, then every query timed."""
    from aqgr.eval.datasets import read_queries

    queries = list(read_queries(args.queries_file).values())[: args.queries]
    archive = _archive(args.home, args.embedder)
    start = time.perf_counter()
    archive.search(queries[0])
    first = time.perf_counter() - start
    rss_loaded = _rss_now_mb()
    times, steps = [], {}
    for facts in queries:
        t = time.perf_counter()
        result = archive.search(facts)
        times.append((time.perf_counter() - t) * 1000)
        for step, ms in result.timings_ms.items():
            steps.setdefault(step, []).append(ms)
    return {
        "first_search_s": round(first, 2),
        "queries": len(times),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(_percentile(times, 0.95), 1),
        "p50_steps_ms": {k: round(statistics.median(v), 1) for k, v in steps.items()},
        "rss_after_load_mb": rss_loaded,
        "rss_end_mb": _rss_now_mb(),
        **{f"end_{k}": v for k, v in _rss_kinds_mb().items()},
        "peak_rss_mb": _peak_rss_mb(),
    }


def stage_disk(args) -> dict:
    """Sizes on disk: the database (with its write-ahead log), the index, the citation graph, the embedding cache."""
    archive = _archive(args.home, args.embedder)
    db = Path(str(archive.settings.db_url).removeprefix("sqlite:///"))
    return {
        "database_mb": round(sum(_mb(Path(f"{db}{end}")) for end in ("", "-wal")), 1),
        "index_mb": _mb(archive.settings.index_dir) + _mb(archive.home / MILVUS_LITE),
        "citations_mb": _mb(archive.home / "citations.sqlite"),
        "cache_mb": _mb(archive.settings.cache_dir),
    }


def stage_rate(args) -> dict:
    """Documents/s of args.rate_embedder over args.rate_sample stored summaries (dense windows
    and issue sentences, no cache), and the embedding time of 1e6 extrapolated from it."""
    import random

    from aqgr.archive.store import Store
    from aqgr.retrieval.dense.embedders import embedders
    from aqgr.retrieval.embedded.index import IndexSpec, SummaryIndex

    archive = _archive(args.home, args.embedder)
    store = Store(archive.settings.db_url)
    ids = sorted(store.judgment_ids())
    picked = random.Random(args.seed).sample(ids, min(args.rate_sample, len(ids)))
    summaries = store.summaries("extractive.v1", ids=picked)
    embedders.create(args.rate_embedder).embed(["the model loaded before the clock starts"])  # loaded once per process
    start = time.perf_counter()
    index = SummaryIndex.build(summaries, IndexSpec(embedder=args.rate_embedder))
    wall = time.perf_counter() - start
    parts = index.manifest["last_update"]["seconds"]
    embedding = parts.get("embed", 0.0) + parts.get("sentences", 0.0)
    per_s = len(summaries) / embedding if embedding > 0 else None
    return {
        "embedder": args.rate_embedder,
        "docs": len(summaries),
        "windows": index.manifest.get("n_windows"),
        "sentences": index.manifest.get("n_sentences"),
        "embed_s": round(parts.get("embed", 0.0), 2),
        "sentences_s": round(parts.get("sentences", 0.0), 2),
        "build_s": round(wall, 2),
        "docs_per_s": round(per_s, 2) if per_s else None,
        "extrapolated_1e6_hours": round(TARGET_N / per_s / 3600, 1) if per_s else None,
    }


STAGES = {
    "base": stage_base,
    "load": stage_load,
    "index": stage_index,
    "search": stage_search,
    "add": stage_add,
    "rate": stage_rate,
    "citations": stage_citations,
}  # main runs "rate" in its own process at the end; `--stage rate` runs it alone


# -- the run -----------------------------------------------------------------------


def _common(args) -> list[str]:
    return [
        "--out",
        str(args.out),
        "--home",
        str(args.home),
        "--corpus",
        str(args.corpus),
        "--queries-file",
        str(args.queries_file),
        "--queries",
        str(args.queries),
        "--embedder",
        args.embedder,
        "--backend",
        args.backend,
        "--rate-embedder",
        args.rate_embedder,
        "--rate-sample",
        str(args.rate_sample),
        "--seed",
        str(args.seed),
        "--batch",
        str(args.batch),
        "--add",
        str(args.add),
    ] + (["--base-limit", str(args.base_limit)] if args.base_limit else [])


def run_stage(args, name: str, label: str, extra: tuple[str, ...] = ()) -> dict:
    """One stage in a fresh interpreter: its JSON result, or {"error": ...}; its stderr goes to a log."""
    cmd = [sys.executable, "-m", "aqgr.eval.bench.pipeline", "--stage", name, *_common(args), *extra]
    log = args.out / "logs" / f"{label}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    print(f"{label} ...", file=sys.stderr, flush=True)
    load = round(
        os.getloadavg()[0], 1
    )  # the machine's load when the stage started: timings on a shared machine vary with it
    start = time.perf_counter()
    with open(log, "w") as err:
        try:
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"over {args.timeout}s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = log.read_text(errors="replace").strip()[-400:]
        return {"error": f"exit {done.returncode}: {tail}"}
    result = json.loads(lines[-1])
    result.update(process_s=round(time.perf_counter() - start, 2), loadavg=load)
    print(f"{label}: {json.dumps(result)}", file=sys.stderr, flush=True)
    return result


def run_size(args, n: int) -> dict:
    row = {"load": run_stage(args, "load", f"{n}-load", ("--to", str(n)))}
    if "error" in row["load"]:
        return row
    row["index"] = run_stage(args, "index", f"{n}-index")
    row["search"] = run_stage(args, "search", f"{n}-search") if "error" not in row["index"] else {"error": "no index"}
    row["disk"] = stage_disk(args)  # no process of its own: file sizes only
    row["add"] = run_stage(args, "add", f"{n}-add", ("--to", str(n))) if args.add else {"error": "--add 0"}
    return row


# (stage, measure, how to read it from a size's row)
MEASURES = (
    ("load", "judgments/s", lambda r: r["load"]["per_s"]),
    ("load", "peak RSS MB", lambda r: r["load"]["peak_rss_mb"]),
    ("load", "median chars", lambda r: r["load"]["median_chars"]),
    ("index", "build_index s", lambda r: r["index"]["seconds"]),
    ("index", "peak RSS MB", lambda r: r["index"]["peak_rss_mb"]),
    ("index", "  read summaries + texts s", lambda r: r["index"]["read_s"]),
    *(
        ("index", f"  {part} s", lambda r, part=part: r["index"]["build_seconds"].get(part))
        for part in ("bm25", "fulltext", "embed", "sentences")
    ),
    ("index", "  citation graph + save s", lambda r: r["index"]["citations_s"]),
    ("index", "citation links", lambda r: r["index"]["citation_links"]),
    ("search", "first search s", lambda r: r["search"]["first_search_s"]),
    ("search", "p50 ms", lambda r: r["search"]["p50_ms"]),
    ("search", "p95 ms", lambda r: r["search"]["p95_ms"]),
    *(
        ("search", f"  p50 {step} ms", lambda r, step=step: r["search"]["p50_steps_ms"][step])
        for step in ("questions", "retrieval", "explanation")
    ),
    ("search", "RSS after first search MB", lambda r: r["search"]["rss_after_load_mb"]),
    ("search", "RSS at the end: anonymous MB", lambda r: r["search"]["end_rss_anon_mb"]),
    ("search", "RSS at the end: mapped files MB", lambda r: r["search"]["end_rss_file_mb"]),
    ("search", "peak RSS MB", lambda r: r["search"]["peak_rss_mb"]),
    ("add", "store s", lambda r: r["add"]["store"]["seconds"]),
    ("add", "build_index s", lambda r: r["add"]["index"]["seconds"]),
    ("add", "peak RSS MB", lambda r: r["add"]["peak_rss_mb"]),
    ("disk", "database MB", lambda r: r["disk"]["database_mb"]),
    ("disk", "index MB", lambda r: r["disk"]["index_mb"]),
    ("disk", "citations.sqlite MB", lambda r: r["disk"]["citations_mb"]),
    ("disk", "embedding cache MB", lambda r: r["disk"]["cache_mb"]),
)


def _value(read, row: dict):
    try:
        value = read(row)
    except (KeyError, TypeError):
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def slope(n1: int, c1, n2: int, c2) -> float | None:
    """log(c2 / c1) / log(n2 / n1): 1 = linear growth, 0 = flat."""
    if c1 is None or c2 is None or c1 <= 0 or c2 <= 0 or n1 == n2:
        return None
    return round(math.log(c2 / c1) / math.log(n2 / n1), 2)


def measures(sizes: dict[int, dict], add: int = 0) -> list[dict]:
    """One record per measure: values per size, slopes between successive sizes, the 1e6
    extrapolation from the last slope. The add stage runs at N + `add` judgments: its slopes
    and extrapolation use those sizes."""
    ns = sorted(sizes)
    out = []
    for stage, name, read in MEASURES:
        at = {n: n + add if stage == "add" else n for n in ns}  # the archive's size when measured
        values = {n: _value(read, sizes[n]) for n in ns}
        slopes = {f"{a}->{b}": slope(at[a], values[a], at[b], values[b]) for a, b in zip(ns, ns[1:])}
        last = slopes.get(f"{ns[-2]}->{ns[-1]}") if len(ns) > 1 else None
        at_target = None
        if ns and ns[-1] < TARGET_N and last is not None and values[ns[-1]]:
            at_target = round(values[ns[-1]] * (TARGET_N / at[ns[-1]]) ** last, 1)
        elif ns and ns[-1] == TARGET_N:
            at_target = values[ns[-1]]
        out.append(
            {
                "stage": stage,
                "measure": name,
                "values": values,
                "slopes": slopes,
                "at_1e6": at_target,
                "target": TARGETS.get((stage, name.strip()), ""),
            }
        )
    return out


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and value >= 100:
        return f"{value:,.0f}"
    if isinstance(value, float):
        return f"{value:.3g}"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _errors(row: dict) -> list[tuple[str, str]]:
    """(stage, error) of every failed stage of one size (the add stage has two parts)."""
    found = []
    for stage, part in row.items():
        parts = (
            {stage: part} if "error" in part else {f"{stage} {k}": p for k, p in part.items() if isinstance(p, dict)}
        )
        found += [(name, p["error"]) for name, p in parts.items() if "error" in p]
    return found


def _backend_note(config: dict) -> str:
    backend = config.get("backend", "embedded")
    return (
        "" if backend == "embedded" else f", index backend: {backend} (milvus-lite, {MILVUS_LITE} in the archive home)"
    )


def table(results: dict) -> str:
    sizes = {int(n): row for n, row in results["sizes"].items()}
    rows = measures(sizes, results["config"]["add"])
    ns = sorted(sizes)
    head = [
        "stage",
        "measure",
        *(f"N={n:,}" for n in ns),
        *(f"slope {a:,}->{b:,}" for a, b in zip(ns, ns[1:])),
        "1e6 (extrapolated)" if ns and ns[-1] < TARGET_N else "1e6",
        "target at 1e6",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            r["stage"],
            r["measure"],
            *(_cell(r["values"][n]) for n in ns),
            *(_cell(s) for s in r["slopes"].values()),
            _cell(r["at_1e6"]),
            r["target"],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    errors = [f"- N={n:,} {stage}: {error}" for n, row in sizes.items() for stage, error in _errors(row)]
    base, rate = results.get("base", {}), results.get("rate", {})
    notes = [
        "",
        f"Real corpus: {base.get('donors')} judgments, median {base.get('median_chars')} characters, "
        f"{base.get('median_paragraphs')} body paragraphs (synthetic judgments: that many paragraphs; their "
        f"median length is the 'load median chars' row). Index embedder: {results['config']['embedder']}"
        f"{_backend_note(results['config'])}; "
        f"'add': {results['config']['add']:,} judgments stored, then build_index() again, at N + {results['config']['add']:,}.",
    ]
    loads = ", ".join(
        f"N={n:,}: {row['search']['loadavg']}" for n, row in sorted(sizes.items()) if "loadavg" in row.get("search", {})
    )
    if loads:
        notes.append(
            f"Machine load (1-minute average, {results['config']['cpus']} CPUs) when each search stage started: {loads}."
        )
    if rate and "error" not in rate:
        notes.append(
            f"{rate['embedder']}: {rate['docs_per_s']} documents/s ({rate['docs']} documents, {rate['windows']} windows, "
            f"{rate['sentences']} sentences, {rate['embed_s'] + rate['sentences_s']:.1f} s embedding); "
            f"1e6 documents: ~{rate['extrapolated_1e6_hours']} h (extrapolated, this machine)."
        )
    elif rate:
        notes.append(f"embedding rate: {rate['error']}")
    return "\n".join(lines + notes + (["", "Errors:"] + errors if errors else []))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aqgr.eval.bench.pipeline", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated archive sizes, ascending")
    parser.add_argument("--out", type=Path, default=Path("reports/pipeline"))
    parser.add_argument(
        "--home", type=Path, default=None, help="the synthetic archive (default: --out/archive); extended, never remade"
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=AILA_ROOT,
        help="real judgments: a folder of .txt (or a dataset root with Object_casedocs/)",
    )
    parser.add_argument(
        "--queries-file", type=Path, default=None, help="QID||facts lines (default: --corpus/Query_doc.txt)"
    )
    parser.add_argument("--queries", type=int, default=50, help="queries searched (the first ones of the file)")
    parser.add_argument("--base-limit", type=int, default=None, help="real judgments to recombine (default: all)")
    parser.add_argument("--embedder", default="hashing.v1", help="the index's embedder")
    parser.add_argument(
        "--backend",
        choices=("embedded", "milvus"),
        default="embedded",
        help="the index backend (milvus: a milvus-lite folder in the archive home; needs pip install 'aqgr[milvus]')",
    )
    parser.add_argument(
        "--rate-embedder",
        default=DEFAULT_EMBEDDER,
        help="embedder whose documents/s is measured apart (default: the index default)",
    )
    parser.add_argument("--rate-sample", type=int, default=64, help="summaries embedded for that rate (0: skip)")
    parser.add_argument("--add", type=int, default=1000, help="judgments added after each size")
    parser.add_argument("--batch", type=int, default=500, help="judgments per database transaction")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=int, default=6 * 3600, help="seconds per stage")
    parser.add_argument("--stage", choices=sorted(STAGES), help=argparse.SUPPRESS)
    parser.add_argument("--to", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    args.home = (args.home or args.out / "archive").resolve()
    args.queries_file = args.queries_file or args.corpus / "Query_doc.txt"
    if args.stage:
        print(json.dumps(STAGES[args.stage](args)))
        return 0
    sizes = [int(float(s)) for s in args.sizes.split(",") if s.strip()]
    if sizes != sorted(set(sizes)) or not sizes or sizes[0] <= 0:
        parser.error("--sizes: positive sizes, ascending, each once")
    args.out.mkdir(parents=True, exist_ok=True)
    results = {
        "config": {
            "sizes": sizes,
            "embedder": args.embedder,
            "backend": args.backend,
            "add": args.add,
            "seed": args.seed,
            "queries": args.queries,
            "home": str(args.home),
            "cpus": os.cpu_count(),
        },
        "base": run_stage(args, "base", "base"),
        "sizes": {},
    }
    if "error" in results["base"]:
        _write(args.out, results)
        print(f"error: the real judgments could not be read: {results['base']['error']}", file=sys.stderr)
        return 2
    for n in sizes:
        results["sizes"][str(n)] = run_size(args, n)
        _write(args.out, results)
    results["rate"] = {}
    if args.rate_sample:  # in this process: its memory is not measured
        try:
            results["rate"] = stage_rate(args)
        except Exception as exc:  # noqa: BLE001 - a missing model is reported in the table, the sizes' figures kept
            results["rate"] = {"error": f"{type(exc).__name__}: {exc}"}
    _write(args.out, results)
    print(table(results))
    return 0


def _write(out: Path, results: dict) -> None:
    (out / "results.json").write_text(json.dumps(results, indent=1))
    (out / "table.md").write_text(table(results) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())

"""Run systems under a protocol, write TREC runs, score them, write the report.

`evaluate(dataset, systems, protocol, queries, out_dir)` is the one entry point; the CLI
(`aqgr eval`) is a thin layer over `evaluate_path`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aqgr.eval.datasets import Dataset, Kind, load_dataset
from aqgr.eval.measures import DEFAULT_RETURNED, MeasureResults, compute, parse_measure
from aqgr.eval.protocols import EvalProtocol, get_protocol
from aqgr.eval.runs import MAX_DEPTH, write_run
from aqgr.eval.stats.chance import chance
from aqgr.eval.systems.registry import Progress, System, get_system
from aqgr.foundation.errors import ConfigError


@dataclass
class SystemResult:
    name: str
    config: dict
    results: MeasureResults
    run: dict[str, list[tuple[str, float]]]
    returned: dict[str, list[str]]
    run_file: Path | None
    prepare_s: float
    rank_s: float
    dropped: int  # hits the system returned that the protocol forbids (excluded / outside the pool)


@dataclass
class EvalReport:
    protocol: EvalProtocol
    dataset: Dataset
    queries: list[str]  # run
    scored: list[str]  # judged among them (scored)
    measures: tuple[str, ...]
    systems: list[SystemResult]
    depth: int
    out_dir: Path | None
    started: str
    warnings: list[str] = field(default_factory=list)
    chance: dict[str, float] = field(default_factory=dict)  # measure -> a random ranking's mean (eval/stats/chance.py)

    def table(self) -> dict[str, dict[str, float]]:
        """system -> measure -> mean."""
        return {s.name: dict(s.results.mean) for s in self.systems}


def evaluate(
    dataset: Dataset,
    systems: Sequence[str | System],
    protocol: str | EvalProtocol = "aila-cases",
    queries: str | list[str] | None = None,
    out_dir: str | Path | None = None,
    *,
    measures: Sequence[str] | None = None,
    depth: int = MAX_DEPTH,
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
    command: str | None = None,
) -> EvalReport:
    """Run every system on the protocol's queries, score, and (if `out_dir`) write the report.

    `queries`: a subset spec (see `select_queries`; default: the protocol's). `measures`:
    measure names (default: the protocol's). `depth`: documents per query in the run.
    """
    protocol = get_protocol(protocol)
    if not systems:
        raise ConfigError("no system to evaluate: name at least one (see `eval.systems.systems.names()`)")
    if not 1 <= depth <= MAX_DEPTH:
        raise ConfigError(f"depth must be between 1 and {MAX_DEPTH}, got {depth}")
    names = tuple(str(parse_measure(m)) for m in (measures or protocol.measures))
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    warnings = list(dataset.warnings) + protocol.check(dataset)
    selected = protocol.select(dataset, queries)
    qrels = protocol.qrels(dataset)
    scored = [q for q in selected if q in qrels]
    if len(scored) < len(selected):
        warnings.append(
            f"{len(selected) - len(scored)} of {len(selected)} selected queries have no relevance judgments: run but not scored"
        )
    restrict = protocol.restrict(dataset)
    out = Path(out_dir) if out_dir is not None else None
    results = []
    for spec in systems:
        system = get_system(spec)
        results.append(
            _run_system(system, dataset, protocol, selected, qrels, names, restrict, depth, cache_dir, progress, out)
        )
        if results[-1].dropped:
            warnings.append(
                f"{system.name}: {results[-1].dropped} hit(s) outside the pool or on the exclusion list were dropped"
            )
    level = chance(names, qrels, selected, dataset.doc_ids, depth=depth, restrict=restrict, exclude=dataset.exclude)
    report = EvalReport(protocol, dataset, selected, scored, names, results, depth, out, started, warnings, level)
    if out is not None:
        from aqgr.eval.report import write_report

        write_report(report, out, command=command)
    return report


def _run_system(
    system, dataset, protocol, selected, qrels, names, restrict, depth, cache_dir, progress, out
) -> SystemResult:
    t0 = time.perf_counter()
    system.prepare(dataset, cache_dir=Path(cache_dir) if cache_dir is not None else None, progress=progress)
    t1 = time.perf_counter()
    run: dict[str, list[tuple[str, float]]] = {}
    returned: dict[str, list[str]] = {}
    dropped = 0
    own_set = getattr(system, "returned", None)
    for i, qid in enumerate(selected, start=1):
        exclude = dataset.exclude.get(qid, frozenset())
        ranking = system.rank(qid, dataset.queries[qid], depth=depth, restrict=restrict, exclude=exclude or None)
        allowed, n_bad = _allowed(ranking, restrict, exclude)
        dropped += n_bad
        run[qid] = allowed[:depth]
        own = own_set(qid) if callable(own_set) else None  # None: the system has no set of its own here
        if own is not None:
            docs = [d for d in dict.fromkeys(own) if d not in exclude and (restrict is None or d in restrict)]
        else:
            docs = [d for d, _ in run[qid][:DEFAULT_RETURNED]]
        returned[qid] = docs
        if progress is not None:
            progress(f"{system.name}: ranking", i, len(selected))
    t2 = time.perf_counter()
    run_file = None
    if out is not None:
        run_file = write_run(
            out / "runs" / f"{_slug(system.name)}.{protocol.name}.run", run, _slug(system.name), depth=depth
        )
    results = compute(qrels, run, names, returned=returned, queries=selected)
    config = system.config() if hasattr(system, "config") else {"system": system.name}
    return SystemResult(system.name, config, results, run, returned, run_file, t1 - t0, t2 - t1, dropped)


def _allowed(ranking, restrict, exclude) -> tuple[list[tuple[str, float]], int]:
    """Drop repeats (keep the first), excluded documents and documents outside `restrict`."""
    seen: set[str] = set()
    kept, bad = [], 0
    for doc, score in ranking:
        if doc in seen:
            continue
        seen.add(doc)
        if doc in exclude or (restrict is not None and doc not in restrict):
            bad += 1
            continue
        kept.append((doc, float(score)))
    return kept, bad


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", name)


def evaluate_path(
    data: str | Path,
    systems: Sequence[str],
    protocol: str = "aila-cases",
    *,
    qrels: str | Path | None = None,
    docs: str | Path | None = None,
    queries: str | None = None,
    out_dir: str | Path | None = None,
    measures: Sequence[str] | None = None,
    depth: int = MAX_DEPTH,
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
    command: str | None = None,
) -> EvalReport:
    """Load the dataset the protocol needs from `data` and `evaluate` it."""
    proto = get_protocol(protocol)
    kind: Kind = proto.kind
    dataset = load_dataset(data, qrels, kind, docs=docs)
    return evaluate(
        dataset,
        systems,
        proto,
        queries,
        out_dir,
        measures=measures,
        depth=depth,
        cache_dir=cache_dir,
        progress=progress,
        command=command,
    )

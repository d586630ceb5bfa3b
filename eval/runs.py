"""TREC run files: `qid Q0 doc rank score run_id`, strictly decreasing scores.

trec_eval (and pytrec_eval, hence ir-measures) re-sorts a run by score and breaks ties
by document id. In AILA the relevant documents cluster at low ids, so a tie broken by
id leaks labels. We therefore never hand a tie to an evaluator: `strict_scores` keeps
our order and, where a score does not fall below the previous one, sets it just below.

pytrec_eval compares scores in single precision (measured: 1.0 and 0.99999999 tie), so
scores live on the float32 grid: each is rounded to float32 and a tie moves one float32
step down. They are written as the shortest decimal that reads back as that float32, so
a reader in double or single precision sees strictly decreasing scores in our order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from aqgr.foundation.errors import DatasetError
from aqgr.foundation.files import write_atomic

MAX_DEPTH = 1000  # the FIRE/TREC convention: up to 1,000 documents per query
_RUN_ID = re.compile(r"^\S+$")
_FLOOR = np.float32(-np.inf)
_BIG = np.finfo(np.float32).max


def strict_scores(ranking: Sequence[tuple[str, float]]) -> list[tuple[str, str]]:
    """Our order, with scores as decimal strings, strictly decreasing in float32 and float64."""
    out: list[tuple[str, str]] = []
    previous: np.float32 | None = None
    for doc, score in ranking:
        value = float(score)
        if value != value:
            raise ValueError(f"score of {doc} is NaN")
        v = np.float32(min(max(value, -float(_BIG)), float(_BIG)))
        if previous is not None and v >= previous:
            v = np.nextafter(previous, _FLOOR)
        out.append((doc, np.format_float_positional(v, unique=True, trim="0")))
        previous = v
    return out


def strict_ranking(ranking: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """`strict_scores` as floats: exactly what a reader of the written file gets back."""
    return [(doc, float(text)) for doc, text in strict_scores(ranking)]


def write_run(
    path: str | Path,
    run: Mapping[str, Sequence[tuple[str, float]]],
    run_id: str,
    *,
    depth: int = MAX_DEPTH,
) -> Path:
    """Write `run` (qid -> ranked (doc, score), best first) as a TREC run file, atomically.

    Query order is kept; each ranking is cut at `depth`; a document listed twice for one
    query keeps its first (best) rank.
    """
    if not _RUN_ID.match(run_id):
        raise ValueError(f"run id {run_id!r} must be one word without spaces")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for qid, ranking in run.items():
        seen: set[str] = set()
        unique = [(d, s) for d, s in ranking if not (d in seen or seen.add(d))][:depth]
        for rank, (doc, score) in enumerate(strict_scores(unique), start=1):
            lines.append(f"{qid} Q0 {doc} {rank} {score} {run_id}\n")
    write_atomic(path, "".join(lines))
    return path


def read_run(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """Read a TREC run file: qid -> [(doc, score)] in the file's order for each query."""
    path = Path(path)
    run: dict[str, list[tuple[str, float]]] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read run file: {exc}") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 6:
            raise DatasetError(f"{path}:{number}: expected 'qid Q0 doc rank score run_id', got {line[:80]!r}")
        try:
            score = float(parts[4])
        except ValueError:
            raise DatasetError(f"{path}:{number}: score must be a number, got {parts[4]!r}") from None
        run.setdefault(parts[0], []).append((parts[2], score))
    return run

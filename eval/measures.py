"""Evaluation measures: trec_eval's ranked measures through ir-measures, and the AQgR
study's rank-free set measures defined once beside them.

Names are the same in the CLI and the API: ranked measures are whatever
`ir_measures.parse_measure` accepts (`AP`, `P@10`, `Bpref`, `RR`, `R@100`, `nDCG@10`);
the study's set measures are

* `SetP` / `SetR`: precision / recall of the system's own returned set (mean over
  queries = the study's "MAP" / "MAR");
* `SetP@k` / `SetR@k`: the same for the top k of the ranking (the study's fixed cut-offs
  are 5 and 10).

For a set S and relevant documents Rel: SetP = |S ∩ Rel| / |S|, SetR = |S ∩ Rel| / |Rel|.
They are computed by ir-measures' trec_eval `set_P` / `set_recall` applied to S, so one
implementation serves both.

Which queries count (trec_eval conventions):
* a query absent from the qrels is not scored (ir-measures and trec_eval skip it);
* a judged query the system returned nothing for scores 0 on every measure
  (trec_eval -c); an empty returned set has SetP = 0;
* a judged query with no relevant document counts with 0 (trec_eval gives AP = 0 and
  set_recall = 0 there); the same holds for SetR.
Relevance is `rel >= 1`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Union

import ir_measures

from aqgr.eval.runs import strict_ranking
from aqgr.foundation.errors import ConfigError

RANKED_MEASURES: tuple[str, ...] = ("AP", "P@10", "Bpref", "RR", "R@100", "nDCG@10")
SET_MEASURES: tuple[str, ...] = ("SetP", "SetR", "SetP@5", "SetR@5", "SetP@10", "SetR@10")
DEFAULT_MEASURES: tuple[str, ...] = RANKED_MEASURES + SET_MEASURES
# How many documents form the system's own returned set when it does not say (the
# study's explanation step returned about ten judgments).
DEFAULT_RETURNED = 10

_SET_NAME = re.compile(r"^Set([PR])(?:@(\d+))?$")


@dataclass(frozen=True)
class SetMeasure:
    """The study's rank-free set precision (`P`) or recall (`R`) of a returned set.

    `cutoff=None`: the system's own returned set; otherwise the top `cutoff` of the ranking.
    """

    which: str  # "P" or "R"
    cutoff: int | None = None

    @property
    def name(self) -> str:
        return f"Set{self.which}" + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def base(self):
        return ir_measures.SetP if self.which == "P" else ir_measures.SetR

    def __str__(self) -> str:
        return self.name


Measure = Union[SetMeasure, "ir_measures.measures.Measure"]


def parse_measure(name: str | SetMeasure) -> Measure:
    """A measure by name; the set measures above first, then anything ir-measures knows."""
    if isinstance(name, SetMeasure):
        return name
    text = str(name).strip()
    m = _SET_NAME.match(text)
    if m:
        cutoff = int(m.group(2)) if m.group(2) else None
        if cutoff is not None and cutoff < 1:
            raise ConfigError(f"measure {text!r}: the cut-off must be at least 1")
        return SetMeasure(m.group(1), cutoff)
    try:
        measure = ir_measures.parse_measure(text)
        if not ir_measures.pytrec_eval.supports(measure):
            raise ValueError("not computed by trec_eval")
    except Exception as exc:
        raise ConfigError(
            f"unknown measure {text!r} ({exc}); accepted: trec_eval measures in ir-measures syntax "
            f"({', '.join(RANKED_MEASURES)}, 'P@5', 'R@1000', ...) and the study's set measures "
            f"('SetP', 'SetR', 'SetP@k', 'SetR@k')"
        ) from None
    return measure


def measure_name(measure: Measure) -> str:
    return str(measure)


@dataclass(frozen=True)
class MeasureResults:
    """Per-query values (`per_query[measure][qid]`) and means over the scored queries."""

    measures: tuple[str, ...]
    queries: tuple[str, ...]
    per_query: dict[str, dict[str, float]]
    mean: dict[str, float]

    def to_dict(self) -> dict:
        return {
            "queries": list(self.queries),
            "mean": dict(self.mean),
            "per_query": {m: dict(v) for m, v in self.per_query.items()},
        }


def compute(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Sequence[tuple[str, float]]],
    measures: Iterable[str | Measure] = DEFAULT_MEASURES,
    *,
    returned: Mapping[str, Sequence[str]] | None = None,
    queries: Iterable[str] | None = None,
) -> MeasureResults:
    """Score `run` (qid -> ranked (doc, score) with strictly decreasing scores) against `qrels`.

    `returned`: the system's own returned set per query (default: the top DEFAULT_RETURNED
    of the ranking); used by `SetP`/`SetR` without cut-off. `queries`: the selection to
    score (default: every judged query); only judged ones are scored.
    """
    parsed = [parse_measure(m) for m in measures]
    names = tuple(measure_name(m) for m in parsed)
    if len(set(names)) != len(names):
        raise ConfigError(f"a measure is named twice in {', '.join(names)}")
    wanted = list(qrels) if queries is None else list(dict.fromkeys(queries))
    scored = tuple(q for q in wanted if q in qrels)
    qrels_sel = {q: {d: int(r) for d, r in qrels[q].items()} for q in scored}
    per_query: dict[str, dict[str, float]] = {n: {q: 0.0 for q in scored} for n in names}

    ranked = [m for m in parsed if not isinstance(m, SetMeasure)]
    if ranked:
        # Our order is what gets scored: ties are nudged exactly as in the written run file.
        ordered = {q: strict_ranking(_first_of_each(run.get(q, ()))) for q in scored}
        _calc(ranked, qrels_sel, ordered, per_query, rename=None)
    for m in parsed:
        if isinstance(m, SetMeasure):
            sets = {q: _the_set(m, q, run, returned) for q in scored}
            as_run = {q: [(d, float(len(docs) - i)) for i, d in enumerate(docs)] for q, docs in sets.items()}
            _calc([m.base], qrels_sel, as_run, per_query, rename=m.name)
    mean = {n: (sum(v.values()) / len(v) if v else 0.0) for n, v in per_query.items()}
    return MeasureResults(measures=names, queries=scored, per_query=per_query, mean=mean)


def _first_of_each(ranking) -> list[tuple[str, float]]:
    seen: set[str] = set()
    return [(d, s) for d, s in ranking if not (d in seen or seen.add(d))]


def _the_set(m: SetMeasure, qid: str, run, returned) -> list[str]:
    ranking = [d for d, _ in _first_of_each(run.get(qid, ()))]
    if m.cutoff is not None:
        return ranking[: m.cutoff]
    if returned is not None and qid in returned:
        return list(dict.fromkeys(returned[qid]))
    return ranking[:DEFAULT_RETURNED]


def _calc(measures, qrels, run, out, *, rename: str | None) -> None:
    run_dict = {q: {d: float(s) for d, s in docs} for q, docs in run.items() if docs}
    if not run_dict:
        return
    for metric in ir_measures.pytrec_eval.iter_calc(measures, qrels, run_dict):
        out[rename or str(metric.measure)][metric.query_id] = float(metric.value)

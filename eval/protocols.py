"""Evaluation protocols: what is ranked, which queries, which judgments count.

* `aila-cases`: FIRE 2019 AILA task 1, rank every case document.
* `aila-statutes`: task 2, rank the statutes (each indexed as title + description).
* `study-subset`: the AQgR study's protocol: its query list and 50-judgment pool
  (`eval/data/study_subset.json`); retrieval restricted to the pool, relevance restricted
  to the pool, reported with the study's set measures.

For `study-subset` a system still indexes the whole corpus (corpus statistics such as
BM25's idf come from all documents); only its ranking is restricted to the pool.

Only judged queries are scored; a protocol's `queries` default says which are run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from aqgr.eval.datasets import Dataset, select_queries
from aqgr.eval.measures import DEFAULT_MEASURES
from aqgr.foundation.errors import DatasetError
from aqgr.foundation.registry import Registry

DATA_DIR = Path(__file__).resolve().parent / "data"

protocols: Registry["EvalProtocol"] = Registry("protocol", modules=("aqgr.eval.protocols",))


@cache
def data_file(name: str) -> dict:
    """A JSON file shipped in eval/data/."""
    return json.loads((DATA_DIR / name).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class EvalProtocol:
    name: str
    kind: Literal["cases", "statutes"]
    description: str
    measures: tuple[str, ...] = DEFAULT_MEASURES
    queries: tuple[str, ...] | None = None  # default selection; None = the judged queries
    pool: frozenset[str] | None = None  # retrieval and relevance restricted to these documents

    def select(self, dataset: Dataset, spec: str | list[str] | None = None) -> list[str]:
        """Queries to run: `spec` if given, else the protocol's list, else every judged query."""
        if spec is not None:
            return select_queries(dataset, spec)
        if self.queries is not None:
            present = [q for q in self.queries if q in dataset.queries]
            if not present:
                raise DatasetError(
                    f"none of protocol {self.name}'s queries ({', '.join(self.queries[:5])}, ...) is in {dataset.root}"
                )
            return present
        judged = dataset.judged_queries()
        if not judged:
            raise DatasetError(
                f"no query of {dataset.root} has relevance judgments ({dataset.qrels_path or 'no qrels file'}): "
                "give a qrels file with --qrels, or choose queries with --queries to write runs only"
            )
        return judged

    def restrict(self, dataset: Dataset) -> frozenset[str] | None:
        if self.pool is None:
            return None
        present = self.pool & set(dataset.doc_ids)
        if not present:
            raise DatasetError(f"none of the {self.name} pool's {len(self.pool)} documents is in {dataset.docs_dir}")
        return frozenset(present)

    def qrels(self, dataset: Dataset) -> dict[str, dict[str, int]]:
        """The judgments that count under this protocol (restricted to the pool, if any)."""
        if self.pool is None:
            return dataset.qrels
        return {q: {d: r for d, r in judged.items() if d in self.pool} for q, judged in dataset.qrels.items()}

    def check(self, dataset: Dataset) -> list[str]:
        """Warnings about running this protocol on `dataset`."""
        out = []
        if dataset.kind != self.kind:
            out.append(f"protocol {self.name} ranks {self.kind} but the dataset was loaded as {dataset.kind}")
        if self.queries is not None:
            absent = [q for q in self.queries if q not in dataset.queries]
            if absent:
                out.append(
                    f"{len(absent)} of protocol {self.name}'s queries not in the dataset: {', '.join(absent[:10])}"
                )
        if self.pool is not None:
            missing = sorted(self.pool - set(dataset.doc_ids))
            if missing:
                out.append(f"{len(missing)} pool document(s) not in {dataset.docs_dir}: {', '.join(missing[:10])}")
        return out

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "measures": list(self.measures),
            "queries": list(self.queries) if self.queries is not None else None,
            "pool": sorted(self.pool) if self.pool is not None else None,
        }


@protocols.register("aila-cases")
def _aila_cases() -> EvalProtocol:
    return EvalProtocol("aila-cases", "cases", "FIRE 2019 AILA task 1: rank every case document for each query")


@protocols.register("aila-statutes")
def _aila_statutes() -> EvalProtocol:
    return EvalProtocol("aila-statutes", "statutes", "FIRE 2019 AILA task 2: rank every statute (title + description)")


@protocols.register("study-subset")
def _study_subset() -> EvalProtocol:
    study = data_file("study_subset.json")
    return EvalProtocol(
        "study-subset",
        "cases",
        study["description"],
        queries=tuple(study["queries"]),
        pool=frozenset(study["pool"]),
    )


def get_protocol(name: str | EvalProtocol) -> EvalProtocol:
    return name if isinstance(name, EvalProtocol) else protocols.create(name)

"""The full-text baselines: BM25 over whole judgment texts, the raw facts as the query.

`bm25-fulltext` is the FIRE-style baseline; the same runs over other BM25 implementations
(`retrieval.lexical.bm25.bm25_implementations`) to compare libraries on the same tokens:
`bm25s-fulltext` (bm25s, its default `lucene` variant) and `bm25s-fulltext-<method>` for
`robertson`, `atire`, `bm25l`, `bm25plus` (bm25s' `bm25+`); `python -m aqgr.eval.bench.bm25`
measures their costs. Registered in `eval/systems/registry.py`'s `systems`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from aqgr.eval.datasets import Dataset
from aqgr.eval.systems.registry import Progress, System, default_cache_dir, systems

FULLTEXT_FORMAT = 1  # bump when what the cached full-text index holds changes


class BM25FullText:
    """BM25 over whole document texts; the query is the raw facts.

    The index (tokenised with `retrieval.text` `words.v1`, scored by the BM25
    implementation `implementation` of `retrieval.lexical.bm25`, default `rank-bm25.v1`; `params`
    go to it, e.g. method="robertson" for `bm25s.v1`) is cached under
    `<cache_dir>/bm25-fulltext/<fingerprint>/` keyed by the documents (ids, sizes,
    modification times), the tokenizer, the BM25 parameters and any other implementation.
    """

    def __init__(
        self,
        *,
        name: str = "bm25-fulltext",
        k1: float | None = None,
        b: float | None = None,
        tokenizer: str = "words.v1",
        implementation: str | None = None,
        **params,
    ):
        from aqgr.eval.systems import bm25s  # noqa: F401 (registers bm25s.v1)
        from aqgr.retrieval.lexical import bm25

        self.name = name
        self.k1 = bm25.BM25_K1 if k1 is None else float(k1)
        self.b = bm25.BM25_B if b is None else float(b)
        self.tokenizer_name = tokenizer
        self.implementation = implementation or bm25.DEFAULT_BM25
        self._bm25 = bm25.bm25_implementations.create(self.implementation, k1=self.k1, b=self.b, **params)
        self._matrix = None
        self._doc_ids: list[str] = []
        self._tokenize = None
        self.index_dir: Path | None = None
        self.cache_hit: bool | None = None

    def _default_implementation(self) -> bool:
        from aqgr.retrieval.lexical import bm25

        return (
            self.implementation == bm25.DEFAULT_BM25
            and self._bm25.params() == bm25.RankBM25(k1=self.k1, b=self.b).params()
        )

    def config(self) -> dict:
        config = {
            "system": "bm25-fulltext",
            "k1": self.k1,
            "b": self.b,
            "tokenizer": self.tokenizer_name,
            "query": "raw facts",
            "documents": "whole texts",
            "index_dir": str(self.index_dir) if self.index_dir else None,
        }
        if not self._default_implementation():
            config.update(system=self.name, implementation=self.implementation, params=self._bm25.params())
        return config

    def prepare(self, dataset: Dataset, *, cache_dir: Path | None = None, progress: Progress | None = None) -> None:
        from aqgr.retrieval.text import tokenizers

        self._tokenize = tokenizers.create(self.tokenizer_name)
        key = self._fingerprint(dataset)
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.index_dir = root / "bm25-fulltext" / key[:24]
        manifest = self.index_dir / "manifest.json"
        if manifest.is_file():
            meta = json.loads(manifest.read_text(encoding="utf-8"))
            if meta.get("fingerprint") == key and meta.get("format") == FULLTEXT_FORMAT:
                self._matrix = self._bm25.load(self.index_dir)
                self._doc_ids = list(meta["doc_ids"])
                self.cache_hit = True
                return
        tokens: list[list[str]] = []
        total = len(dataset.doc_ids)
        for i, (_doc_id, text) in enumerate(dataset.documents(), start=1):
            tokens.append(self._tokenize(text))
            if progress is not None:
                progress(f"{self.name}: tokenising", i, total)
        self._matrix = self._bm25.build(tokens)
        self._doc_ids = list(dataset.doc_ids)
        self.cache_hit = False
        self._save(key)

    def _fingerprint(self, dataset: Dataset) -> str:
        digest = hashlib.sha256()
        head = [FULLTEXT_FORMAT, dataset.kind, self.tokenizer_name, self.k1, self.b]
        if not self._default_implementation():  # the default's key predates the registry: keep its cache valid
            head += [self.implementation, self._bm25.params()]
        digest.update(json.dumps(head).encode())
        for doc_id in dataset.doc_ids:
            stat = (dataset.docs_dir / f"{doc_id}.txt").stat()
            digest.update(f"{doc_id}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        digest.update(str(dataset.docs_dir.resolve()).encode())
        return digest.hexdigest()

    def _save(self, key: str) -> None:
        target = self.index_dir
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
        try:
            self._matrix.save(tmp)
            meta = {
                "format": FULLTEXT_FORMAT,
                "fingerprint": key,
                "k1": self.k1,
                "b": self.b,
                "tokenizer": self.tokenizer_name,
                "doc_ids": self._doc_ids,
            }
            if not self._default_implementation():
                meta.update(implementation=self.implementation, params=self._bm25.params())
            (tmp / "manifest.json").write_text(json.dumps(meta), encoding="utf-8")
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def rank(self, query_id, text, *, depth, restrict=None, exclude=None) -> list[tuple[str, float]]:
        from aqgr.retrieval.types import ranked

        if self._matrix is None:
            raise RuntimeError(f"{self.name}: call prepare(dataset) before rank()")
        scores = self._matrix.scores(self._tokenize(text))
        hits = {}
        for doc_id, score in zip(self._doc_ids, scores.tolist()):
            if score <= 0.0 or (restrict is not None and doc_id not in restrict) or (exclude and doc_id in exclude):
                continue
            hits[doc_id] = score
        return [(d.doc_id, d.score) for d in ranked(hits)[:depth]]


@systems.register("bm25-fulltext")
def _bm25_fulltext(**options) -> System:
    return BM25FullText(**options)


@systems.register("bm25s-fulltext")
def _bm25s_fulltext(**options) -> System:
    return BM25FullText(**{"name": "bm25s-fulltext", "implementation": "bm25s.v1", **options})


# bm25s' other BM25 variants (system names avoid "+": bm25plus is bm25s' "bm25+").
BM25S_VARIANTS = {"robertson": "robertson", "atire": "atire", "bm25l": "bm25l", "bm25plus": "bm25+"}


def _register_bm25s_variant(suffix: str, method: str) -> None:
    name = f"bm25s-fulltext-{suffix}"

    @systems.register(name)
    def _variant(**options) -> System:
        return BM25FullText(**{"name": name, "implementation": "bm25s.v1", "method": method, **options})


for _suffix, _method in BM25S_VARIANTS.items():
    _register_bm25s_variant(_suffix, _method)
